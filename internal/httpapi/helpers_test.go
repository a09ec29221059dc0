package httpapi_test

import (
	"context"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// orderResp is the part of an Order the tests read.
type orderResp struct {
	OrderID       string           `json:"order_id"`
	RestoreSecret string           `json:"restore_secret"`
	Environment   string           `json:"environment"`
	CouponID      string           `json:"coupon_id"`
	Coupons       []map[string]any `json:"coupons"`
}

// split parts the order's coupons into those of subscriptions and the
// others, each in order.
func (o orderResp) split() (subscribed, others []map[string]any) {
	for _, c := range o.Coupons {
		if c["subscription"] != nil {
			subscribed = append(subscribed, c)
		} else {
			others = append(others, c)
		}
	}
	return subscribed, others
}

// order places an order with key and returns it.
func order(t testing.TB, e *apitest.Env, key string, productIDs ...string) orderResp {
	t.Helper()
	r := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: key,
		Body: map[string]any{"product_ids": productIDs}})
	var o orderResp
	r.JSON(t, &o)
	return o
}

// orderFirst orders productIDs with key and returns the order and its
// first coupon's id.
func orderFirst(t testing.TB, e *apitest.Env, key string, productIDs ...string) (orderResp, string) {
	t.Helper()
	o := order(t, e, key, productIDs...)
	return o, str(o.Coupons[0]["id"])
}

// activate posts body to a coupon's activate endpoint under version v and returns the response.
func activate(e *apitest.Env, v, couponID string, body any) *apitest.Resp {
	return e.Do(apitest.Req{Method: "POST", Path: "/" + v + "/ticketing/coupons/" + couponID + "/activate.json", Body: body})
}

// mustActivate activates and returns the ticket id.
func mustActivate(t *testing.T, e *apitest.Env, v, couponID string, body any) string {
	t.Helper()
	r := activate(e, v, couponID, body)
	if r.Status != 201 {
		t.Fatalf("activate %s: %d %s", couponID, r.Status, r.Body)
	}
	return r.Map(t)["ticket_id"].(string)
}

// ticket fetches a ticket the way the SDKs do (PATCH, no body).
func ticket(t *testing.T, e *apitest.Env, id string) map[string]any {
	t.Helper()
	r := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + id + ".json"})
	e.MustMatch("ticket", r.Body, apitest.SDKTicket)
	return r.Map(t)
}

// coupon fetches a coupon without a key.
func coupon(t *testing.T, e *apitest.Env, v, id string) map[string]any {
	t.Helper()
	r := e.Must(200, apitest.Req{Method: "GET", Path: "/" + v + "/ticketing/coupons/" + id + ".json"})
	e.MustMatch("coupon", r.Body, apitest.SDKCoupon)
	return r.Map(t)
}

// counts returns the row counts of the ticketing tables.
func counts(t testing.TB, e *apitest.Env) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tbl := range []string{"orders", "coupons", "billable_items", "subscriptions", "subscription_cycles", "tickets"} {
		n, err := e.Store.Read().CountRows(context.Background(), tbl)
		if err != nil {
			t.Fatal(err)
		}
		out[tbl] = n
	}
	return out
}

func medium(first, last, birth string) map[string]any {
	return map[string]any{"photo_id_lite": map[string]any{"first_name": first, "last_name": last, "birth_date": birth}}
}

func str(v any) string { s, _ := v.(string); return s }

// forEachEngineStore runs f in parallel subtests, each with a fresh store
// on one engine, for tests that run several instances on one database.
func forEachEngineStore(t *testing.T, f func(t *testing.T, s *store.Store)) {
	t.Helper()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		f(t, storetest.Open(t, engine))
	})
}
