package httpapi_test

import (
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
)

// TestIDsOfTheWrongKindAndOversizedBodies: an id of another kind is as
// unknown as a made-up one, and an oversized body is a 413 that writes nothing.
func TestIDsOfTheWrongKindAndOversizedBodies(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	ids := productIDs(t, e)
	o, cid := orderFirst(t, e, e.LiveKey, ids["month/adult"])
	subID := str(o.Coupons[0]["subscription"].(map[string]any)["id"])
	tid := mustActivate(t, e, "v9", cid, map[string]any{"identification_medium": medium("A", "B", "1990-01-01"), "tariff_settings": map[string]any{"german_postal_code": "12345"}})
	for _, c := range []apitest.Req{
		{Method: "GET", Path: "/v9/ticketing/coupons/" + tid + ".json"},
		{Method: "GET", Path: "/v9/ticketing/coupons/" + o.OrderID + ".json"},
		{Method: "PATCH", Path: "/v9/ticketing/tickets/" + cid + ".json"},
		{Method: "GET", Path: "/v9/ticketing/orders/" + cid + ".json", Key: e.LiveKey},
		{Method: "GET", Path: "/v9/ticketing/subscriptions/" + o.OrderID + ".json", Key: e.LiveKey},
		{Method: "POST", Path: "/v9/ticketing/subscriptions/" + cid + "/reorder.json", Key: e.LiveKey},
		{Method: "GET", Path: "/v9/ticketing/products/" + ids["month/adult"][:20] + ".json"},
		{Method: "POST", Path: "/v9/ticketing/coupons/" + subID + "/activate.json", Body: `{}`},
	} {
		if r := e.Do(c); r.Status != 404 || !strings.HasSuffix(str(r.Map(t)["code"]), "not_found") {
			t.Errorf("%s %s: %d %s", c.Method, c.Path, r.Status, r.Body)
		}
	}
	before := counts(t, e)
	big := `{"product_ids":["` + strings.Repeat("x", 70_000) + `"]}`
	r := e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey, Body: big})
	if r.Status != 413 || r.Map(t)["code"] != "body_too_large" {
		t.Errorf("oversized order: %d %s", r.Status, r.Body)
	}
	r = e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + cid + "/activate.json", Body: `{"identification_medium":"` + strings.Repeat("x", 70_000) + `"}`})
	if r.Status != 413 {
		t.Errorf("oversized activation: %d", r.Status)
	}
	if after := counts(t, e); after["orders"] != before["orders"] {
		t.Error("oversized order written")
	}
}
