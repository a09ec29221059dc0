package httpapi_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

// monthlyCoupon orders the monthly product and activates it for June 2026.
func monthlyCoupon(t *testing.T, e *apitest.Env) (couponID, subID string, tk map[string]any) {
	t.Helper()
	o := order(t, e, e.LiveKey, productIDs(t, e)["month/adult"])
	couponID = str(o.Coupons[0]["id"])
	tid := mustActivate(t, e, "v9", couponID, map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01"),
		"tariff_settings": map[string]any{"german_postal_code": "10115"}})
	tk = ticket(t, e, tid)
	sub := coupon(t, e, "v9", couponID)["subscription"].(map[string]any)
	return couponID, str(sub["id"]), tk
}

func reorder(e *apitest.Env, key, subID string, body any) *apitest.Resp {
	return e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/subscriptions/" + subID + "/reorder.json", Key: key, Body: body})
}

// TestSubscriptionReactivationFlow drives client-contract scenario 15 as the SDKs do.
func TestSubscriptionReactivationFlow(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		cid, subID, june := monthlyCoupon(t, e)
		key := str(june["coupon_reactivation_key"])
		if key == "" || june["valid_from"] != "2026-05-31T22:00:00Z" || june["valid_until"] != "2026-06-30T21:59:59Z" {
			t.Fatalf("June ticket: %v", june)
		}
		c := coupon(t, e, "v9", cid)
		sub := c["subscription"].(map[string]any)
		if sub["active"] != true || sub["activate"] != true || sub["coupon_reactivatable"] != false || sub["subscription_reorderable"] != true {
			t.Errorf("after activation: %v", sub)
		}
		cur := sub["current_subscription_cycle"].(map[string]any)
		next := sub["next_unordered_subscription_cycle"].(map[string]any)
		if cur["valid_from"] != "2026-05-31T22:00:00Z" || cur["coupon_activated"] != true || next["valid_from"] != "2026-06-30T22:00:00Z" || next["ordered"] != false ||
			sub["current_cycle_valid_until"] != "2026-06-30T21:59:59Z" || sub["ordered_until"] != "2026-06-30T21:59:59Z" {
			t.Errorf("cycles: current %v next %v", cur, next)
		}
		// Reactivating before the next cycle is ordered.
		r := activate(e, "v9", cid, map[string]any{"reactivation_key": key})
		if r.Status != 422 || r.Map(t)["message"] != "The current subscription cycle was not ordered yet" {
			t.Fatalf("reactivation before reorder: %d %s", r.Status, r.Body)
		}
		// The partner reorders (Bearer); the cycle gets its billable item.
		before := counts(t, e)["billable_items"]
		rr := reorder(e, e.LiveKey, subID, nil)
		if rr.Status != 201 {
			t.Fatalf("reorder: %d %s", rr.Status, rr.Body)
		}
		e.MustMatch("subscription", rr.Body, apitest.SDKSubscription)
		if after := counts(t, e)["billable_items"]; after != before+1 {
			t.Errorf("reorder made %d billable items", after-before)
		}
		sub = coupon(t, e, "v9", cid)["subscription"].(map[string]any)
		if sub["coupon_reactivatable"] != true {
			t.Errorf("after reorder coupon_reactivatable = %v", sub["coupon_reactivatable"])
		}
		var target map[string]any
		for _, cy := range sub["subscription_cycles"].([]any) {
			m := cy.(map[string]any)
			if m["ordered"] == true && m["coupon_activated"] == false {
				target = m
				break
			}
		}
		if target == nil || target["valid_from"] != "2026-06-30T22:00:00Z" || str(target["billable_item_id"]) == "" {
			t.Fatalf("no ordered, not activated July cycle in %v", sub["subscription_cycles"])
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/products/" + str(target["product_id"]) + ".json"})
		// Reactivation issues July's ticket with a new key; v9 repeats return the same ticket.
		july := ticket(t, e, mustActivate(t, e, "v9", cid, map[string]any{"reactivation_key": key}))
		if july["valid_from"] != "2026-06-30T22:00:00Z" || july["valid_until"] != "2026-07-31T21:59:59Z" ||
			str(july["coupon_reactivation_key"]) == key || str(july["coupon_reactivation_key"]) == "" {
			t.Errorf("July ticket: %v – %v key %v", july["valid_from"], july["valid_until"], july["coupon_reactivation_key"])
		}
		if again := mustActivate(t, e, "v9", cid, map[string]any{"reactivation_key": key}); again != july["id"] {
			t.Errorf("v9 repeat gave %s, want %s", again, july["id"])
		}
		if again := mustActivate(t, e, "v8", cid, map[string]any{"reactivation_key": key}); again != july["id"] {
			t.Errorf("v8 repeat gave %s, want %s", again, july["id"])
		}
		// A stale, foreign or unknown key is rejected.
		_, _, other := monthlyCoupon(t, e)
		for _, k := range []string{str(other["coupon_reactivation_key"]), "farebox-reactivation-key-nope"} {
			r := activate(e, "v9", cid, map[string]any{"reactivation_key": k})
			if r.Status != 422 || !strings.HasPrefix(str(r.Map(t)["message"]), "reactivation_key:") {
				t.Errorf("foreign key %s: %d %s", k, r.Status, r.Body)
			}
		}
		// The new ticket's key works for August once ordered; with a medium it replaces the old one.
		reorder(e, e.LiveKey, subID, nil)
		aug := ticket(t, e, mustActivate(t, e, "v9", cid, map[string]any{"reactivation_key": july["coupon_reactivation_key"],
			"identification_medium": medium("Max", "Mustermann-Neu", "1990-01-01")}))
		if aug["valid_from"] != "2026-07-31T22:00:00Z" {
			t.Errorf("August ticket from %v", aug["valid_from"])
		}
	})
}

func TestReorderRules(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		_, subID, _ := monthlyCoupon(t, e)
		s := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions/" + subID + ".json", Key: e.LiveKey}).Map(t)
		june := s["current_subscription_cycle"].(map[string]any)
		july := s["next_unordered_subscription_cycle"].(map[string]any)
		// The already ordered (current) cycle: 422. A named future cycle: ordered.
		if r := reorder(e, e.LiveKey, subID, map[string]any{"subscription_cycle_id": june["id"]}); r.Status != 422 || r.Map(t)["code"] != "subscription_cycle_already_ordered" {
			t.Errorf("reorder of an ordered cycle: %d %s", r.Status, r.Body)
		}
		r := reorder(e, e.LiveKey, subID, map[string]any{"subscription_cycle_id": july["id"]})
		if r.Status != 201 {
			t.Fatalf("named reorder: %d %s", r.Status, r.Body)
		}
		// Unknown cycle, another account, wrong key place.
		if r := reorder(e, e.LiveKey, subID, map[string]any{"subscription_cycle_id": "farebox-cycle-nope"}); r.Status != 422 {
			t.Errorf("unknown cycle: %d", r.Status)
		}
		_, otherKey := e.NewAccount("Other", "live")
		e.Must(404, apitest.Req{Method: "POST", Path: "/v9/ticketing/subscriptions/" + subID + "/reorder.json", Key: otherKey})
		e.Must(404, apitest.Req{Method: "DELETE", Path: "/v9/ticketing/subscriptions/" + subID + ".json", Key: otherKey})
		e.Must(400, apitest.Req{Method: "POST", Path: "/v9/ticketing/subscriptions/" + subID + "/reorder.json", Key: e.LiveKey, Body: `{"cycle":1}`})
		// A past cycle cannot be ordered: move to September; June ended.
		e.Clock.Set(time.Date(2026, 9, 2, 10, 0, 0, 0, time.UTC))
		if r := reorder(e, e.LiveKey, subID, map[string]any{"subscription_cycle_id": june["id"]}); r.Status != 422 {
			t.Errorf("past cycle: %d %s", r.Status, r.Body)
		}
	})
}

func TestConcurrentReordersMakeOneBillableItemPerCycle(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.Postgres, apitest.Options{})
	_, subID, _ := monthlyCoupon(t, e)
	before := counts(t, e)["billable_items"]
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := reorder(e, e.LiveKey, subID, nil)
			mu.Lock()
			defer mu.Unlock()
			switch r.Status {
			case 201:
				ok++
			case 422:
			default:
				t.Errorf("reorder: %d %s", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	// Each successful reorder ordered one distinct cycle with exactly one item.
	s := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions/" + subID + ".json", Key: e.LiveKey}).Map(t)
	items := map[string]bool{}
	ordered := 0
	for _, c := range s["subscription_cycles"].([]any) {
		m := c.(map[string]any)
		if m["ordered"] == true {
			ordered++
			if items[str(m["billable_item_id"])] {
				t.Errorf("two cycles share billable item %v", m["billable_item_id"])
			}
			items[str(m["billable_item_id"])] = true
		}
	}
	if added := counts(t, e)["billable_items"] - before; added != ok || ordered != ok+1 {
		t.Errorf("%d reorders succeeded, %d billable items added, %d cycles ordered", ok, added, ordered)
	}
}

// TestCancellationByThe10th checks the deadline at the instants that break naive code.
func TestCancellationByThe10th(t *testing.T) {
	t.Parallel()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	cases := []struct {
		name string
		at   time.Time
		ends string
	}{
		{"10th 23:59:59 Berlin", time.Date(2026, 6, 10, 23, 59, 59, 0, berlin), "2026-06-30T21:59:59Z"},
		{"11th 00:00:00 Berlin", time.Date(2026, 6, 11, 0, 0, 0, 0, berlin), "2026-07-31T21:59:59Z"},
		{"10th 23:59:59 UTC (11th in Berlin)", time.Date(2026, 6, 10, 23, 59, 59, 0, time.UTC), "2026-07-31T21:59:59Z"},
		{"10th 21:59:59 UTC (10th in Berlin)", time.Date(2026, 6, 10, 21, 59, 59, 0, time.UTC), "2026-06-30T21:59:59Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := apitest.New(t, store.SQLite, apitest.Options{Now: time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)})
			_, subID, _ := monthlyCoupon(t, e)
			e.Clock.Set(c.at)
			path := "/v9/ticketing/subscriptions/" + subID + ".json"
			s := e.Must(200, apitest.Req{Method: "DELETE", Path: path, Key: e.LiveKey}).Map(t)
			if s["ends_at"] != c.ends || s["cancelled_at"] == nil {
				t.Fatalf("ends_at %v, want %s", s["ends_at"], c.ends)
			}
			// Cancelling twice is harmless and keeps the first end.
			e.Clock.Advance(40 * 24 * time.Hour)
			if again := e.Must(200, apitest.Req{Method: "DELETE", Path: path, Key: e.LiveKey}).Map(t); again["ends_at"] != c.ends {
				t.Errorf("second cancel moved the end to %v", again["ends_at"])
			}
		})
	}
}

func TestNoReorderOrReactivationBeyondTheEnd(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Now: time.Date(2026, 6, 5, 9, 0, 0, 0, time.UTC)}, func(t *testing.T, e *apitest.Env) {
		cid, subID, june := monthlyCoupon(t, e)
		e.Must(200, apitest.Req{Method: "DELETE", Path: "/v9/ticketing/subscriptions/" + subID + ".json", Key: e.LiveKey})
		if r := reorder(e, e.LiveKey, subID, nil); r.Status != 422 || r.Map(t)["code"] != "subscription_cancelled" {
			t.Errorf("reorder after cancel: %d %s", r.Status, r.Body)
		}
		if r := activate(e, "v9", cid, map[string]any{"reactivation_key": june["coupon_reactivation_key"]}); r.Status != 422 {
			t.Errorf("reactivation after cancel: %d %s", r.Status, r.Body)
		}
		// The June ticket stays valid and fetchable.
		if again := ticket(t, e, str(june["id"])); again["valid"] != true {
			t.Errorf("June ticket after cancel: %v", again["valid"])
		}
		sub := coupon(t, e, "v9", cid)["subscription"].(map[string]any)
		if sub["coupon_reactivatable"] != false || sub["subscription_reorderable"] != false || sub["next_unordered_subscription_cycle"] != nil {
			t.Errorf("cancelled subscription: %v", sub)
		}
	})
}

// TestReorderHorizon: reorders stop three months ahead of the current month
// (issue 14: 20 reorders ordered a subscription until 2028) with a 422
// naming the reason, nothing billed; a month later one more is allowed.
func TestReorderHorizon(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		_, subID, _ := monthlyCoupon(t, e) // June 2026 (clock: 15 June)
		for i := 0; i < 3; i++ {           // July, August, September
			e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/subscriptions/" + subID + "/reorder.json", Key: e.LiveKey})
		}
		before := counts(t, e)
		sub := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions/" + subID + ".json", Key: e.LiveKey}).Map(t)
		if sub["subscription_reorderable"] != false || sub["ordered_until"] != "2026-09-30T21:59:59Z" {
			t.Errorf("after three reorders: reorderable %v, ordered_until %v", sub["subscription_reorderable"], sub["ordered_until"])
		}
		next := sub["next_unordered_subscription_cycle"].(map[string]any)
		for _, body := range []any{nil, map[string]any{"subscription_cycle_id": next["id"]}} {
			r := reorder(e, e.LiveKey, subID, body)
			if m := r.Map(t); r.Status != 422 || m["code"] != "subscription_cycle_too_far_ahead" || !strings.Contains(str(m["message"]), "3 months ahead") {
				t.Errorf("October in June (%v): %d %s", body, r.Status, r.Body)
			}
		}
		if after := counts(t, e); !cmp.Equal(before, after) {
			t.Errorf("refused reorder wrote rows: %v → %v", before, after)
		}
		e.Clock.Set(time.Date(2026, 6, 30, 22, 0, 0, 0, time.UTC)) // 1 July, Berlin
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/subscriptions/" + subID + "/reorder.json", Key: e.LiveKey})
		e.Must(422, apitest.Req{Method: "POST", Path: "/v9/ticketing/subscriptions/" + subID + "/reorder.json", Key: e.LiveKey})
	})
}

// TestCancelCountsOnce: farebox_events_total{event="subscription_cancelled"}
// counts the transition, not the requests: five concurrent DELETEs and two
// later ones of one subscription count 1, on both engines.
func TestCancelCountsOnce(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Now: time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)}, func(t *testing.T, e *apitest.Env) {
		_, subID, _ := monthlyCoupon(t, e)
		path := "/v9/ticketing/subscriptions/" + subID + ".json"
		var wg sync.WaitGroup
		for i := 0; i < 5; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := e.Do(apitest.Req{Method: "DELETE", Path: path, Key: e.LiveKey}); r.Status != 200 {
					t.Errorf("DELETE: %d %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		e.Must(200, apitest.Req{Method: "DELETE", Path: path, Key: e.LiveKey})
		e.Must(200, apitest.Req{Method: "DELETE", Path: path, Key: e.LiveKey})
		metrics := string(e.Must(200, apitest.Req{Method: "GET", Path: "/metrics"}).Body)
		const want = `farebox_events_total{environment="live",event="subscription_cancelled"} 1` + "\n"
		if !strings.Contains(metrics, want) {
			i := strings.Index(metrics, `event="subscription_cancelled"`)
			t.Errorf("want %q; /metrics has %q", want, metrics[max(0, i-60):min(len(metrics), i+40)])
		}
	})
}

// TestReactivationRepeatEveryVersion: a client whose 201 was lost repeats its
// reactivation verbatim and gets the same ticket on every version; before v9
// another medium with a used key stays refused (409), and no repeat makes a
// second ticket.
func TestReactivationRepeatEveryVersion(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		max, erika := medium("Max", "Mustermann", "1990-01-01"), medium("Erika", "Musterfrau", "1985-03-07")
		// The same medium with its keys in another order is the same medium.
		maxReordered := map[string]any{"photo_id_lite": map[string]any{"birth_date": "1990-01-01", "last_name": "Mustermann", "first_name": "Max"}}
		for _, v := range []string{"v6", "v7", "v8", "v9"} {
			for _, android := range []bool{true, false} {
				cid, subID, june := monthlyCoupon(t, e)
				if r := reorder(e, e.LiveKey, subID, nil); r.Status != 201 {
					t.Fatalf("reorder: %d %s", r.Status, r.Body)
				}
				key := str(june["coupon_reactivation_key"])
				// Android sends only the key; iOS sends the key with the (prefilled) medium.
				body := map[string]any{"reactivation_key": key}
				repeats := []map[string]any{body}
				if !android {
					body = map[string]any{"reactivation_key": key, "identification_medium": max}
					repeats = []map[string]any{body, {"reactivation_key": key, "identification_medium": maxReordered}, {"reactivation_key": key}}
				}
				first := mustActivate(t, e, v, cid, body)
				tickets := counts(t, e)["tickets"]
				for i, rb := range repeats {
					for n := 0; n < 2; n++ {
						if again := mustActivate(t, e, v, cid, rb); again != first {
							t.Errorf("%s android=%v repeat %d.%d: ticket %s, want %s", v, android, i, n, again, first)
						}
					}
				}
				r := activate(e, v, cid, map[string]any{"reactivation_key": key, "identification_medium": erika})
				switch {
				case v == "v9" && (r.Status != 201 || str(r.Map(t)["ticket_id"]) != first):
					t.Errorf("v9 repeat with another medium: %d %s", r.Status, r.Body)
				case v != "v9" && (r.Status != 409 || r.Map(t)["code"] != "reactivation_key_used" ||
					!strings.Contains(str(r.Map(t)["message"]), "identification_medium")):
					t.Errorf("%s repeat with another medium: %d %s", v, r.Status, r.Body)
				}
				if n := counts(t, e)["tickets"]; n != tickets {
					t.Errorf("%s: repeats made %d tickets", v, n-tickets)
				}
				if tk := ticket(t, e, first); tk["valid_from"] != "2026-06-30T22:00:00Z" {
					t.Errorf("%s: the reactivated ticket starts %v", v, tk["valid_from"])
				}
			}
		}
	})
}
