package httpapi_test

import (
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
)

// TestErasureRemovesStoredAnswers: an Idempotency-Key answer that holds a
// traveller's or customer's personal data is not replayed after the data
// was erased on request (issue 28: a keyless activation's replay returned
// the postal code for 24 h). The retry is refused as carried out (409
// idempotency_key_outcome_unknown, no personal data, nothing run again);
// answers of the same records without personal data (the order, the
// activation's ticket id) and of other records still replay.
func TestErasureRemovesStoredAnswers(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		orderReq := apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey,
			Header: map[string]string{"Idempotency-Key": "order-1"},
			Body:   map[string]any{"product_ids": []string{ids["month/adult"], ids["single/adult"]}}}
		var o orderResp
		e.Must(201, orderReq).JSON(t, &o)
		subs, others := o.split()
		monthly, single := str(subs[0]["id"]), str(others[0]["id"])
		// Keyless requests (the SDK's), each with its own key: the tariff
		// settings (the answer is the coupon with the postal code), then the
		// activations (the answer names the ticket only); names in Arabic,
		// Hebrew, CJK script and emoji.
		keyless := func(path, key string, body map[string]any) apitest.Req {
			return apitest.Req{Method: "POST", Path: path, Header: map[string]string{"Idempotency-Key": key}, Body: body}
		}
		tariff := keyless("/v9/ticketing/coupons/"+monthly+"/tariff_settings.json", "tariff-monthly",
			map[string]any{"tariff_settings": map[string]any{"german_postal_code": "10115"}})
		actMonthly := keyless("/v9/ticketing/coupons/"+monthly+"/activate.json", "act-monthly",
			map[string]any{"identification_medium": medium("محمد", "כהן", "1990-01-01")})
		actSingle := keyless("/v9/ticketing/coupons/"+single+"/activate.json", "act-single",
			map[string]any{"identification_medium": medium("太郎", "Beispiel😀", "1985-03-04")})
		first := e.Must(200, tariff)
		ticketAnswer := e.Must(201, actMonthly)
		e.Must(201, actSingle)
		// Before the erasure the answers replay, the postal code included.
		for _, req := range []apitest.Req{tariff, actMonthly, orderReq} {
			r := e.Do(req)
			if r.Header.Get("Idempotency-Replayed") != "true" || r.Status >= 300 {
				t.Fatalf("replay before erasure: %d %s %s", r.Status, r.Header.Get("Idempotency-Replayed"), r.Body)
			}
		}
		if r := e.Do(tariff); !strings.Contains(string(r.Body), "10115") || string(r.Body) != string(first.Body) {
			t.Fatalf("replay before erasure differs: %s", r.Body)
		}
		// A customer created with a key (address lines are personal data).
		custReq := apitest.Req{Method: "POST", Path: "/v9/ticketing/customers.json", Key: e.LiveKey,
			Header: map[string]string{"Idempotency-Key": "cust-1"},
			Body:   map[string]any{"customer": map[string]any{"address_lines": []string{"Anna Allein", "شارع 2", "01067 Dresden"}}}}
		cust := e.Must(201, custReq).Map(t)["id"].(string)
		other := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/customers.json", Key: e.LiveKey,
			Header: map[string]string{"Idempotency-Key": "cust-2"},
			Body:   map[string]any{"customer": map[string]any{"address_lines": []string{"Bert Bleibt", "Weg 3", "04109 Leipzig"}}}})

		before := counts(t, e)
		e.Must(200, apitest.Req{Method: "POST", Path: "/v1/privacy/coupons/" + monthly + "/erasure.json", Key: e.LiveKey})
		e.Must(200, apitest.Req{Method: "POST", Path: "/v1/privacy/customers/" + cust + "/erasure.json", Key: e.LiveKey})

		for _, c := range []struct {
			name string
			req  apitest.Req
			gone []string
		}{
			{"keyless tariff settings", tariff, []string{"10115", "german_postal_code"}},
			{"customer", custReq, []string{"Anna", "شارع", "Dresden"}},
		} {
			r := e.Do(c.req)
			if r.Status != 409 || str(r.Map(t)["code"]) != "idempotency_key_outcome_unknown" || r.Header.Get("Idempotency-Replayed") == "true" {
				t.Errorf("%s replayed after erasure: %d %s", c.name, r.Status, r.Body)
			}
			for _, s := range c.gone {
				if strings.Contains(string(r.Body), s) {
					t.Errorf("%s: the answer after erasure holds %q: %s", c.name, s, r.Body)
				}
			}
		}
		if after := counts(t, e); !equalCounts(before, after) {
			t.Errorf("a refused retry ran again: %v → %v", before, after)
		}
		// Not erased: the order's answer (no personal data), the other
		// coupon's activation and the other customer still replay as stored.
		for _, c := range []struct {
			req  apitest.Req
			want string
		}{{orderReq, o.OrderID}, {actMonthly, str(ticketAnswer.Map(t)["ticket_id"])}, {actSingle, "ticket_id"}, {apitest.Req{Method: "POST", Path: "/v9/ticketing/customers.json", Key: e.LiveKey,
			Header: map[string]string{"Idempotency-Key": "cust-2"},
			Body:   map[string]any{"customer": map[string]any{"address_lines": []string{"Bert Bleibt", "Weg 3", "04109 Leipzig"}}}}, str(other.Map(t)["id"])}} {
			r := e.Do(c.req)
			if r.Status >= 300 || r.Header.Get("Idempotency-Replayed") != "true" || !strings.Contains(string(r.Body), c.want) {
				t.Errorf("%s: not replayed after another record's erasure: %d %s", c.req.Path, r.Status, r.Body)
			}
		}
		// The same key of the test environment is another scope: unaffected.
		r := e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.TestKey,
			Header: map[string]string{"Idempotency-Key": "act-monthly"}, Body: map[string]any{"product_ids": []string{ids["single/adult"]}}})
		if r.Status != 201 || r.Header.Get("Idempotency-Replayed") == "true" {
			t.Errorf("another scope's key: %d %s", r.Status, r.Body)
		}
	})
}
