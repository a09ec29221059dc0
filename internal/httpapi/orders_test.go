package httpapi_test

import (
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

func TestOrderingCreatesCouponsItemsAndSubscriptions(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		before := counts(t, e)
		r := e.Must(201, apitest.Req{Method: "POST", Path: "/v2/ticketing/orders.json", Key: e.LiveKey,
			Body: map[string]any{"product_ids": []string{ids["single/adult"], ids["single/adult"], ids["month/adult"]}, "optional_order_reference": "user-42"}})
		var o orderResp
		r.JSON(t, &o)
		if len(o.Coupons) != 3 || o.Environment != "live" || o.CouponID != str(o.Coupons[0]["id"]) ||
			!strings.HasPrefix(o.OrderID, "farebox-order-") || !strings.HasPrefix(o.RestoreSecret, "farebox-restore-secret-") {
			t.Fatalf("order: %s", r.Body)
		}
		if r.Map(t)["optional_order_reference"] != "user-42" {
			t.Error("order reference lost")
		}
		seen := map[string]bool{}
		for i, c := range o.Coupons {
			id := str(c["id"])
			if !strings.HasPrefix(id, "farebox-coupon-") || seen[id] || c["activated"] != false || c["environment"] != "live" {
				t.Errorf("coupon %d: %v", i, c)
			}
			seen[id] = true
		}
		for _, c := range o.Coupons[:2] {
			if !strings.HasPrefix(str(c["billable_item_id"]), "farebox-billable-") || c["subscription"] != nil {
				t.Errorf("single coupon: billable %v subscription %v", c["billable_item_id"], c["subscription"])
			}
			if c["product"].(map[string]any)["id"] != ids["single/adult"] || c["area"].(map[string]any)["type"] != "Feature" {
				t.Errorf("single coupon product/area: %v", c["product"])
			}
		}
		sub := o.Coupons[2]["subscription"].(map[string]any)
		cur := sub["current_subscription_cycle"].(map[string]any)
		if o.Coupons[2]["billable_item_id"] != nil || sub["active"] != false || sub["activate"] != false ||
			cur["ordered"] != true || cur["coupon_activated"] != false || !strings.HasPrefix(str(cur["billable_item_id"]), "farebox-billable-") ||
			cur["product_id"] != ids["month/adult"] || sub["coupon_reactivatable"] != false {
			t.Errorf("subscription coupon: %v", sub)
		}
		after := counts(t, e)
		want := map[string]int{"orders": 1, "coupons": 3, "billable_items": 3, "subscriptions": 1, "subscription_cycles": 1, "tickets": 0}
		for k, n := range want {
			if after[k]-before[k] != n {
				t.Errorf("%s: +%d rows, want +%d", k, after[k]-before[k], n)
			}
		}
		// The owner reads the order back; another account and the test key see a 404.
		got := e.Must(200, apitest.Req{Method: "GET", Path: "/v6/ticketing/orders/" + o.OrderID + ".json", Key: e.LiveKey})
		var again orderResp
		got.JSON(t, &again)
		if again.OrderID != o.OrderID || len(again.Coupons) != 3 || str(again.Coupons[2]["id"]) != str(o.Coupons[2]["id"]) {
			t.Errorf("GET order: %s", got.Body)
		}
		_, otherKey := e.NewAccount("Other", "live")
		for _, key := range []string{otherKey, e.TestKey} {
			r := e.Must(404, apitest.Req{Method: "GET", Path: "/v6/ticketing/orders/" + o.OrderID + ".json", Key: key})
			if m := r.Map(t); m["code"] != "order_not_found" {
				t.Errorf("foreign order: %v", m)
			}
		}
		e.Must(404, apitest.Req{Method: "GET", Path: "/v6/ticketing/orders/farebox-order-00000000-0000-4000-8000-000000000000.json", Key: e.LiveKey})
		// Test keys create test coupons.
		to := order(t, e, e.TestKey, ids["single/child"])
		if to.Environment != "test" || to.Coupons[0]["environment"] != "test" {
			t.Errorf("test order: %v", to)
		}
	})
}

func TestOrderBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		var job string
		for _, p := range e.Products.Catalog().File().Products {
			if p.Restricted {
				job = p.ID
			}
		}
		many := make([]string, 101)
		for i := range many {
			many[i] = ids["single/adult"]
		}
		before := counts(t, e)
		cases := []struct {
			name   string
			body   any
			status int
			code   string
			fields []string
		}{
			{"missing product_ids", `{}`, 422, "invalid_product_ids", []string{"/product_ids"}},
			{"empty", `{"product_ids":[]}`, 422, "invalid_product_ids", []string{"/product_ids"}},
			{"too many", map[string]any{"product_ids": many}, 422, "invalid_product_ids", []string{"/product_ids"}},
			{"not an array", `{"product_ids":"x"}`, 400, "wrong_type", []string{"/product_ids"}},
			{"number id", `{"product_ids":[1]}`, 400, "wrong_type", []string{"/product_ids"}},
			{"extra key", `{"product_ids":["` + ids["single/adult"] + `"],"coupon":1}`, 400, "unknown_field", []string{"/coupon"}},
			{"reference not a string", `{"product_ids":["` + ids["single/adult"] + `"],"optional_order_reference":5}`, 400, "wrong_type", []string{"/optional_order_reference"}},
			{"reference too long", map[string]any{"product_ids": []string{ids["single/adult"]}, "optional_order_reference": strings.Repeat("r", 256)}, 422, "invalid_order_reference", []string{"/optional_order_reference"}},
			{"unknown, job ticket and a valid one", map[string]any{"product_ids": []string{ids["single/adult"], "farebox-product-nope", job}}, 422, "invalid_product_ids", []string{"/product_ids/1", "/product_ids/2"}},
			{"malformed", `{"product_ids":[`, 400, "malformed_json", nil},
		}
		for _, c := range cases {
			r := e.Do(apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: e.LiveKey, Body: c.body})
			m := r.Map(t)
			if r.Status != c.status || m["code"] != c.code {
				t.Errorf("%s: %d %v, want %d %s", c.name, r.Status, m, c.status, c.code)
				continue
			}
			var fields []string
			for _, d := range m["details"].([]any) {
				fields = append(fields, d.(map[string]any)["field"].(string))
			}
			if c.fields != nil && !cmp.Equal(fields, c.fields) {
				t.Errorf("%s: details %v, want %v", c.name, fields, c.fields)
			}
		}
		if after := counts(t, e); !cmp.Equal(before, after) {
			t.Errorf("rejected orders wrote rows: %v → %v", before, after)
		}
		// The unknown-product message names the product.
		r := e.Do(apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: e.LiveKey, Body: map[string]any{"product_ids": []string{"farebox-product-nope"}}})
		if !strings.Contains(str(r.Map(t)["message"]), "farebox-product-nope") {
			t.Errorf("message does not name the product: %s", r.Body)
		}
	})
}

func TestOrderIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.Postgres, apitest.Options{})
	ids := productIDs(t, e)
	req := apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: e.LiveKey,
		Header: map[string]string{"Idempotency-Key": "booking-7"}, Body: map[string]any{"product_ids": []string{ids["day/adult"]}}}
	r1 := e.Must(201, req)
	r2 := e.Must(201, req)
	if string(r1.Body) != string(r2.Body) || r2.Header.Get("Idempotency-Replayed") != "true" {
		t.Fatalf("replay differs:\n%s\n%s", r1.Body, r2.Body)
	}
	if n := counts(t, e)["orders"]; n != 1 {
		t.Errorf("%d orders for one idempotency key", n)
	}
}
