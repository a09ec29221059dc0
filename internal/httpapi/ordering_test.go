package httpapi_test

import (
	"testing"

	"github.com/farebox/farebox/internal/apitest"
)

// productIDs returns Berlin's products by ticket_type/customer_type.
func productIDs(t testing.TB, e *apitest.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range search(t, e, e.LiveKey, "/v2/products/search_by_city_name.json?city_name=Berlin") {
		out[p["ticket_type"].(string)+"/"+p["customer_type"].(string)] = p["id"].(string)
	}
	return out
}

const maxMedium = `{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-01-01"}}`

func TestSDKHappyPath(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		r := e.Must(201, apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: e.LiveKey,
			Body: map[string]any{"product_ids": []string{ids["month/adult"], ids["single/adult"]}, "optional_order_reference": "booking-1"}})
		var order struct {
			OrderID string `json:"order_id"`
			Coupons []struct {
				ID string `json:"id"`
			} `json:"coupons"`
		}
		r.JSON(t, &order)
		if len(order.Coupons) != 2 {
			t.Fatalf("order: %s", r.Body)
		}
		for _, c := range order.Coupons {
			cr := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/coupons/" + c.ID + ".json"})
			e.MustMatch("coupon", cr.Body, apitest.SDKCoupon)
		}
		body := `{"identification_medium":` + maxMedium + `,"tariff_settings":{"german_postal_code":"12345"},"activation_start_datetime":"2026-06-01T00:00:00+0200"}`
		ar := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + order.Coupons[0].ID + "/activate.json", Body: body})
		tid := ar.Map(t)["ticket_id"].(string)
		tr := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v9/ticketing/tickets/" + tid + ".json"})
		e.MustMatch("ticket", tr.Body, apitest.SDKTicket)
		m := tr.Map(t)
		if m["valid_from"] != "2026-05-31T22:00:00Z" || m["valid_until"] != "2026-06-30T21:59:59Z" {
			t.Errorf("monthly validity: %v – %v", m["valid_from"], m["valid_until"])
		}
	})
}
