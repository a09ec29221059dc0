package httpapi_test

import (
	"testing"

	"github.com/farebox/farebox/internal/apitest"
)

func TestRestore(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["month/adult"], ids["day/adult"])
		single, month, day := str(o.Coupons[0]["id"]), str(o.Coupons[1]["id"]), str(o.Coupons[2]["id"])
		oldSingle := ticket(t, e, mustActivate(t, e, "v9", single, map[string]any{"identification_medium": medium("Max", "M", "1990-01-01"), "activation_start_datetime": "2026-06-16T08:00:00Z"}))
		oldMonth := ticket(t, e, mustActivate(t, e, "v9", month, map[string]any{"identification_medium": medium("Erika", "M", "1985-05-05"), "tariff_settings": map[string]any{"german_postal_code": "20095"}}))
		path := "/v9/ticketing/orders/" + o.OrderID + "/restore.json"
		before := counts(t, e)
		// A wrong secret answers like an unknown order; a not activated coupon is refused.
		wrong := e.Must(404, apitest.Req{Method: "POST", Path: path, Key: e.LiveKey, Body: map[string]any{"restore_secret": "farebox-restore-secret-x", "coupon_ids": []string{single}}})
		unknown := e.Must(404, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders/farebox-order-nope/restore.json", Key: e.LiveKey, Body: map[string]any{"restore_secret": o.RestoreSecret, "coupon_ids": []string{single}}})
		if wrong.Map(t)["message"] != unknown.Map(t)["message"] {
			t.Errorf("wrong secret distinguishable: %s vs %s", wrong.Body, unknown.Body)
		}
		_, otherKey := e.NewAccount("Other", "live")
		e.Must(404, apitest.Req{Method: "POST", Path: path, Key: otherKey, Body: map[string]any{"restore_secret": o.RestoreSecret, "coupon_ids": []string{single}}})
		r := e.Must(422, apitest.Req{Method: "POST", Path: path, Key: e.LiveKey, Body: map[string]any{"restore_secret": o.RestoreSecret, "coupon_ids": []string{single, day}}})
		if d := r.Map(t)["details"].([]any); len(d) != 1 || d[0].(map[string]any)["field"] != "/coupon_ids/1" {
			t.Errorf("not activated coupon: %s", r.Body)
		}
		if after := counts(t, e); after["coupons"] != before["coupons"] {
			t.Error("a refused restore created coupons")
		}

		r = e.Must(201, apitest.Req{Method: "POST", Path: path, Key: e.LiveKey, Body: map[string]any{"restore_secret": o.RestoreSecret, "coupon_ids": []string{single, month}}})
		e.MustMatch("restore", r.Body, apitest.RObj(apitest.Shape{"coupons": apitest.RArr(apitest.SDKCoupon), "order_id": apitest.R("string"), "environment": apitest.R("string")}))
		var res orderResp
		r.JSON(t, &res)
		if len(res.Coupons) != 2 || res.Coupons[0]["original_coupon_id"] != single || res.Coupons[1]["original_coupon_id"] != month || res.RestoreSecret != "" {
			t.Fatalf("restored coupons: %s", r.Body)
		}
		newSingle, newMonth := str(res.Coupons[0]["id"]), str(res.Coupons[1]["id"])
		// The partner reads the links with its key (keyless reads do not
		// get them: TestRestoreCutsOffTheOldDevice).
		keyed := func(id string) map[string]any {
			return e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/coupons/" + id + ".json", Key: e.LiveKey}).Map(t)
		}
		if c := keyed(single); c["restored_coupon_id"] != newSingle {
			t.Errorf("old coupon restored_coupon_id = %v", c["restored_coupon_id"])
		}
		oldSub := keyed(month)["subscription"].(map[string]any)
		newSub := res.Coupons[1]["subscription"].(map[string]any)
		if oldSub["restored_subscription_id"] != newSub["id"] || newSub["original_subscription_id"] != oldSub["id"] {
			t.Errorf("subscription links: old %v new %v", oldSub["restored_subscription_id"], newSub["original_subscription_id"])
		}
		// The old subscription cannot be reordered any more (its code is
		// among the reorder's x-error-codes: apitest checks every answer).
		if r := reorder(e, e.LiveKey, str(oldSub["id"]), nil); r.Status != 422 || r.Map(t)["code"] != "subscription_restored" {
			t.Errorf("reorder of the restored subscription: %d %s", r.Status, r.Body)
		}
		// The SDK activates a restored coupon with {} and gets the original validity and medium.
		for _, c := range []struct {
			id  string
			old map[string]any
		}{{newSingle, oldSingle}, {newMonth, oldMonth}} {
			nt := ticket(t, e, mustActivate(t, e, "v9", c.id, `{}`))
			if nt["valid_from"] != c.old["valid_from"] || nt["valid_until"] != c.old["valid_until"] || nt["id"] == c.old["id"] {
				t.Errorf("restored ticket validity %v–%v, original %v–%v", nt["valid_from"], nt["valid_until"], c.old["valid_from"], c.old["valid_until"])
			}
			om := c.old["ticket"].(map[string]any)["properties"].(map[string]any)["identification_medium"]
			nm := nt["ticket"].(map[string]any)["properties"].(map[string]any)["identification_medium"]
			if str(nm.(map[string]any)["photo_id_lite"].(map[string]any)["first_name"]) != str(om.(map[string]any)["photo_id_lite"].(map[string]any)["first_name"]) {
				t.Errorf("restored medium differs")
			}
			if ot := ticket(t, e, str(c.old["id"])); ot["valid"] != false {
				t.Errorf("old ticket still valid")
			}
		}
		// The old coupon cannot be activated any more; billable items are untouched.
		if r := activate(e, "v9", single, map[string]any{"identification_medium": medium("Max", "M", "1990-01-01")}); r.Status != 422 {
			t.Errorf("old coupon activation: %d", r.Status)
		}
		if after := counts(t, e); after["billable_items"] != before["billable_items"] {
			t.Errorf("restore changed billable items: %d → %d", before["billable_items"], after["billable_items"])
		}
		// Restoring twice is refused.
		e.Must(422, apitest.Req{Method: "POST", Path: path, Key: e.LiveKey, Body: map[string]any{"restore_secret": o.RestoreSecret, "coupon_ids": []string{single}}})
	})
}
