package httpapi_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
)

func with(l list.Query, change func(*list.Query)) list.Query {
	change(&l)
	return l
}

// BenchmarkOrderListMillion compares, over n orders of one account (each
// with one coupon; n = 1,000,000 unless FAREBOX_BENCH_ORDERS says
// otherwise), the GET of one order with a page of the order list: the
// first page, a page after a cursor in the middle, and the largest page,
// each through the HTTP API of a running server (docs/lists.md). The rows
// are seeded by one INSERT … SELECT per table.
//
//	go test ./internal/httpapi -run '^$' -bench OrderListMillion -benchtime 300x
func BenchmarkOrderListMillion(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("FAREBOX_BENCH_ORDERS")); err == nil && v > 0 {
		n = v
	}
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		e := apitest.New(b, engine, apitest.Options{NoLedger: true})
		seedOrders(b, e, n)
		mid := "bench-order-" + strconv.Itoa(n/2)
		// The plans of the first page and of the page after mid, over
		// the seeded table (docs/lists.md quotes them).
		ctx := context.Background()
		cur, _, err := e.Store.Read().ListCursor(ctx, "orders", e.AccountID, account.Live, mid)
		if err != nil {
			b.Fatal(err)
		}
		q := list.Query{AccountID: e.AccountID, Environment: account.Live, Limit: 10}
		for _, f := range []ticketing.OrderFilter{{Query: q}, {Query: with(q, func(l *list.Query) { l.After = &cur })}} {
			plan, err := e.Store.Read().ExplainList(ctx, f)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("%s, %d orders, after %v:\n%s", engine, n, f.After != nil, strings.Join(plan, "\n"))
		}
		cases := []struct{ name, path string }{
			{"get", "/v9/ticketing/orders/" + mid + ".json"},
			{"list1", "/v9/ticketing/orders.json?limit=1"},
			{"list1_after_middle", "/v9/ticketing/orders.json?limit=1&starting_after=" + mid},
			{"list10", "/v9/ticketing/orders.json"},
			{"list10_after_middle", "/v9/ticketing/orders.json?starting_after=" + mid},
			{"list100", "/v9/ticketing/orders.json?limit=100"},
		}
		// Each iteration sends every request once, in a rotating order,
		// so a noisy machine slows all of them alike; the medians are
		// reported.
		took := make([][]time.Duration, len(cases))
		i := 0
		for b.Loop() {
			for k := range cases {
				c := (i + k) % len(cases)
				began := time.Now()
				e.Must(200, apitest.Req{Method: "GET", Path: cases[c].path, Key: e.LiveKey, NoValidate: true})
				took[c] = append(took[c], time.Since(began))
			}
			i++
		}
		for c := range cases {
			slices.Sort(took[c])
			b.ReportMetric(float64(took[c][len(took[c])/2].Microseconds()), cases[c].name+"-µs")
		}
	})
}

// seedOrders inserts n live orders of e's account, one second apart, each
// with one coupon of the single adult ticket.
func seedOrders(b *testing.B, e *apitest.Env, n int) {
	b.Helper()
	if e.Store.Engine() == store.Postgres {
		// The test schema is reused by later tests, which empty it row by
		// row: leave it as small as it was.
		b.Cleanup(func() {
			if _, err := e.Store.DB().ExecContext(context.Background(), `TRUNCATE coupons, orders CASCADE`); err != nil {
				b.Errorf("truncate the seeded orders: %v", err)
			}
		})
	}
	product := productIDs(b, e)["single/adult"]
	gen, ts := `generate_series(1, $3::int) g(n)`, `TIMESTAMPTZ '2025-01-01 00:00:00+00' + n * INTERVAL '1 second'`
	prefix := ""
	if e.Store.Engine() == store.SQLite {
		prefix = `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < $3) `
		gen, ts = `g`, `strftime('%Y-%m-%d %H:%M:%S', '2025-01-01', '+' || n || ' seconds') || '+00:00'`
	}
	for _, stmt := range []string{
		`INSERT INTO orders (id, account_id, environment, restore_secret, created_at) ` + prefix +
			`SELECT 'bench-order-' || n, $1, 'live', 's' || $2, ` + ts + ` FROM ` + gen,
		`INSERT INTO coupons (id, order_id, position, account_id, environment, product_id, activated, created_at) ` + prefix +
			`SELECT 'bench-coupon-' || n, 'bench-order-' || n, 0, $1, 'live', $2, FALSE, ` + ts + ` FROM ` + gen,
		`ANALYZE orders`,
		`ANALYZE coupons`,
	} {
		args := []any{e.AccountID, product, n}
		if strings.HasPrefix(stmt, `ANALYZE`) {
			args = nil
		}
		if _, err := e.Store.DB().ExecContext(context.Background(), stmt, args...); err != nil {
			b.Fatalf("seed: %v\n%s", err, stmt)
		}
	}
}
