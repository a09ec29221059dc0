package invoices_test

import (
	"encoding/json"
	"testing"

	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/config/configtest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// BenchmarkIssueInvoiceDelivery measures what writing a document's
// delivery in its issuing transaction (docs/invoicing.md, "Delivery to
// the buyer") costs an invoice of an EM buyer: "plain" is invoicing
// without --smtp-url, "delivered" the same with the e-mail channel (one
// more row and one more job), in the same run on the same database,
// alternating, each timed alone.
//
//	go test ./internal/app/invoices -run '^$' -bench IssueInvoiceDelivery -benchtime 500x -count 3
func BenchmarkIssueInvoiceDelivery(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			tb := setup(b, engine)
			tb.store.NewLedger(store.LedgerCommitted, nil)
			d := configtest.Defaults()
			delivered := invoices.New(store.NewView[invoices.Queries](tb.store), tb.clock, "farebox", invoices.Options{
				Seller: d.Seller, Links: kit.NewLinks("http://farebox.test"), PaymentDays: d.PaymentDays, Books: tb.books,
				Events: tb.writeEvents, Notify: func() {}, Channels: []string{invoicing.ChannelEmail}})
			cust, err := tb.inv.CreateCustomer(tb.ctx, idempotency.Claim{}, tb.live, invoicing.CustomerInput{
				AddressLines: []string{"Erika Mustermann", "Hauptstraße 1", "10115 Berlin"},
				Electronic: json.RawMessage(`{"electronic_address":"rechnung@mustermann.example","electronic_address_scheme_id":"EM",
					"buyer_reference":"R-1","address":{"name":"Erika Mustermann","street_with_number":"Hauptstraße 1","postal_code":"10115",
					"city":"Berlin","country_code":"DE"}}`)}, true)
			if err != nil {
				b.Fatal(err)
			}
			took := timeIssues(b, tb, cust.ID, [2]*invoices.Service{tb.inv, delivered})
			n := float64(b.N)
			b.ReportMetric(float64(took[0].Microseconds())/n, "µs/plain")
			b.ReportMetric(float64(took[1].Microseconds())/n, "µs/delivered")
			b.ReportMetric(100*(float64(took[1])/float64(took[0])-1), "%delivery")
		})
	}
}
