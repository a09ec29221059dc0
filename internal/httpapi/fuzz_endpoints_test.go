package httpapi_test

import (
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/google/go-cmp/cmp"
)

// FuzzJSONEndpoints sends arbitrary bodies to every JSON endpoint that
// writes: no input may cause a 5xx or a panic, and a rejected request must
// write nothing. CI runs it for a bounded time on each engine (.ci/run,
// FAREBOX_FUZZ_ENGINE); the seeds run with every `go test`.
func FuzzJSONEndpoints(f *testing.F) {
	seeds := []string{
		`{"product_ids":["x"]}`, `{"product_ids":[]}`, `{}`, `[]`, `null`, `{"identification_medium":{"photo_id_lite":{"first_name":"A","last_name":"B","birth_date":"1990-01-01"}}}`,
		`{"identification_medium":{"photo_id_lite":{"first_name":"A","last_name":"B","birth_date":"1990-02-30"}},"activation_start_datetime":"2026-06-01T00:00:00+0200"}`,
		`{"tariff_settings":{"german_postal_code":"12345"}}`, `{"german_postal_code":7}`, `{"reactivation_key":""}`, `{"restore_secret":"x","coupon_ids":["y"]}`,
		`{"subscription_cycle_id":null}`, "{\"a\":\"\xff\"}", `{"product_ids":[` + strings.Repeat(`"x",`, 50) + `"x"]}`, `{"identification_medium":{"photo_id_lite":{"birth_date":1e400}}}`,
		`{"identification_medium":{"photo_id_lite":{"first_name":"A\u0000","last_name":"B","birth_date":"1990-01-01"}}}`, `{"tariff_settings":{"german_postal_code":"1234\udc00"}}`,
		`{"tariff_settings":{"german_postal_code":"12345"},"extra":1}`, `{"subscription_cycle_id":"\u0000"}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	e := apitest.New(f, apitest.FuzzEngine(f), apitest.Options{})
	ids := productIDs(f, e)
	o := order(f, e, e.LiveKey, ids["month/adult"], ids["single/adult"])
	monthCoupon, singleCoupon := str(o.Coupons[0]["id"]), str(o.Coupons[1]["id"])
	subID := str(o.Coupons[0]["subscription"].(map[string]any)["id"])
	endpoints := []struct {
		path string
		key  string
	}{
		{"/v9/ticketing/orders.json", e.LiveKey},
		{"/v9/ticketing/coupons/" + monthCoupon + "/activate.json", ""},
		{"/v9/ticketing/coupons/" + singleCoupon + "/activate.json", ""},
		{"/v9/ticketing/coupons/" + monthCoupon + "/tariff_settings.json", ""},
		{"/v9/ticketing/orders/" + o.OrderID + "/restore.json", e.LiveKey},
		{"/v9/ticketing/subscriptions/" + subID + "/reorder.json", e.LiveKey},
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		ep := endpoints[int(which)%len(endpoints)]
		e.T = t
		before := counts(t, e)
		r := e.Do(apitest.Req{Method: "POST", Path: ep.path, Key: ep.key, Body: body, NoValidate: true})
		if r.Status >= 500 {
			t.Fatalf("%s with %q: %d %s", ep.path, body, r.Status, r.Body)
		}
		if m := r.Map(t); r.Status >= 400 && (m["message"] == nil || m["code"] == nil) {
			t.Fatalf("error without message/code: %s", r.Body)
		}
		if r.Status >= 400 {
			if after := counts(t, e); !cmp.Equal(before, after) {
				t.Fatalf("%s rejected %q with %d but wrote rows: %v → %v", ep.path, body, r.Status, before, after)
			}
		}
	})
}
