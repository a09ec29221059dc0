package httpapi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
)

// msgNotOrdered is the message the iOS SDK matches exactly (client-contract.md 5).
const msgNotOrdered = "The current subscription cycle was not ordered yet"

// TestRenewalRightAfterReorder drives the SDKs' order of calls on every API
// version: the partner orders the monthly product, the app activates it for
// next month (activation_start_datetime on the 1st of next month, in the
// iOS and in the Android format), then month after month the partner
// reorders and the app reactivates at once (client-contract.md 2.2: fetch
// the coupon, require coupon_reactivatable, pick Android's first ordered,
// not activated cycle, fetch its product, POST the reactivation_key). The
// interface's state table has no time condition ("cycle ordered → activate
// with reactivation_key → ticket for that cycle"): every reactivation is a
// 201 however far ahead the cycle starts, and the ticket is valid from 00:00
// Berlin on the cycle's 1st to its last second, issued now. Only a cycle
// that is truly not ordered answers the message the SDKs know.
func TestRenewalRightAfterReorder(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Now: bln(2026, 6, 15, 10), Configure: withWallets(t, false)}, func(t *testing.T, e *apitest.Env) {
		monthly := productIDs(t, e)["month/adult"]
		kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range []string{"v6", "v7", "v8", "v9"} {
			// Each version its own subscription, half a year after the last
			// one (the clock only moves forward); v7 starts in December, so
			// its renewals cross the year and both DST changes.
			start := time.Date(2026, time.Month(6+6*i), 15, 10, 0, 0, 0, clock.Berlin)
			e.Clock.Set(start)
			o := e.Must(201, apitest.Req{Method: "POST", Path: "/" + v + "/ticketing/orders.json", Key: e.LiveKey,
				Body: map[string]any{"product_ids": []string{monthly}}}).Map(t)
			cid := str(o["coupons"].([]any)[0].(map[string]any)["id"])

			// Activate for next month: iOS sends the device's offset without
			// a colon, Android UTC.
			first := time.Date(start.Year(), start.Month()+1, 1, 0, 0, 0, 0, clock.Berlin)
			startTime := first.Format("2006-01-02T15:04:05-0700")
			if i%2 == 1 {
				startTime = first.UTC().Format("2006-01-02T15:04:05Z")
			}
			tk := ticket(t, e, mustActivate(t, e, v, cid, map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01"),
				"tariff_settings": map[string]any{"german_postal_code": "10115"}, "activation_start_datetime": startTime}))
			wantMonth(t, v+" first ticket", tk, first, e.Clock.Now())
			subID := str(coupon(t, e, v, cid)["subscription"].(map[string]any)["id"])

			for k := 1; k <= 4; k++ {
				cycle := first.AddDate(0, k, 0)
				name := fmt.Sprintf("%s renewal %d (%s)", v, k, cycle.Format("2006-01"))
				key := str(tk["coupon_reactivation_key"])
				if r := e.Do(apitest.Req{Method: "POST", Path: "/" + v + "/ticketing/subscriptions/" + subID + "/reorder.json", Key: e.LiveKey}); r.Status != 201 {
					t.Fatalf("%s: reorder: %d %s", name, r.Status, r.Body)
				}
				// What the SDK checks before it reactivates.
				sub := coupon(t, e, v, cid)["subscription"].(map[string]any)
				if sub["coupon_reactivatable"] != true || sub["active"] != true {
					t.Fatalf("%s: right after the reorder coupon_reactivatable %v, active %v", name, sub["coupon_reactivatable"], sub["active"])
				}
				var target map[string]any
				for _, c := range sub["subscription_cycles"].([]any) {
					if c := c.(map[string]any); c["ordered"] == true && c["coupon_activated"] == false {
						target = c
						break
					}
				}
				if target == nil || target["valid_from"] != clock.Timestamp(cycle) || str(target["product_id"]) == "" {
					t.Fatalf("%s: Android's first ordered, not activated cycle: %v", name, target)
				}
				e.Must(200, apitest.Req{Method: "GET", Path: "/" + v + "/ticketing/products/" + str(target["product_id"]) + ".json"})

				before := counts(t, e)["tickets"]
				r := activate(e, v, cid, map[string]any{"reactivation_key": key})
				if r.Status != 201 {
					t.Fatalf("%s: reactivation right after the reorder (%s, the cycle starts %s): %d %s",
						name, clock.Timestamp(e.Clock.Now()), clock.Timestamp(cycle), r.Status, r.Body)
				}
				next := ticket(t, e, str(r.Map(t)["ticket_id"]))
				wantMonth(t, name, next, cycle, e.Clock.Now())
				if n := counts(t, e)["tickets"]; n != before+1 {
					t.Errorf("%s: %d tickets made", name, n-before)
				}
				if k == 1 {
					// Obtained weeks ahead, the barcode inspects as not yet
					// valid until 23:59:59 before the 1st and valid from 00:00.
					p := ticketPayload(t, next)
					if got := barcode.Inspect(p, kr, cycle.Add(-time.Second)).State; got != barcode.StateNotYet {
						t.Errorf("%s: a second before the cycle: %s", name, got)
					}
					if got := barcode.Inspect(p, kr, cycle).State; got != barcode.StateValid {
						t.Errorf("%s: at the cycle's start: %s", name, got)
					}
				}

				// The following cycle is not ordered: now, and only now, the
				// message the SDKs know, and nothing is made.
				sub = coupon(t, e, v, cid)["subscription"].(map[string]any)
				if sub["coupon_reactivatable"] != false {
					t.Errorf("%s: coupon_reactivatable %v with no ordered cycle left", name, sub["coupon_reactivatable"])
				}
				nextKey := str(next["coupon_reactivation_key"])
				r = activate(e, v, cid, map[string]any{"reactivation_key": nextKey})
				if m := r.Map(t); r.Status != 422 || m["message"] != msgNotOrdered || m["code"] != "subscription_cycle_not_ordered" {
					t.Errorf("%s: the next cycle, not ordered: %d %s", name, r.Status, r.Body)
				}
				if n := counts(t, e)["tickets"]; n != before+1 {
					t.Errorf("%s: the refused reactivation made a ticket", name)
				}
				tk = next
				// Next month the partner reorders again (the reorder horizon
				// is three months ahead of the current one).
				e.Clock.Set(e.Clock.Now().In(clock.Berlin).AddDate(0, 1, 0))
			}
		}
	})
}

// wantMonth checks that tk is the ticket of the Berlin calendar month
// starting at from, issued at issued.
func wantMonth(t *testing.T, name string, tk map[string]any, from, issued time.Time) {
	t.Helper()
	until := from.In(clock.Berlin).AddDate(0, 1, 0).Add(-time.Second)
	if tk["valid_from"] != clock.Timestamp(from) || tk["valid_until"] != clock.Timestamp(until) ||
		tk["ticket_created_at"] != clock.Timestamp(issued) || str(tk["coupon_reactivation_key"]) == "" || tk["valid"] != true {
		t.Errorf("%s: ticket %v – %v issued %v (key %v, valid %v); want %s – %s issued %s", name, tk["valid_from"], tk["valid_until"],
			tk["ticket_created_at"], tk["coupon_reactivation_key"], tk["valid"], clock.Timestamp(from), clock.Timestamp(until), clock.Timestamp(issued))
	}
}

// bln is a wall-clock hour in Berlin.
func bln(y int, m time.Month, d, h int) time.Time {
	return time.Date(y, m, d, h, 0, 0, 0, clock.Berlin)
}
