package httpapi

import "testing"

// BenchmarkDecodeOrderBody measures the one JSON decoder on a typical order
// body (a partner endpoint: strict), and on a customer with electronic
// invoicing, the largest common body.
//
//	go test ./internal/httpapi -run ^$ -bench DecodeOrderBody -benchmem -count 5
func BenchmarkDecodeOrderBody(b *testing.B) {
	bodies := map[string]struct {
		body string
		dst  func() any
	}{
		"order": {`{"product_ids":["farebox-product-0e4a3c1e-58a4-4d8e-9a55-3f0c1d2b9e71"],"optional_order_reference":"order 4711"}`,
			func() any { return new(orderRequest) }},
		"customer": {`{"customer":{"address_lines":["Amt für Ä","Rathausplatz 1","01067 Dresden"],"electronic_invoicing":{"electronic_address":"rechnung@amt.example","electronic_address_scheme_id":"EM","buyer_reference":"04011000-12345-67","address":{"name":"Amt für Ä","street_with_number":"Große Straße 5","postal_code":"01067","city":"Dresden","country_code":"DE"}}}}`,
			func() any { return new(customerRequest) }},
	}
	for _, name := range []string{"order", "customer"} {
		c := bodies[name]
		body := []byte(c.body)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := decodeJSON(body, c.dst(), true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
