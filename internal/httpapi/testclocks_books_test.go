package httpapi_test

import (
	"context"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
)

// subscriptionIDs are the ids the subscription list shows for query.
func subscriptionIDs(t *testing.T, e *apitest.Env, key, query string) []string {
	t.Helper()
	var l struct {
		Data []map[string]any `json:"data"`
	}
	e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions.json?" + query, Key: key}).JSON(t, &l)
	var out []string
	for _, s := range l.Data {
		out = append(out, str(s["id"]))
	}
	return out
}

// TestTestClockDatesTheBooks: on a clock standing in September while the
// service stands in June, the cancellation receipt, the list's state
// filter, an invoice's cancellation and payment notice and the audit log
// of its item all go by the clock's time (docs/test-clocks.md).
func TestTestClockDatesTheBooks(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		key := e.TestKey
		ids := productIDs(t, e)
		clk := newClock(t, e, key, "2026-09-09T10:00:00Z")
		var o struct {
			Coupons []map[string]any `json:"coupons"`
		}
		e.Must(201, apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: key,
			Body: map[string]any{"product_ids": []string{ids["month/adult"], ids["single/adult"]}, "test_clock": clk}}).JSON(t, &o)
		// A subscription without a clock, cancelled at the service's time.
		plain := order(t, e, key, ids["month/adult"])

		// The receipt of a cancellation on the clock is received at its time.
		var subs []string
		for _, c := range []map[string]any{o.Coupons[0], plain.Coupons[0]} {
			mustActivate(t, e, "v9", str(c["id"]), map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01"),
				"tariff_settings": map[string]any{"german_postal_code": "10115"}})
			sub := str(coupon(t, e, "v9", str(c["id"]))["subscription"].(map[string]any)["id"])
			e.Must(200, apitest.Req{Method: "DELETE", Path: "/v9/ticketing/subscriptions/" + sub + ".json", Key: key})
			subs = append(subs, sub)
		}
		onClock, off := subs[0], subs[1]
		rc := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions/" + onClock + "/cancellation_receipt.json", Key: key}).Map(t)
		if rc["received_at"] != "2026-09-09T10:00:00Z" || rc["effective_end"] != "2026-09-30T21:59:59Z" {
			t.Errorf("receipt on the clock: received %v, end %v", rc["received_at"], rc["effective_end"])
		}
		if rc := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions/" + off + "/cancellation_receipt.json", Key: key}).Map(t); rc["received_at"] != "2026-06-15T10:00:00Z" {
			t.Errorf("receipt without a clock: received %v", rc["received_at"])
		}

		// The state filter: both cancelled, neither ended; once the clock has
		// passed the end (the service still in June), the clock's is ended
		// and the other still cancelled.
		if got := subscriptionIDs(t, e, key, "state=cancelled"); len(got) != 2 {
			t.Fatalf("cancelled before the advance: %v", got)
		}
		if got := subscriptionIDs(t, e, key, "state=ended"); len(got) != 0 {
			t.Fatalf("ended before the advance: %v", got)
		}
		e.Must(200, apitest.Req{Method: "POST", Path: "/v1/test_clocks/" + clk + "/advance.json", Key: key, Body: map[string]any{"frozen_time": "2026-10-01T00:00:00Z"}})
		if got := subscriptionIDs(t, e, key, "state=ended"); len(got) != 1 || got[0] != onClock {
			t.Errorf("ended after the clock passed the end: %v, want [%s]", got, onClock)
		}
		if got := subscriptionIDs(t, e, key, "state=cancelled"); len(got) != 1 || got[0] != off {
			t.Errorf("cancelled after the clock passed the end: %v, want [%s]", got, off)
		}
		if got := subscriptionIDs(t, e, key, "state=ended&limit=1"); len(got) != 1 {
			t.Errorf("ended, one a page: %v", got)
		}
		if n, err := e.App.Jobs.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("advance job: %d %v", n, err)
		}

		// The single ticket's item is on the clock: its invoice, its payment
		// notice and its cancellation are dated 1 October, as are their
		// events, the item's changes (added to a collection, assigned) and
		// its audit entries.
		item := str(o.Coupons[1]["billable_item_id"])
		cust := newCustomer(t, e, key, []string{"Beispiel GmbH", "Hauptstraße 1", "10115 Berlin"}, nil)
		coll := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: key}).Map(t)["id"].(string)
		e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll + "/billable_items.json", Key: key,
			Body: map[string]any{"billable_item_ids": []string{item}}})
		put(t, e, key, item, map[string]any{"customer_id": cust})
		inv := issue(t, e, key, item, cust, nil)
		var notice, canc InvoiceJSON
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/payment_notice.json", Key: key}).JSON(t, &notice)
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + inv.InvoiceID + "/cancel.json", Key: key}).JSON(t, &canc)
		for _, d := range []InvoiceJSON{inv, notice, canc} {
			if d.IssueDate != "2026-10-01" {
				t.Errorf("%s %s issued %s, want the clock's 2026-10-01", d.Kind, d.InvoiceID, d.IssueDate)
			}
		}
		if notice.DueDate == nil || *notice.DueDate != *inv.DueDate {
			t.Errorf("payment notice due %v, want the invoice's %v (both from the clock's time)", notice.DueDate, inv.DueDate)
		}
		for typ, n := range map[string]int{"billable_item.updated": 2, "invoice.created": 2, "payment_notice.created": 1, "invoice.cancelled": 1} { // the cancellation's is an invoice.created
			evs := eventsOf(t, e, key, typ)
			if len(evs) != n {
				t.Fatalf("%s: %v, want %d", typ, evs, n)
			}
			for _, ev := range evs {
				if ev["created"] != "2026-10-01T00:00:00Z" {
					t.Errorf("%s at %v, want the clock's time", typ, ev["created"])
				}
			}
		}
		audit := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/audit_log.json?object_id=" + item, Key: key}).Map(t)["data"].([]any)
		if len(audit) != 4 {
			t.Fatalf("audit entries of the item: %v", audit)
		}
		for _, a := range audit {
			if a := a.(map[string]any); a["created"] != "2026-10-01T00:00:00Z" {
				t.Errorf("audit %v at %v, want the clock's time", a["action"], a["created"])
			}
		}
	})
}
