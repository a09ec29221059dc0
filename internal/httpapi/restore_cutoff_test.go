package httpapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
)

// TestRestoreCutsOffTheOldDevice: a restore exists for the lost or stolen
// phone. Whoever holds the old phone reads the old coupon without a key,
// as the SDKs do; no keyless answer about the old coupon or its ticket may
// name the new coupon (its id is the capability that activates with {}),
// nor the new subscription or ticket: restored_coupon_id and
// restored_subscription_id are left out there, also in refusals, the
// tariff settings answer and the traveller pages. The partner reading the
// coupon with its own key still sees both; another account's key, the same
// account's key of the other environment or an invalid key see what a
// keyless reader sees. The SDKs decode restored_coupon_id as optional and
// act only on original_coupon_id (client-contract.md 3.4), which the new
// coupon still carries.
func TestRestoreCutsOffTheOldDevice(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, true)}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["single/adult"], ids["month/adult"])
		single, month := str(o.Coupons[0]["id"]), str(o.Coupons[1]["id"])
		oldSingle := ticket(t, e, mustActivate(t, e, "v9", single, map[string]any{"identification_medium": medium("Max", "M", "1990-01-01")}))
		oldMonth := ticket(t, e, mustActivate(t, e, "v9", month, map[string]any{"identification_medium": medium("Erika", "M", "1985-05-05"),
			"tariff_settings": map[string]any{"german_postal_code": "20095"}}))
		oldSub := str(coupon(t, e, "v9", month)["subscription"].(map[string]any)["id"])

		var res orderResp
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders/" + o.OrderID + "/restore.json", Key: e.LiveKey,
			Body: map[string]any{"restore_secret": o.RestoreSecret, "coupon_ids": []string{single, month}}}).JSON(t, &res)
		newSingle, newMonth := str(res.Coupons[0]["id"]), str(res.Coupons[1]["id"])
		newSub := str(res.Coupons[1]["subscription"].(map[string]any)["id"])
		// The new phone activates the restored coupons with {} (as the SDKs do).
		newSingleTicket := mustActivate(t, e, "v9", newSingle, `{}`)
		newMonthTicket := mustActivate(t, e, "v9", newMonth, `{}`)
		secrets := []string{newSingle, newMonth, newSub, newSingleTicket, newMonthTicket}
		leaks := func(what string, body []byte) {
			t.Helper()
			for _, s := range secrets {
				if strings.Contains(string(body), s) {
					t.Errorf("%s names %s (made by the restore): %.600s", what, s, body)
				}
			}
		}
		_, otherKey := e.NewAccount("Other", "live")
		for _, v := range []string{"v6", "v7", "v8", "v9"} {
			for _, c := range []struct{ old, restored, sub string }{{single, newSingle, ""}, {month, newMonth, newSub}} {
				// Keyless, another account's key, the test key of the same
				// account, an unknown key: nothing of the new records.
				for _, key := range []string{"", otherKey, e.TestKey, "fbx_live_not-a-key-at-all-0000000000"} {
					r := e.Must(200, apitest.Req{Method: "GET", Path: "/" + v + "/ticketing/coupons/" + c.old + ".json", Key: key})
					e.MustMatch("old coupon", r.Body, apitest.SDKCoupon)
					what := v + " GET old coupon with key " + key
					leaks(what, r.Body)
					m := r.Map(t)
					if _, ok := m["restored_coupon_id"]; ok || m["original_coupon_id"] != nil || m["activated"] != true {
						t.Errorf("%s: restored_coupon_id present (%v), original %v, activated %v", what, m["restored_coupon_id"], m["original_coupon_id"], m["activated"])
					}
					if c.sub != "" {
						sub := m["subscription"].(map[string]any)
						if _, ok := sub["restored_subscription_id"]; ok || sub["id"] != oldSub || sub["active"] != false {
							t.Errorf("%s: subscription %v (restored_subscription_id present: %v)", what, sub["id"], ok)
						}
					}
				}
				// The partner with its key sees the links.
				r := e.Must(200, apitest.Req{Method: "GET", Path: "/" + v + "/ticketing/coupons/" + c.old + ".json", Key: e.LiveKey})
				if !strings.Contains(strings.Join(r.Header.Values("Vary"), ","), "Authorization") {
					t.Errorf("%s: the coupon's answer depends on the key but says Vary %q", v, r.Header.Values("Vary"))
				}
				m := r.Map(t)
				if m["restored_coupon_id"] != c.restored {
					t.Errorf("%s keyed: restored_coupon_id %v, want %s", v, m["restored_coupon_id"], c.restored)
				}
				if c.sub != "" && m["subscription"].(map[string]any)["restored_subscription_id"] != c.sub {
					t.Errorf("%s keyed: restored_subscription_id %v, want %s", v, m["subscription"].(map[string]any)["restored_subscription_id"], c.sub)
				}
				// The new coupon names the old one, keyless: the SDK activates it with {}.
				if n := coupon(t, e, v, c.restored); n["original_coupon_id"] != c.old {
					t.Errorf("%s: new coupon's original_coupon_id %v", v, n["original_coupon_id"])
				}

				// Activating the old coupon is refused, without naming the new one.
				for _, body := range []any{`{}`, map[string]any{"identification_medium": medium("Max", "M", "1990-01-01")},
					map[string]any{"reactivation_key": str(oldMonth["coupon_reactivation_key"])}} {
					r := activate(e, v, c.old, body)
					if r.Status != 422 || r.Map(t)["code"] != "coupon_restored" || !strings.HasPrefix(str(r.Map(t)["message"]), "Ticket cannot be activated anymore") {
						t.Errorf("%s activate old coupon %v: %d %s", v, body, r.Status, r.Body)
					}
					leaks(v+" activation of the old coupon", r.Body)
				}
				// Tariff settings on the old coupon answer the coupon keyless.
				if c.sub != "" {
					r := e.Do(apitest.Req{Method: "POST", Path: "/" + v + "/ticketing/coupons/" + c.old + "/tariff_settings.json",
						Body: map[string]any{"tariff_settings": map[string]any{"german_postal_code": "20095"}}})
					leaks(v+" tariff settings of the old coupon", r.Body)
					if r.Status == 200 {
						if _, ok := r.Map(t)["restored_coupon_id"]; ok {
							t.Errorf("%s tariff settings answer: restored_coupon_id present", v)
						}
					}
				}
			}
			// The old tickets (what the old phone polls) and their wallet passes.
			for _, tk := range []map[string]any{oldSingle, oldMonth} {
				r := e.Must(200, apitest.Req{Method: "PATCH", Path: "/" + v + "/ticketing/tickets/" + str(tk["id"]) + ".json"})
				if r.Map(t)["valid"] != false {
					t.Errorf("%s old ticket still valid", v)
				}
				leaks(v+" old ticket", r.Body)
				leaks(v+" old ticket's rendering options", e.Must(200, apitest.Req{Method: "GET",
					Path: "/" + v + "/ticketing/tickets/" + str(tk["id"]) + "/available_rendering_options.json"}).Body)
				if r := e.Do(apitest.Req{Method: "GET", Path: "/" + v + "/ticketing/passes/apple_wallet/" + str(tk["id"]) + ".pkpass"}); r.Status == 200 {
					for name, f := range unzipPass(t, r.Body) {
						leaks(v+" old ticket's Apple pass "+name, f)
					}
				}
				if r := e.Do(apitest.Req{Method: "GET", Path: "/" + v + "/ticketing/passes/google_wallet/" + str(tk["id"]) + ".json"}); r.Status == 200 {
					leaks(v+" old ticket's Google pass link", r.Body)
				}
			}
		}
		// The traveller pages of the old coupon (keyless, in a browser).
		vis := newVisitor(t, e, "de")
		for _, c := range []string{single, month} {
			p := vis.do("GET", "/c/"+c, nil)
			leaks("page /c/"+c, []byte(p.Body))
			leaks("page /c/"+c+"/ticket", []byte(vis.do("GET", "/c/"+c+"/ticket", nil).Body))
			if m := csrfRe.FindStringSubmatch(p.Body); m != nil {
				leaks("activation from page /c/"+c, []byte(vis.do("POST", "/c/"+c, url.Values{"csrf_token": {m[1]}, "option": {"photo_id_lite"},
					"medium.first_name": {"Max"}, "medium.last_name": {"M"}, "medium.birth_date": {"1990-01-01"}}).Body))
			}
		}
	})
}
