package clearing_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/apptest"
	"github.com/farebox/farebox/internal/clearing"
	"github.com/farebox/farebox/internal/money"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// generatedMonth is how many ticket months TestClearingGeneratedMonth sells.
const generatedMonth = 100_000

// TestClearingGeneratedMonth sells 100,000 ticket months of June 2026
// (the national ticket and its job-ticket variant, over random postal
// codes: known, unknown, undecided and not-germany) straight into the
// database, reports the month and checks that its totals equal the
// billable items to the cent, per state and product as much as in all,
// and that verify finds nothing. It logs the export's time and the heap's
// peak (docs/clearing.md "Measured"). Both engines; full suite only.
func TestClearingGeneratedMonth(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Load)
	for _, e := range storetest.Engines {
		t.Run(string(e), func(t *testing.T) {
			b := apptest.New(t, e)
			products := clearing.National(b.App.Catalog().File().Products)
			if len(products) != 2 {
				t.Fatalf("national products: %v", products)
			}
			want := seedMonth(t, b, products, 0, generatedMonth)
			s := service(b)
			b.Clock.Set(time.Date(2026, 7, 1, 0, 30, 0, 0, time.UTC))
			june := clearing.Month{Year: 2026, Month: 6}
			for _, run := range []string{"first export (reports the month)", "export of the frozen report"} {
				var out countingWriter
				var backends map[int]time.Duration
				if e == store.Postgres {
					var err error
					if backends, err = backendCPU(b.Ctx, b.Store.DB()); err != nil {
						t.Logf("no backend CPU time: %v", err)
					}
				}
				peak, stop := watchHeap()
				start, cpu := time.Now(), testtool.CPUTime()
				tot, err := s.Export(b.Ctx, june, "csv", &out)
				took, cpu := time.Since(start), testtool.CPUTime()-cpu
				grew := stop()
				if err != nil {
					t.Fatal(err)
				}
				server := ""
				if backends != nil {
					if d, err := backendCPUSince(b.Ctx, b.Store.DB(), backends); err == nil {
						server = fmt.Sprintf(" + %v in PostgreSQL", d.Round(10*time.Millisecond))
					}
				}
				t.Logf("%s, %s: %d rows, %d bytes of CSV in %v (CPU %v%s; load %s); heap peak %.1f MiB above the start (%.1f MiB)", e, run,
					tot.All.Count, out.n.Load(), took.Round(time.Millisecond), cpu.Round(10*time.Millisecond), server, loadAvg(),
					float64(grew)/(1<<20), float64(peak)/(1<<20))
				if tot.All.Count != generatedMonth || tot.All.Gross != want.gross {
					t.Fatalf("%s: %d ticket months, %d cents; billable %d, %d", run, tot.All.Count, tot.All.Gross, generatedMonth, want.gross)
				}
				if tot.All.Net+tot.All.VAT != tot.All.Gross {
					t.Errorf("net %d + VAT %d != gross %d", tot.All.Net, tot.All.VAT, tot.All.Gross)
				}
				for st, n := range want.states {
					if got := tot.States[st]; got.Count != n.count || got.Gross != n.gross {
						t.Errorf("%s: %+v, want %d ticket months, %d cents", st, got, n.count, n.gross)
					}
				}
				for id, n := range want.products {
					if got := tot.Products[id]; got == nil || got.Count != n.count || got.Gross != n.gross {
						t.Errorf("product %s: %+v, want %+v", id, got, n)
					}
				}
				if grew > 64<<20 {
					t.Errorf("the export's heap grew by %d MiB: it must not hold the month", grew>>20)
				}
			}
			v, err := s.Verify(b.Ctx, june)
			if err != nil || !v.OK || v.BillableMonths != generatedMonth || v.BillableGross != want.gross {
				t.Fatalf("verify: %+v %v", v, err)
			}
		})
	}
}

type sum struct {
	count int
	gross money.Cents
}

type expected struct {
	gross    money.Cents
	states   map[clearing.State]sum
	products map[string]sum
}

// seedMonth writes n sold June ticket months numbered from first (a
// subscription, its coupon with the postal code, an activated cycle and
// its billable item gen-item-%06d each) in one transaction, 16 rows per
// statement (the SQLite driver binds $n parameters in time quadratic in
// their number).
func seedMonth(t *testing.T, b *apptest.Bundle, products []string, first, n int) expected {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(31, 2026))
	from, until := time.Date(2026, 5, 31, 22, 0, 0, 0, time.UTC), time.Date(2026, 6, 30, 21, 59, 59, 0, time.UTC)
	at := apptest.Start
	exp := expected{states: map[clearing.State]sum{}, products: map[string]sum{}}
	price := map[string]money.Cents{}
	for _, id := range products {
		p, _ := b.Products.Product(id)
		price[id] = money.Cents(p.PriceInCents)
	}
	tx, err := b.Store.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%v\n%.300s", err, q)
		}
	}
	exec(`INSERT INTO orders (id, account_id, environment, restore_secret, created_at) VALUES ($1, $2, 'live', 'secret', $3)
		ON CONFLICT (id) DO NOTHING`, "gen-order", b.Live.AccountID, at)
	const batch = 16
	for lo := first; lo < first+n; lo += batch {
		var subs, coupons, cycles, items []string
		var sa, ca, ya, ia []any
		for i := lo; i < min(lo+batch, first+n); i++ {
			pid := products[rng.IntN(len(products))]
			code := fmt.Sprintf("%05d", rng.IntN(100000))
			if rng.IntN(50) == 0 {
				code = clearing.NotGermany
			}
			st, _ := clearing.StateOf(code)
			g := price[pid]
			exp.gross += g
			exp.states[st] = sum{exp.states[st].count + 1, exp.states[st].gross + g}
			exp.products[pid] = sum{exp.products[pid].count + 1, exp.products[pid].gross + g}
			sub, cyc, item := fmt.Sprintf("gen-sub-%d", i), fmt.Sprintf("gen-cycle-%d", i), fmt.Sprintf("gen-item-%06d", i)
			subs = append(subs, ph(len(sa), 5))
			sa = append(sa, sub, b.Live.AccountID, "live", pid, at)
			coupons = append(coupons, ph(len(ca), 10))
			ca = append(ca, fmt.Sprintf("gen-coupon-%d", i), "gen-order", i, b.Live.AccountID, "live", pid, sub, `{"german_postal_code":"`+code+`"}`, true, at)
			cycles = append(cycles, ph(len(ya), 9))
			ya = append(ya, cyc, sub, pid, from, until, true, true, item, at)
			items = append(items, ph(len(ia), 11))
			ia = append(ia, item, b.Live.AccountID, "live", pid, "Deutschlandticket", int64(g), "EUR", int64(700), sub, cyc, at)
		}
		exec(`INSERT INTO subscriptions (id, account_id, environment, product_id, created_at) VALUES `+strings.Join(subs, ","), sa...)
		exec(`INSERT INTO coupons (id, order_id, position, account_id, environment, product_id, subscription_id, tariff_settings, activated, created_at) VALUES `+
			strings.Join(coupons, ","), ca...)
		exec(`INSERT INTO subscription_cycles (id, subscription_id, product_id, valid_from, valid_until, ordered, coupon_activated, billable_item_id, created_at) VALUES `+
			strings.Join(cycles, ","), ya...)
		exec(`INSERT INTO billable_items (id, account_id, environment, product_id, description, amount_cents, currency, vat_rate_bp, subscription_id, cycle_id, ordered_at) VALUES `+
			strings.Join(items, ","), ia...)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return exp
}

// ph is the placeholders of one row of n values after base.
func ph(base, n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprintf("$%d", base+i+1)
	}
	return "(" + strings.Join(p, ", ") + ")"
}

type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(b []byte) (int, error) { w.n.Add(int64(len(b))); return len(b), nil }

// watchHeap samples the live heap every 5 ms; stop returns how far its
// peak rose above the start.
func watchHeap() (peak uint64, stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var top atomic.Uint64
	top.Store(base)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > top.Load() {
					top.Store(m.HeapAlloc)
				}
			}
		}
	}()
	return base, func() uint64 {
		close(done)
		<-finished
		return top.Load() - base
	}
}
