package main

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/testtool"
)

// ack is what the load saw acknowledged (a 2xx) or attempted.
type ack struct {
	mu        sync.Mutex
	requests  []string          // request ids answered 2xx
	orders    map[string]string // Idempotency-Key → order id (201)
	pending   map[string]bool   // Idempotency-Keys whose outcome is unknown
	tickets   []string
	invoices  []string
	attempted atomic.Int64 // order attempts
}

// TestKillDuringLoad runs the partner load against two real farebox
// processes on one PostgreSQL schema, kills one with SIGKILL in the middle,
// restarts it and lets the load go on. Afterwards: every 2xx is in the
// database (orders, tickets, invoices, one usage-ledger row per request id),
// orders whose answer was lost are settled by retrying their
// Idempotency-Key and exist exactly once, the invoice numbers have no gap,
// and the jobs the killed process held are finished by the instances.
//
// It runs with the usage ledger committed in PostgreSQL before the
// response (--usage-ledger-commit=before-response) and journaled per instance (--usage-ledger-journal=journal): then the killed
// process's rows are in its memory-mapped segment, which the restarted
// process (same data dir) rolls into the database.
func TestKillDuringLoad(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Crash)
	for _, mode := range []string{"database", "journal"} {
		t.Run(mode, func(t *testing.T) { killDuringLoad(t, mode) })
	}
}

func killDuringLoad(t *testing.T, ledgerMode string) {
	env, st := pgEnv(t)
	env["FAREBOX_JOB_LEASE"] = "4s"
	env["FAREBOX_REQUEST_TIMEOUT"] = "3s"
	env["FAREBOX_USAGE_LEDGER_JOURNAL"] = ledgerMode
	// Every acknowledged row is checked below: the ledger commits before
	// the response (the deferred default's window is what
	// TestKillLosesAtMostTheLedgerWindow measures).
	env["FAREBOX_USAGE_LEDGER_COMMIT"] = "before-response"
	accountID, key := newKey(t, env)
	envA, envB := maps.Clone(env), maps.Clone(env) // each instance its own data dir
	envA["FAREBOX_DATA_DIR"], envB["FAREBOX_DATA_DIR"] = t.TempDir(), t.TempDir()
	a, b := startChild(t, envA), startChild(t, envB)
	var aURL atomic.Value
	aURL.Store(a.url())
	ids := products(t, b.url(), key)
	ctx := context.Background()

	res := &ack{orders: map[string]string{}, pending: map[string]bool{}}
	stop := loadUntilStopped(8, func(w, i int) {
		base := b.url()
		if i%2 == 0 {
			base = aURL.Load().(string)
		}
		loadStep(base, key, ids["single/adult"], fmt.Sprintf("w%d-%d", w, i), i%3 == 0, res)
	})
	waitFor(t, 60*time.Second, "orders before the kill", func() bool {
		res.mu.Lock()
		defer res.mu.Unlock()
		return len(res.orders) >= 40
	})
	a.kill()
	time.Sleep(300 * time.Millisecond)
	a2 := startChild(t, envA)
	aURL.Store(a2.url())
	before := len(res.orders)
	waitFor(t, 60*time.Second, "orders after the restart", func() bool {
		res.mu.Lock()
		defer res.mu.Unlock()
		return len(res.orders) >= before+40
	})
	stop()

	// Orders whose answer was lost: the same Idempotency-Key either replays
	// the committed order, places it now, or (when the process died between
	// the order's commit and storing its answer) says the outcome is
	// unknown; never a second order.
	unknown := 0
	for k := range res.pending {
		body := map[string]any{"product_ids": []string{ids["single/adult"]}}
		waitFor(t, 30*time.Second, "retry of "+k, func() bool {
			r := call(b.url(), "POST", "/v9/ticketing/orders.json", key, body, map[string]string{"Idempotency-Key": k})
			if r.status == 201 {
				res.orders[k] = str(r.m()["order_id"])
				return true
			}
			if r.status == 409 && r.m()["code"] == "idempotency_key_outcome_unknown" {
				// The order committed but its answer died with the process:
				// it exists once, under an id the client never saw.
				res.orders[k] = ""
				unknown++
				return true
			}
			if r.status != 409 || r.m()["code"] != "idempotency_key_in_flight" {
				t.Fatalf("retry %s: %d %s", k, r.status, r.body)
			}
			return false // the dead process's claim on the key has not expired yet
		})
	}
	if n := countRows(t, st, "orders"); n != len(res.orders) {
		t.Errorf("%d orders in the database for %d distinct Idempotency-Keys (%d attempts, %d settled by retry)",
			n, len(res.orders), res.attempted.Load(), len(res.pending))
	}
	for k, id := range res.orders {
		if id == "" {
			continue
		}
		if _, err := st.Read().Order(ctx, accountID, account.Live, id); err != nil {
			t.Errorf("acknowledged order %s (%s) missing: %v", id, k, err)
		}
	}
	for _, id := range res.tickets {
		if _, err := st.Read().Ticket(ctx, id); err != nil {
			t.Errorf("acknowledged ticket %s missing: %v", id, err)
		}
	}
	// One usage-ledger row per acknowledged request (journaled rows reach
	// the database within about a second).
	rows := map[string]int{}
	allRecorded := func() bool {
		events, err := st.Read().UsageEvents(ctx, time.Unix(0, 0), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		clear(rows)
		for _, e := range events {
			rows[e.RequestID]++
		}
		for _, id := range res.requests {
			if rows[id] == 0 {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(30 * time.Second); !allRecorded() && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	for _, id := range res.requests {
		if rows[id] != 1 {
			t.Errorf("request %s: %d usage-ledger rows, want 1", id, rows[id])
		}
	}
	// Invoice numbers: no gap, and every acknowledged invoice is stored.
	numbers, err := st.Read().InvoiceNumbers(ctx, account.Live)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(numbers)
	year := time.Now().In(clock.Berlin).Year()
	for i, n := range numbers {
		if want := fmt.Sprintf("%d-%06d", year, i+1); n != want {
			t.Fatalf("invoice number %d is %s, want %s", i, n, want)
		}
	}
	if len(numbers) < len(res.invoices) {
		t.Errorf("%d invoices stored, %d acknowledged", len(numbers), len(res.invoices))
	}
	for _, id := range res.invoices {
		if _, err := st.Read().InvoiceByID(ctx, id); err != nil {
			t.Errorf("acknowledged invoice %s missing: %v", id, err)
		}
	}
	// Jobs the killed process held are taken over after the lease.
	waitFor(t, 90*time.Second, "all invoice jobs done", func() bool {
		m, err := st.Read().JobStates(ctx)
		return err == nil && m["ready"] == 0 && m["running"] == 0 && m["done"] == len(numbers)
	})
	if m, _ := st.Read().JobStates(ctx); m["dead"] != 0 {
		t.Errorf("dead jobs: %v", m)
	}
	t.Logf("%d order attempts, %d orders (%d settled by retry, %d committed with their answer lost), %d tickets, %d invoices, %d acknowledged requests",
		res.attempted.Load(), len(res.orders), len(res.pending), unknown, len(res.tickets), len(numbers), len(res.requests))
	b.term()
	a2.term()
}

// loadStep orders a single ticket with an Idempotency-Key, activates it,
// fetches the ticket and (when invoice) invoices it, recording what was
// acknowledged.
func loadStep(base, key, product, tag string, invoice bool, res *ack) {
	idem := "crash-" + tag
	res.attempted.Add(1)
	r := call(base, "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{product}},
		map[string]string{"Idempotency-Key": idem, "X-Request-Id": "o-" + tag})
	res.mu.Lock()
	defer res.mu.Unlock()
	if r.status != 201 {
		res.pending[idem] = true
		return
	}
	res.orders[idem] = str(r.m()["order_id"])
	res.requests = append(res.requests, "o-"+tag)
	c := r.m()["coupons"].([]any)[0].(map[string]any)
	res.mu.Unlock()
	act := call(base, "POST", "/v9/ticketing/coupons/"+str(c["id"])+"/activate.json", "", photoID, map[string]string{"X-Request-Id": "a-" + tag})
	var tk reply
	if act.status == 201 {
		tk = call(base, "PATCH", "/v9/ticketing/tickets/"+str(act.m()["ticket_id"])+".json", "", nil, map[string]string{"X-Request-Id": "t-" + tag})
	}
	var inv reply
	if invoice {
		inv = call(base, "POST", "/v5/ticketing/billable_item/"+str(c["billable_item_id"])+"/invoice.json", key, nil, map[string]string{"X-Request-Id": "i-" + tag})
	}
	res.mu.Lock()
	if act.status == 201 {
		res.tickets = append(res.tickets, str(act.m()["ticket_id"]))
		res.requests = append(res.requests, "a-"+tag)
	}
	if tk.status == 200 {
		res.requests = append(res.requests, "t-"+tag)
	}
	if inv.status == 201 {
		res.invoices = append(res.invoices, str(inv.m()["invoice_id"]))
		res.requests = append(res.requests, "i-"+tag)
	}
}
