package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
)

// TestCustomerCountryCodes: electronic_invoicing.address.country_code must
// be a code XRechnung's BR-CL-14 accepts (ISO 3166-1 alpha-2, 1A, XI).
// Issue 28: "UK" and "XX" were created with 201 and every XML file of
// their invoices was fatally invalid. Now creation answers 422
// invalid_customer naming the field ("UK" with the hint GB) and writes
// nothing; a customer already stored with such a code (an older version
// or an insider wrote it) makes invoice creation answer 422 naming the
// customer's field, and no invoice or file job is written. Valid codes,
// also the non-ISO 1A and XI, still make valid XML.
func TestCustomerCountryCodes(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		const field = "/customer/electronic_invoicing/address/country_code"
		withCountry := func(code string) map[string]any {
			ei := electronic("Firma", "EM", "rechnung@firma.example", "R-1", "01234")
			ei["address"].(map[string]any)["country_code"] = code
			return map[string]any{"customer": map[string]any{"address_lines": []string{"Firma"}, "electronic_invoicing": ei}}
		}
		before := count(t, e, "customers")
		for code, hint := range map[string]string{"UK": `"GB"`, "XX": "ISO 3166-1", "XK": `"1A"`, "EL": `"GR"`, "gb": `"GB"`, "SS": "CII",
			"QZ": "ISO 3166-1", "AN": "ISO 3166-1", "D1": "ISO 3166-1", "DEU": "ISO 3166-1", "Ü": "ISO 3166-1"} {
			r := e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/customers.json", Key: key, Body: withCountry(code)})
			var body apitest.Error
			r.JSON(t, &body)
			if r.Status != 422 || body.Code != "invalid_customer" || len(body.Details) != 1 || body.Details[0].Field != field ||
				!strings.Contains(body.Message, "country_code") || !strings.Contains(body.Message, hint) {
				t.Errorf("country %q: %d %s; want 422 invalid_customer naming %s with %s", code, r.Status, r.Body, field, hint)
			}
		}
		if n := count(t, e, "customers"); n != before {
			t.Errorf("refused customers were written: %d → %d", before, n)
		}
		// Accepted codes make XML that is valid (BR-CL-14 is what the
		// refusal protects; the XSD check shows the files are written).
		items := orderSingles(t, e, key, 5)
		for i, code := range []string{"GB", "DE", "1A", "XI", "AX"} {
			id := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/customers.json", Key: key, Body: withCountry(code)}).Map(t)["id"].(string)
			got := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/customers/" + id + ".json", Key: key}).Map(t)
			if c := got["electronic_invoicing"].(map[string]any)["address"].(map[string]any)["country_code"]; c != code {
				t.Errorf("stored country %v, sent %s", c, code)
			}
			put(t, e, key, items[i], map[string]any{"customer_id": id})
			inv := issue(t, e, key, items[i], id, nil)
			runJobs(t, e)
			ubl := get(t, e, inv.UBLURL, 200).Body
			if !strings.Contains(string(ubl), "<cbc:IdentificationCode>"+code+"</cbc:IdentificationCode>") {
				t.Errorf("UBL of a %s customer does not carry the code", code)
			}
			xsdValid(t, code+".ubl.xml", ubl)
			xsdValid(t, code+".cii.xml", get(t, e, inv.CIIURL, 200).Body)
		}

		// Customers stored with a code the API now refuses.
		more := orderSingles(t, e, key, 2)
		for i, code := range []string{"UK", "XX"} {
			good := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/customers.json", Key: key, Body: withCountry("GB")}).Map(t)["id"].(string)
			c, err := e.Store.Read().Customer(context.Background(), e.AccountID, account.Live, good)
			if err != nil {
				t.Fatal(err)
			}
			c.ID = good + "-" + strings.ToLower(code)
			c.Electronic.Address.CountryCode = code
			if err := e.Store.Write(context.Background(), func(q store.Q) error { return q.InsertCustomer(context.Background(), c) }); err != nil {
				t.Fatal(err)
			}
			put(t, e, key, more[i], map[string]any{"customer_id": c.ID})
			invoices, jobs := count(t, e, "invoices"), count(t, e, "jobs")
			r := e.Do(apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + more[i] + "/invoice/" + c.ID + ".json", Key: key})
			var body apitest.Error
			r.JSON(t, &body)
			if r.Status != 422 || body.Code != invoicing.CodeInvalidCustomer || len(body.Details) != 1 || body.Details[0].Field != field ||
				!strings.Contains(body.Message, c.ID) || !strings.Contains(body.Message, `"`+code+`"`) {
				t.Errorf("invoice for a stored %s customer: %d %s", code, r.Status, r.Body)
			}
			if code == "UK" && !strings.Contains(body.Message, `"GB"`) {
				t.Errorf("no hint to GB: %s", body.Message)
			}
			if count(t, e, "invoices") != invoices || count(t, e, "jobs") != jobs {
				t.Errorf("a refused invoice wrote rows")
			}
		}
	})
}
