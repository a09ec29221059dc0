package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/shareddata"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/usage"
)

// TestScaleOutTwoInstances runs two `farebox serve` instances on one
// PostgreSQL schema and drives the partner flows across both at once:
// orders placed on one instance are activated and fetched on the other,
// subscriptions are reordered on both concurrently, invoices are created on
// both (numbers unique and gap-free), both instances' job workers render
// each document exactly once, an Idempotency-Key used on A is replayed on B,
// a catalog and a GTFS import are picked up by both, a departures session
// token minted by A is honoured by B, and a revoked key stops on both.
func TestScaleOutTwoInstances(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Load)
	env, st := pgEnv(t)
	env["FAREBOX_GTFS_REFRESH"] = "1s"
	_, key := newKey(t, env)
	a, b := startServe(t, env), startServe(t, env)
	inst := []*instance{a, b}
	ids := products(t, a.url(), key)
	ctx := context.Background()

	// Orders on one instance, activation and ticket fetch on the other.
	const n = 24
	type placed struct{ coupon, item, ticket string }
	got := make([]placed, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			on, other := inst[i%2].url(), inst[(i+1)%2].url()
			o := call(on, "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{ids["single/adult"]}}, nil)
			if o.status != 201 {
				t.Errorf("order %d: %d %s", i, o.status, o.body)
				return
			}
			c := o.m()["coupons"].([]any)[0].(map[string]any)
			act := call(other, "POST", "/v9/ticketing/coupons/"+str(c["id"])+"/activate.json", "", photoID, nil)
			if act.status != 201 {
				t.Errorf("activate %d on the other instance: %d %s", i, act.status, act.body)
				return
			}
			tid := str(act.m()["ticket_id"])
			tk := call(on, "PATCH", "/v9/ticketing/tickets/"+tid+".json", "", nil, nil)
			if tk.status != 200 || tk.m()["id"] != tid {
				t.Errorf("ticket %d: %d %s", i, tk.status, tk.body)
			}
			got[i] = placed{coupon: str(c["id"]), item: str(c["billable_item_id"]), ticket: tid}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if o, c, tk := countRows(t, st, "orders"), countRows(t, st, "coupons"), countRows(t, st, "tickets"); o != n || c != n || tk != n {
		t.Fatalf("rows after %d orders: orders %d coupons %d tickets %d", n, o, c, tk)
	}

	// A subscription ordered on A, activated on B, reordered on both at once:
	// each cycle is ordered once, whichever instance wins.
	o := must(t, 201, a.url(), "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{ids["month/adult"]}}).m()
	mc := o["coupons"].([]any)[0].(map[string]any)
	must(t, 201, b.url(), "POST", "/v9/ticketing/coupons/"+str(mc["id"])+"/activate.json", "", photoIDMonthly)
	sub := must(t, 200, a.url(), "GET", "/v9/ticketing/coupons/"+str(mc["id"])+".json", "", nil).m()["subscription"].(map[string]any)
	subID := str(sub["id"])
	itemsBefore := countRows(t, st, "billable_items")
	var mu sync.Mutex
	reorders := 0
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := call(inst[i%2].url(), "POST", "/v9/ticketing/subscriptions/"+subID+"/reorder.json", key, nil, nil)
			switch r.status {
			case 201:
				mu.Lock()
				reorders++
				mu.Unlock()
			case 422:
			default:
				t.Errorf("reorder: %d %s", r.status, r.body)
			}
		}()
	}
	wg.Wait()
	s := must(t, 200, b.url(), "GET", "/v9/ticketing/subscriptions/"+subID+".json", key, nil).m()
	ordered, seen := 0, map[string]bool{}
	for _, c := range s["subscription_cycles"].([]any) {
		m := c.(map[string]any)
		if m["ordered"] == true {
			ordered++
			if seen[str(m["billable_item_id"])] {
				t.Errorf("two cycles share billable item %v", m["billable_item_id"])
			}
			seen[str(m["billable_item_id"])] = true
		}
	}
	if added := countRows(t, st, "billable_items") - itemsBefore; reorders < 1 || added != reorders || ordered != reorders+1 {
		t.Errorf("%d reorders succeeded, %d billable items added, %d cycles ordered", reorders, added, ordered)
	}

	// Invoices created on both instances at once: unique, consecutive numbers.
	numbers := make([]string, n)
	invoiceIDs := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := call(inst[i%2].url(), "POST", "/v5/ticketing/billable_item/"+got[i].item+"/invoice.json", key, nil, nil)
			if r.status != 201 {
				t.Errorf("invoice %d: %d %s", i, r.status, r.body)
				return
			}
			numbers[i], invoiceIDs[i] = str(r.m()["invoice_number"]), str(r.m()["invoice_id"])
		}()
	}
	wg.Wait()
	sort.Strings(numbers)
	year := time.Now().In(clock.Berlin).Year()
	for i, num := range numbers {
		if want := fmt.Sprintf("%d-%06d", year, i+1); num != want {
			t.Fatalf("invoice numbers not consecutive: position %d is %q, want %q (%v)", i, num, want, numbers)
		}
	}
	stored, err := st.Read().InvoiceNumbers(ctx, account.Live)
	if err != nil || len(stored) != n {
		t.Fatalf("stored numbers: %d %v", len(stored), err)
	}
	// Both instances run workers; every document job runs exactly once.
	waitFor(t, 90*time.Second, "invoice jobs", func() bool {
		m, err := st.Read().JobStates(ctx)
		return err == nil && m["done"] == n && m["ready"] == 0 && m["running"] == 0
	})
	jobs, err := st.Read().Jobs(ctx, "invoice.files")
	if err != nil || len(jobs) != n {
		t.Fatalf("jobs: %d %v", len(jobs), err)
	}
	for _, j := range jobs {
		if j.State != "done" || j.Attempts != 1 {
			t.Errorf("job %d: %s after %d attempts", j.ID, j.State, j.Attempts)
		}
	}
	// Each invoice's PDF is downloadable from the instance that did not make it.
	for i, id := range invoiceIDs {
		inv := must(t, 200, inst[(i+1)%2].url(), "GET", "/v5/ticketing/invoices/"+id+".json", key, nil).m()
		u, err := url.Parse(str(inv["invoice_pdf_url"]))
		if err != nil {
			t.Fatal(err)
		}
		pdf := call(inst[(i+1)%2].url(), "GET", u.Path, "", nil, nil)
		if pdf.status != 200 || !bytes.HasPrefix(pdf.body, []byte("%PDF-")) {
			t.Errorf("invoice %s PDF from the other instance: %d", id, pdf.status)
			continue
		}
	}

	// Business metrics: each instance counts what it served; together they
	// count every order, activation and invoice once.
	sum := func(series string) float64 {
		total := 0.0
		for _, in := range inst {
			if v := in.metric(t, series); v > 0 {
				total += v
			}
		}
		return total
	}
	for series, want := range map[string]float64{
		`farebox_events_total{environment="live",event="order_placed"}`:           n + 1,
		`farebox_events_total{environment="live",event="coupon_activated"}`:       n + 1,
		`farebox_events_total{environment="live",event="invoice_issued"}`:         n,
		`farebox_events_total{environment="live",event="subscription_reordered"}`: float64(reorders),
		`farebox_jobs{state="done"}`:                                              n, // each instance reads the shared queue
		`farebox_jobs_oldest_ready_age_seconds`:                                   0,
	} {
		got := sum(series)
		if series == `farebox_jobs{state="done"}` {
			got /= 2
		}
		if got != want {
			t.Errorf("%s = %v across both instances, want %v", series, got, want)
		}
	}
	if a.metric(t, `farebox_jobs_oldest_ready_age_seconds`) != 0 {
		t.Error("queue age gauge missing")
	}

	// An Idempotency-Key used on A replays on B; one order exists.
	ordersBefore := countRows(t, st, "orders")
	body := map[string]any{"product_ids": []string{ids["day/adult"]}}
	h := map[string]string{"Idempotency-Key": "scale-out-1"}
	r1 := call(a.url(), "POST", "/v9/ticketing/orders.json", key, body, h)
	r2 := call(b.url(), "POST", "/v9/ticketing/orders.json", key, body, h)
	if r1.status != 201 || r2.status != 201 || string(r1.body) != string(r2.body) ||
		r1.header.Get("Idempotency-Replayed") != "false" || r2.header.Get("Idempotency-Replayed") != "true" {
		t.Errorf("idempotent order across instances: %d %q / %d %q", r1.status, r1.header.Get("Idempotency-Replayed"), r2.status, r2.header.Get("Idempotency-Replayed"))
	}
	if d := countRows(t, st, "orders") - ordersBefore; d != 1 {
		t.Errorf("idempotent order across instances wrote %d orders", d)
	}
	// The same key with another body is refused on either instance.
	r3 := call(b.url(), "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{ids["single/adult"]}}, h)
	if r3.status != 422 || r3.m()["code"] != "idempotency_key_reused" {
		t.Errorf("reused key with another body on B: %d %s", r3.status, r3.body)
	}

	// A catalog import (an operator command) reaches both instances.
	f, err := catalog.Parse([]byte(cli(t, env, "catalog", "export")))
	if err != nil {
		t.Fatal(err)
	}
	var target string
	for i, p := range f.Products {
		if p.ID == ids["single/adult"] {
			f.Products[i].LocalTicketName = "Einzelfahrt Skalierung"
			target = p.ID
		}
	}
	raw, _ := json.Marshal(f)
	path := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cli(t, env, "catalog", "import", path)
	for _, in := range inst {
		waitFor(t, 20*time.Second, "catalog refresh on "+in.addr, func() bool {
			r := call(in.url(), "GET", "/v9/ticketing/products/"+target+".json", "", nil, nil)
			return r.status == 200 && r.m()["local_ticket_name"] == "Einzelfahrt Skalierung"
		})
	}

	// A GTFS feed imported once serves departures on both instances, and a
	// session token minted by A covers the same station's board on B.
	cli(t, env, "gtfs", "import", "--feed-id", "caltrain", filepath.Join(shareddata.Path("gtfs"), "caltrain-2023.zip"))
	board := "/v1/departures.json?max_departures=3&station_id=farebox-station-caltrain_22nd_street&api_key=" + key
	for _, in := range inst {
		waitFor(t, 30*time.Second, "departures on "+in.addr, func() bool { return call(in.url(), "GET", board, "", nil, nil).status == 200 })
	}
	first := call(a.url(), "GET", board, "", nil, map[string]string{"X-Request-Id": "board-on-a"})
	tok := first.header.Get("session-token")
	second := call(b.url(), "GET", board, "", nil, map[string]string{"X-Request-Id": "board-on-b", "session-token": tok})
	if first.status != 200 || tok == "" || second.status != 200 || second.header.Get("session-token") == "" {
		t.Fatalf("boards: A %d token %q, B %d", first.status, tok, second.status)
	}
	for id, counted := range map[string]bool{"board-on-a": true, "board-on-b": false} {
		// The ledger commits a request's row after its response, within
		// the window (docs/operations.md, "When a request's row is committed").
		var rows []usage.Event
		var err error
		waitFor(t, 20*time.Second, "the ledger row of "+id, func() bool {
			rows, err = st.Read().UsageByRequest(ctx, id)
			return err != nil || len(rows) > 0
		})
		if err != nil || len(rows) != 1 || rows[0].Counted != counted || (!counted && rows[0].Reason != "session") {
			t.Errorf("ledger of %s: %+v %v (want counted=%v)", id, rows, err, counted)
		}
	}

	// A key revoked through one operator command stops working on both
	// instances within the auth cache TTL.
	cli(t, env, "accounts", "revoke", key[:17], "--yes")
	for _, in := range inst {
		waitFor(t, 20*time.Second, "revocation on "+in.addr, func() bool {
			return call(in.url(), "GET", "/v1/account.json", key, nil, nil).status == 401
		})
	}
}
