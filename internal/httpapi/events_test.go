package httpapi_test

import (
	"net/url"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/google/go-cmp/cmp"
)

// TestEventsEndpoint: GET /v1/events.json answers the caller's events in
// the documented shape (the response is validated against the OpenAPI
// file), the object of coupon.activated is what GET coupon returns, the
// cursor pages, and bad parameters are a 400 naming the parameter.
func TestEventsEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o, cid := orderFirst(t, e, e.LiveKey, ids["single/adult"], ids["month/adult"])
		mustActivate(t, e, "v9", cid, map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")})

		list := func(key, query string) map[string]any {
			t.Helper()
			return e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json" + query, Key: key}).Map(t)
		}
		l := list(e.LiveKey, "")
		data := l["data"].([]any)
		if len(data) != 3 || l["has_more"] != false || l["object"] != "list" {
			t.Fatalf("events: %v", l)
		}
		types := []string{}
		for _, d := range data {
			types = append(types, d.(map[string]any)["type"].(string))
		}
		if d := cmp.Diff([]string{"ticket.issued", "coupon.activated", "order.created"}, types); d != "" {
			t.Errorf("types (-want +got):\n%s", d)
		}
		activated := data[1].(map[string]any)["data"].(map[string]any)
		// The partner's keyed GET (a keyless one leaves out restored_coupon_id).
		get := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/coupons/" + cid + ".json", Key: e.LiveKey}).Map(t)
		if d := cmp.Diff(get, activated["object"]); d != "" || activated["object_id"] != cid {
			t.Errorf("coupon.activated object differs from GET coupon (-get +event):\n%s", d)
		}
		created := data[2].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
		if created["order_id"] != o.OrderID || created["restore_secret"] != nil {
			t.Errorf("order.created object: %v", created)
		}

		first := list(e.LiveKey, "?limit=1")
		newest := first["data"].([]any)[0].(map[string]any)["id"].(string)
		next := list(e.LiveKey, "?limit=2&starting_after="+url.QueryEscape(newest))
		if first["has_more"] != true || len(next["data"].([]any)) != 2 || next["has_more"] != false {
			t.Errorf("pages: %v / %v", first, next)
		}
		if l := list(e.LiveKey, "?type=order.created"); len(l["data"].([]any)) != 1 {
			t.Errorf("type filter: %v", l)
		}

		wantListGuards(t, e, "/v1/events.json", map[string]string{
			"?limit=0":                              "limit",
			"?limit=abc":                            "limit",
			"?type=coupon.deleted":                  "type",
			"?created%5Bgte%5D=yesterday":           "created[gte]",
			"?starting_after=farebox-event-nope":    "starting_after",
			"?ending_before=" + newest:              "",
			"?created%5Bgt%5D=2026-06-01T00:00:00Z": "created[gt]",
			"?limit=1&limit=2":                      "limit",
		})
	})
}
