package httpapi_test

import (
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/google/go-cmp/cmp"
)

// FuzzInvoicingEndpoints sends arbitrary bodies to every JSON endpoint of
// invoicing (customers, billable items, collections, invoices,
// cancellations, payment notices): no input may cause a 5xx or a panic, an
// error always has a message and code, and a rejected request writes
// nothing. CI runs it for a bounded time on each engine (.ci/run,
// FAREBOX_FUZZ_ENGINE); the seeds run with every `go test`.
func FuzzInvoicingEndpoints(f *testing.F) {
	seeds := []string{
		`{"customer":{"address_lines":["A GmbH","Weg 1","10115 Berlin"]}}`, `{"customer":{"address_lines":[]}}`, `{"customer":null}`,
		`{"customer":{"address_lines":["A"],"electronic_invoicing":{"electronic_address":"a@b.de","electronic_address_scheme_id":"EM","buyer_reference":"r","address":{"name":"A","street_with_number":"W 1","postal_code":"01067","city":"Dresden","country_code":"DE"}}}}`,
		`{"customer_id":null}`, `{"split":[{"customer_id":"x","amount_in_cents":1}]}`, `{"billablable_collection_id":"x"}`,
		`{"billable_item_ids":["x"]}`, `{"billable_item_ids":[]}`, `{"subject":"Rechnung {invoice_number}","notes":"n"}`, `{"subject":1}`,
		`{}`, `[]`, `null`, `{"customer_id":"` + "\u0000" + `"}`, "{\"notes\":\"\xff\"}",
		`{"split":[{"customer_id":"x","amount_in_cents":9223372036854775807},{"customer_id":"y","amount_in_cents":9223372036854775807},{"customer_id":"z","amount_in_cents":382}]}`,
		`{"split":[{"customer_id":"x","amount_in_cents":1,"extra":true}]}`, `{"customer":{"address_lines":["\ud800"]}}`, `{"notes":"a\u0000"}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	e := apitest.New(f, apitest.FuzzEngine(f), apitest.Options{})
	ids := productIDs(f, e)
	o := order(f, e, e.LiveKey, ids["single/adult"], ids["single/adult"], ids["single/adult"])
	item1, item2, item3 := str(o.Coupons[0]["billable_item_id"]), str(o.Coupons[1]["billable_item_id"]), str(o.Coupons[2]["billable_item_id"])
	cust := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/customers.json", Key: e.LiveKey,
		Body: map[string]any{"customer": map[string]any{"address_lines": []string{"Muster GmbH", "Weg 1", "10115 Berlin"}}}}).Map(f)["id"].(string)
	coll := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: e.LiveKey}).Map(f)["id"].(string)
	e.Must(200, apitest.Req{Method: "PUT", Path: "/v5/ticketing/billable_item/" + item2 + ".json", Key: e.LiveKey, Body: map[string]any{"customer_id": cust}})
	inv := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + item2 + "/invoice/" + cust + ".json", Key: e.LiveKey}).Map(f)["invoice_id"].(string)
	endpoints := []struct{ method, path string }{
		{"POST", "/v5/ticketing/customers.json"},
		{"POST", "/v9/ticketing/customers.json"},
		{"PUT", "/v5/ticketing/billable_item/" + item1 + ".json"},
		{"POST", "/v5/ticketing/billable_collections.json"},
		{"POST", "/v5/ticketing/billable_collection/" + coll + "/billable_items.json"},
		{"POST", "/v5/ticketing/billable_item/" + item3 + "/invoice.json"},
		{"POST", "/v5/ticketing/billable_item/" + item3 + "/invoice/" + cust + ".json"},
		{"POST", "/v9/ticketing/invoices/" + inv + "/payment_notice.json"},
		{"POST", "/v9/ticketing/billable_collection/" + coll + "/payment_notice.json"},
		{"POST", "/v9/ticketing/invoices/" + inv + "/cancel.json"},
	}
	tables := []string{"customers", "billable_collections", "billable_item_assignments", "invoices", "invoice_claims", "jobs"}
	rows := func(t *testing.T) map[string]int {
		m := map[string]int{}
		for _, tb := range tables {
			m[tb] = count(t, e, tb)
		}
		return m
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		ep := endpoints[int(which)%len(endpoints)]
		e.T = t
		before := rows(t)
		r := e.Do(apitest.Req{Method: ep.method, Path: ep.path, Key: e.LiveKey, Body: body, NoValidate: true})
		if r.Status >= 500 {
			t.Fatalf("%s %s with %q: %d %s", ep.method, ep.path, body, r.Status, r.Body)
		}
		if m := r.Map(t); r.Status >= 400 && (m["message"] == nil || m["code"] == nil) {
			t.Fatalf("error without message/code: %s", r.Body)
		}
		if r.Status >= 400 {
			if after := rows(t); !cmp.Equal(before, after) {
				t.Fatalf("%s %s rejected %q with %d but wrote rows: %v → %v", ep.method, ep.path, body, r.Status, before, after)
			}
		}
	})
}
