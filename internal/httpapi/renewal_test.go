package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/clock"
)

// TestRenewalOverHTTP: the SDK flow around a month turn. After the partner
// orders the next cycle, the coupon is not reactivatable and a reactivation
// answers the exact message the SDKs know until 00:00 Berlin seven days
// before the cycle; from then on the device obtains the cycle's ticket,
// valid from 00:00 on the 1st. Its inspection barcode says "not yet valid"
// at 23:59:59 on the last day and "valid" at 00:00:00, with no request in
// between. Month turns: the 31st → 1st, December → January, both DST months,
// and the last cycle of a cancelled subscription.
func TestRenewalOverHTTP(t *testing.T) {
	for _, c := range []struct {
		name       string
		activation time.Time
		cycle      time.Time // 00:00 Berlin on the 1st of the next cycle
		opens      time.Time // 00:00 Berlin seven days before
		cancel     bool      // cancel after the reorder (by the 10th): the ordered cycle is the last
	}{
		{"31 August → 1 September", bln(2026, 8, 3, 9), bln(2026, 9, 1, 0), bln(2026, 8, 25, 0), false},
		{"December → January", bln(2026, 12, 1, 9), bln(2027, 1, 1, 0), bln(2026, 12, 25, 0), false},
		{"31 March → 1 April across the start of summer time", bln(2027, 3, 3, 9), bln(2027, 4, 1, 0), bln(2027, 3, 25, 0), false},
		{"31 October → 1 November across the end of summer time", bln(2026, 10, 3, 9), bln(2026, 11, 1, 0), bln(2026, 10, 25, 0), false},
		{"the last cycle of a cancelled subscription", bln(2027, 1, 2, 9), bln(2027, 2, 1, 0), bln(2027, 1, 25, 0), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			apitest.ForEachEngine(t, apitest.Options{Now: c.activation, Configure: withWallets(t, false)}, func(t *testing.T, e *apitest.Env) {
				cid, subID, first := monthlyCoupon(t, e)
				key := str(first["coupon_reactivation_key"])
				if r := reorder(e, e.LiveKey, subID, nil); r.Status != 201 {
					t.Fatalf("reorder: %d %s", r.Status, r.Body)
				}
				if c.cancel {
					e.Must(200, apitest.Req{Method: "DELETE", Path: "/v9/ticketing/subscriptions/" + subID + ".json", Key: e.LiveKey})
				}
				e.Clock.Set(c.opens.Add(-time.Second))
				if sub := coupon(t, e, "v9", cid)["subscription"].(map[string]any); sub["coupon_reactivatable"] != false {
					t.Errorf("coupon_reactivatable a second before the window: %v", sub["coupon_reactivatable"])
				}
				tickets := counts(t, e)["tickets"]
				r := activate(e, "v9", cid, map[string]any{"reactivation_key": key})
				if m := r.Map(t); r.Status != 422 || m["message"] != "The current subscription cycle was not ordered yet" ||
					m["code"] != "subscription_cycle_not_ordered" || !strings.Contains(string(r.Body), "can be obtained from "+clock.Timestamp(c.opens)) {
					t.Fatalf("a second before the window: %d %s", r.Status, r.Body)
				}
				if n := counts(t, e)["tickets"]; n != tickets {
					t.Errorf("the refused reactivation made %d tickets", n-tickets)
				}

				e.Clock.Set(c.opens)
				sub := coupon(t, e, "v9", cid)["subscription"].(map[string]any)
				if sub["coupon_reactivatable"] != true {
					t.Fatalf("coupon_reactivatable when the window opens: %v", sub)
				}
				next := ticket(t, e, mustActivate(t, e, "v9", cid, map[string]any{"reactivation_key": key}))
				until := c.cycle.In(clock.Berlin).AddDate(0, 1, 0).Add(-time.Second)
				if next["valid_from"] != clock.Timestamp(c.cycle) || next["valid_until"] != clock.Timestamp(until) {
					t.Errorf("ticket %v – %v; want %s – %s", next["valid_from"], next["valid_until"], clock.Timestamp(c.cycle), clock.Timestamp(until))
				}
				if first["valid_until"] != clock.Timestamp(c.cycle.Add(-time.Second)) {
					t.Errorf("first ticket until %v; want the second before %s", first["valid_until"], clock.Timestamp(c.cycle))
				}
				kr, err := barcode.ParseKeySet(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/inspection/keys.json"}).Body)
				if err != nil {
					t.Fatal(err)
				}
				payload, old := ticketPayload(t, next), ticketPayload(t, first)
				for _, at := range []struct {
					t          time.Time
					next, prev string
				}{
					{c.cycle.Add(-time.Second), barcode.StateNotYet, barcode.StateValid},
					{c.cycle, barcode.StateValid, barcode.StateExpired},
				} {
					if got := barcode.Inspect(payload, kr, at.t).State; got != at.next {
						t.Errorf("new ticket at %s: %s, want %s", clock.Timestamp(at.t), got, at.next)
					}
					if got := barcode.Inspect(old, kr, at.t).State; got != at.prev {
						t.Errorf("previous ticket at %s: %s, want %s", clock.Timestamp(at.t), got, at.prev)
					}
				}

				// The cycle after: not before its order and its window; for the
				// cancelled subscription never, and no cycle beyond the end.
				nextKey := str(next["coupon_reactivation_key"])
				e.Clock.Set(c.cycle.In(clock.Berlin).AddDate(0, 1, -7))
				r = activate(e, "v9", cid, map[string]any{"reactivation_key": nextKey})
				s := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions/" + subID + ".json", Key: e.LiveKey}).Map(t)
				if c.cancel {
					if r.Status != 422 || r.Map(t)["code"] != "subscription_ended" || len(s["subscription_cycles"].([]any)) != 2 ||
						s["ordered_until"] != clock.Timestamp(until) {
						t.Errorf("after the last cycle: %d %s; subscription %v", r.Status, r.Body, s)
					}
				} else if r.Status != 422 || r.Map(t)["message"] != "The current subscription cycle was not ordered yet" {
					t.Errorf("the following cycle, not ordered: %d %s", r.Status, r.Body)
				}
			})
		})
	}
}

// bln is a wall-clock hour in Berlin.
func bln(y int, m time.Month, d, h int) time.Time {
	return time.Date(y, m, d, h, 0, 0, 0, clock.Berlin)
}
