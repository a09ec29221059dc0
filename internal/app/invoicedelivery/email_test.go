package invoicedelivery_test

import (
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/invoicedelivery"
	"github.com/farebox/farebox/internal/config/configtest"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
)

// TestEmailMessage: what the e-mail transport makes of a parcel: the UBL
// for an electronic buyer, the PDF otherwise, the subject by kind with
// "TEST: " for a test-key document, the delivery's Message-ID under the
// sender's domain, the attempt's time as Date.
func TestEmailMessage(t *testing.T) {
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	e := &invoicedelivery.Email{From: mail.Address{Name: "VVS", Address: "rechnung@vvs.example"}}
	files := map[string]invoicing.File{"pdf": {Format: "pdf", ContentType: "application/pdf", Body: []byte("%PDF-1.7")},
		"ubl": {Format: "ubl", ContentType: "application/xml", Body: []byte("<Invoice/>")}}
	for _, c := range []struct {
		kind       invoicedoc.Kind
		env        account.Environment
		electronic bool
		subject    string
		file, body string
	}{
		{invoicedoc.KindInvoice, account.Live, true, "Rechnung 2026-000007 – ", "2026-000007.xml", "<Invoice/>"},
		{invoicedoc.KindCancellation, account.Live, true, "Stornorechnung 2026-000007 – ", "2026-000007.xml", "<Invoice/>"},
		{invoicedoc.KindPaymentNotice, account.Test, true, "TEST: Zahlungsaufforderung 2026-000007 – ", "2026-000007.xml", "<Invoice/>"},
		{invoicedoc.KindInvoice, account.Live, false, "Rechnung 2026-000007 – ", "2026-000007.pdf", "%PDF-1.7"},
	} {
		buyer := &invoicedoc.Buyer{AddressLines: []string{"Müller GmbH"}}
		inv := invoicing.Invoice{ID: "inv-1", Number: "2026-000007", Kind: c.kind, Environment: c.env, Electronic: c.electronic,
			Document: invoicedoc.Document{Kind: c.kind, IssueDate: at, Seller: configtest.Defaults().Seller, Buyer: buyer}}
		m := e.Message(invoicedelivery.Parcel{Delivery: invoicing.Delivery{ID: "farebox-delivery-1", Recipient: "a@b.example"},
			Document: inv, Files: files, At: at})
		if !strings.HasPrefix(m.Subject, c.subject+inv.Document.Seller.Name) || m.To.Name != "Müller GmbH" || m.To.Address != "a@b.example" ||
			m.MessageID != "farebox-delivery-1@vvs.example" || !m.Date.Equal(at) || m.From != e.From {
			t.Errorf("%v: %+v", c.kind, m)
		}
		if len(m.Attachments) != 1 || m.Attachments[0].Name != c.file || string(m.Attachments[0].Body) != c.body ||
			!strings.Contains(m.Text, "2026-000007") || !strings.Contains(m.Text, "29.11.2026") {
			t.Errorf("%v: attachments %+v, text %q", c.kind, m.Attachments, m.Text)
		}
	}
}
