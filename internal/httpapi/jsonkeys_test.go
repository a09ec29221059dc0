package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
)

// TestJSONKeysExactAndUnique: every body is read with exact-case keys,
// each once (issue 28: `{"product_ids":["DAY"],"PRODUCT_IDS":["SINGLE"]}`
// ordered a single ticket; a split entry with amount_in_cents twice kept
// the last). A gateway validating the exact keys sees what farebox runs: a
// duplicate is a 400 malformed_json, a key differing in case a 400
// unknown_field, each naming the key by JSON pointer, and nothing changes.
// The SDKs' bodies still work: extra top-level keys of the activation are
// ignored, the same key in different objects is fine.
func TestJSONKeysExactAndUnique(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		ids := productIDs(t, e)
		day, single := ids["day/adult"], ids["single/adult"]
		if day == "" || single == "" {
			t.Fatalf("products: %v", ids)
		}
		items := orderSingles(t, e, key, 1)
		c1 := newCustomer(t, e, key, []string{"Erste GmbH"}, nil)
		c2 := newCustomer(t, e, key, []string{"Zweite GmbH"}, nil)
		monthly := order(t, e, key, ids["month/adult"])
		couponID := str(monthly.Coupons[0]["id"])
		price := int64(item(t, e, key, items[0])["amount_in_cents"].(float64))

		before := counts(t, e)
		beforeCustomers := count(t, e, "customers")
		type row struct {
			name, method, path, body string
			key                      string
			status                   int
			code, field              string
		}
		itemPath := "/v5/ticketing/billable_item/" + items[0] + ".json"
		activatePath := "/v9/ticketing/coupons/" + couponID + "/activate.json"
		rows := []row{
			{"order: the issue's body", "POST", "/v9/ticketing/orders.json",
				fmt.Sprintf(`{"product_ids":[%q],"PRODUCT_IDS":[%q]}`, day, single), key, 400, "unknown_field", "/PRODUCT_IDS"},
			{"order: the same key twice", "POST", "/v9/ticketing/orders.json",
				fmt.Sprintf(`{"product_ids":[%q],"product_ids":[%q]}`, day, single), key, 400, "malformed_json", "/product_ids"},
			{"order: twice, one spelt with an escape", "POST", "/v6/ticketing/orders.json",
				fmt.Sprintf(`{"product_ids":[%q],"optional_order_reference":"a","optional\u005forder_reference":"b"}`, day), key, 400, "malformed_json", "/optional_order_reference"},
			{"order: Title case alone", "POST", "/v7/ticketing/orders.json",
				fmt.Sprintf(`{"Product_Ids":[%q]}`, single), key, 400, "unknown_field", "/Product_Ids"},
			{"split: amount_in_cents twice", "PUT", itemPath,
				fmt.Sprintf(`{"split":[{"customer_id":%q,"amount_in_cents":%d,"amount_in_cents":190},{"customer_id":%q,"amount_in_cents":%d}]}`, c1, price-190, c2, 190),
				key, 400, "malformed_json", "/split/0/amount_in_cents"},
			{"split: customer_id twice in the second entry", "PUT", itemPath,
				fmt.Sprintf(`{"split":[{"customer_id":%q,"amount_in_cents":%d},{"customer_id":%q,"amount_in_cents":1,"customer_id":%q}]}`, c1, price-1, c2, c1),
				key, 400, "malformed_json", "/split/1/customer_id"},
			{"split: upper-case key in an entry", "PUT", itemPath,
				fmt.Sprintf(`{"split":[{"customer_id":%q,"AMOUNT_IN_CENTS":%d}]}`, c1, price), key, 400, "unknown_field", "/split/0/AMOUNT_IN_CENTS"},
			{"item: customer_id in upper case", "PUT", itemPath, fmt.Sprintf(`{"CUSTOMER_ID":%q}`, c1), key, 400, "unknown_field", "/CUSTOMER_ID"},
			{"customer: Address_Lines", "POST", "/v5/ticketing/customers.json", `{"customer":{"Address_Lines":["Firma"]}}`, key, 400, "unknown_field", "/customer/Address_Lines"},
			{"customer: address_lines twice", "POST", "/v5/ticketing/customers.json", `{"customer":{"address_lines":["Firma"],"address_lines":["Andere"]}}`, key, 400, "malformed_json", "/customer/address_lines"},
			{"customer: customer twice", "POST", "/v5/ticketing/customers.json", `{"customer":{"address_lines":["A"]},"customer":{"address_lines":["B"]}}`, key, 400, "malformed_json", "/customer"},
			{"customer: country_code twice deep inside", "POST", "/v9/ticketing/customers.json",
				`{"customer":{"address_lines":["Amt"],"electronic_invoicing":{"electronic_address":"r@amt.example","electronic_address_scheme_id":"EM","buyer_reference":"R-1",` +
					`"address":{"name":"Amt","street_with_number":"Weg 1","postal_code":"01067","city":"Dresden","country_code":"DE","country_code":"XX"}}}}`,
				key, 400, "malformed_json", "/customer/electronic_invoicing/address/country_code"},
			{"activation: reactivation_key twice", "POST", activatePath, `{"reactivation_key":"a","reactivation_key":"b"}`, "", 400, "malformed_json", "/reactivation_key"},
			{"activation: IDENTIFICATION_MEDIUM", "POST", activatePath, `{"IDENTIFICATION_MEDIUM":` + maxMedium + `}`, "", 400, "unknown_field", "/IDENTIFICATION_MEDIUM"},
			{"activation: first_name twice in the medium", "POST", activatePath,
				`{"identification_medium":{"photo_id_lite":{"first_name":"Max","first_name":"Moritz","last_name":"Mustermann","birth_date":"1990-01-01"}}}`,
				"", 400, "malformed_json", "/identification_medium/photo_id_lite/first_name"},
			{"activation: medium twice", "POST", activatePath,
				`{"identification_medium":` + maxMedium + `,"identification_medium":` + maxMedium + `}`, "", 400, "malformed_json", "/identification_medium"},
			{"activation: a key twice in an ignored extra", "POST", activatePath,
				`{"identification_medium":` + maxMedium + `,"tariff_settings":{"german_postal_code":"12345"},"web_view":{"v":1,"v":2}}`, "", 400, "malformed_json", "/web_view/v"},
			{"tariff settings: the key twice", "POST", "/v9/ticketing/coupons/" + couponID + "/tariff_settings.json",
				`{"german_postal_code":"12345","german_postal_code":"not-germany"}`, "", 400, "malformed_json", "/german_postal_code"},
		}
		for _, r := range rows {
			t.Run(r.name, func(t *testing.T) {
				res := e.Do(apitest.Req{Method: r.method, Path: r.path, Key: r.key, Body: r.body})
				var body apitest.Error
				res.JSON(t, &body)
				if res.Status != r.status || body.Code != r.code || len(body.Details) != 1 || body.Details[0].Field != r.field || !strings.Contains(body.Message, r.field[strings.LastIndex(r.field, "/")+1:]) {
					t.Errorf("%s %s: %d %s; want %d %s naming %s", r.method, r.path, res.Status, res.Body, r.status, r.code, r.field)
				}
			})
		}
		// Nothing was written: no order, ticket, customer or split.
		if after := counts(t, e); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("refused bodies changed rows: %v → %v", before, after)
		}
		if n := count(t, e, "customers"); n != beforeCustomers {
			t.Errorf("refused customers were written: %d → %d", beforeCustomers, n)
		}
		if it := item(t, e, key, items[0]); it["split"] != nil && len(it["split"].([]any)) != 0 {
			t.Errorf("refused split was stored: %v", it["split"])
		}
		if c := coupon(t, e, "v9", couponID); c["ticket_id"] != nil || c["activated"] == true {
			t.Errorf("refused activation activated the coupon: %v", c)
		}

		// The exact bodies are taken: the same key in different objects, and
		// the SDKs' activation with an extra top-level key (ignored).
		e.Must(200, apitest.Req{Method: "PUT", Path: itemPath, Key: key, Body: fmt.Sprintf(
			`{"split":[{"customer_id":%q,"amount_in_cents":%d},{"customer_id":%q,"amount_in_cents":190}]}`, c1, price-190, c2)})
		split := item(t, e, key, items[0])["split"].([]any)
		if len(split) != 2 || split[1].(map[string]any)["amount_in_cents"].(float64) != 190 || split[0].(map[string]any)["amount_in_cents"].(float64) != float64(price-190) {
			t.Errorf("split as sent: %v", split)
		}
		mustActivate(t, e, "v9", couponID, `{"identification_medium":`+maxMedium+`,"tariff_settings":{"german_postal_code":"12345"},"activation_start_datetime":"2026-07-01T00:00:00+0200","web_view":{"identification_medium":1}}`)
		o := order(t, e, key, day)
		if len(o.Coupons) != 1 || str(o.Coupons[0]["product"].(map[string]any)["id"]) != day {
			t.Errorf("order of the day ticket: %v", o.Coupons)
		}
	})
}
