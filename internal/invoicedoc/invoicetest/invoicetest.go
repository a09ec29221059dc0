package invoicetest

import (
	"time"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/money"
)

// Seller is a complete, valid seller configuration.
func Seller() invoicedoc.Seller {
	return invoicedoc.Seller{
		Name: "Verkehrsverbund Beispielstadt GmbH",
		Address: invoicedoc.Address{Street: "Hauptstraße 1", PostalCode: "10115", City: "Berlin",
			CountryCode: "DE"},
		VATID:                   "DE123456789",
		TaxNumber:               "27/123/45678",
		LegalInfo:               "Amtsgericht Berlin-Charlottenburg HRB 123456 B",
		ContactName:             "Erika Mustermann",
		ContactPhone:            "+49 30 1234567",
		ContactEmail:            "buchhaltung@verkehr.example",
		ElectronicAddress:       "rechnung@verkehr.example",
		ElectronicAddressScheme: "EM",
		IBAN:                    "DE89 3704 0044 0532 0130 00",
		BIC:                     "COBADEFFXXX",
		BankName:                "Commerzbank",
	}
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func buyer(lines []string, name, scheme, addr, ref string) *invoicedoc.Buyer {
	return &invoicedoc.Buyer{AddressLines: lines, Electronic: &invoicedoc.ElectronicInvoicing{
		ElectronicAddress: addr, Scheme: scheme, BuyerReference: ref,
		Address: invoicedoc.Address{Name: name, Street: lines[len(lines)-2], PostalCode: lines[len(lines)-1][:5],
			City: lines[len(lines)-1][6:], CountryCode: "DE"},
	}}
}

// Café is a company buyer with e-mail electronic invoicing and an Umlaut name.
func Café() *invoicedoc.Buyer {
	b := buyer([]string{"Café Zürich GmbH", "z. Hd. Łukasz Wójcik", "Große Straße 5", "01067 Dresden"},
		"Café Zürich GmbH", "EM", "eingang@cafe-zuerich.example", "KST-4711")
	b.Electronic.Address.AdditionalLine1 = "z. Hd. Łukasz Wójcik"
	return b
}

// Amt is a public buyer with a Leitweg-ID.
func Amt() *invoicedoc.Buyer {
	return buyer([]string{"Stadt Beispielstadt", "Personalamt", "Rathausplatz 1", "04109 Leipzig"},
		"Stadt Beispielstadt", "0204", "04011000-12345-67", "04011000-12345-67")
}

func base(number string, b *invoicedoc.Buyer, lines ...invoicedoc.Line) *invoicedoc.Document {
	return &invoicedoc.Document{
		Kind: invoicedoc.KindInvoice, Number: number, IssueDate: at("2026-11-21T09:30:00Z"),
		Seller: Seller(), Buyer: b, Lines: lines,
		Payment: invoicedoc.Payment{DueDate: at("2026-12-05T09:30:00Z")},
	}
}

func ticket(id, name string, gross int64, ordered string) invoicedoc.Line {
	return invoicedoc.Line{BillableItemID: id, Name: name, Quantity: 1, Gross: money.Cents(gross), RateBP: 700,
		OrderedAt: at(ordered)}
}

// Flow is a named example document.
type Flow struct {
	Name string
	Doc  *invoicedoc.Document
}

// SingleNoCustomer is flow 1: one item, no customer (PDF only).
func SingleNoCustomer() *invoicedoc.Document {
	return base("RE-2026-000101", nil, ticket("fb-billable-0001", "Einzelfahrt Tarifzone AB", 350, "2026-11-20T22:15:00Z"))
}

// SingleCustomer is flow 2: one item for one customer.
func SingleCustomer() *invoicedoc.Document {
	d := base("RE-2026-000102", Café(), ticket("fb-billable-0002", "Deutschlandticket Dezember 2026", 5800, "2026-11-21T08:03:00Z"))
	d.Texts = invoicedoc.Texts{Subject: "Rechnung {{invoice_number}}", Notes: "Vielen Dank für Ihren Einkauf.",
		BeforeTable: "Bitte überweisen Sie {{total_amount}} unter Angabe von {{invoice_number}}.",
		AfterTable:  "Fragen? Schreiben Sie uns."}
	return d
}

// Split is flow 3: a split item invoiced to its beneficiary; two passive participants.
func Split() *invoicedoc.Document {
	l := ticket("fb-billable-0003", "Deutschlandticket Job Dezember 2026", 2300, "2026-11-02T07:00:00Z")
	l.Split = []invoicedoc.Share{{Name: "Café Zürich GmbH", Amount: 2300, Invoiced: true},
		{Name: "Jörg Weiß", Amount: 2500}, {Name: "Éloïse Dubois", Amount: 1000}}
	d := base("RE-2026-000103", Café(), l)
	d.Texts.Subject = "Ihr Anteil am Jobticket, Rechnung {{invoice_number}}"
	return d
}

// CollectionMonths is flow 4: a collection whose items span several months.
func CollectionMonths() *invoicedoc.Document {
	d := base("RE-2026-000104", Amt(),
		ticket("fb-billable-0010", "Deutschlandticket Oktober 2026", 5800, "2026-09-30T22:30:00Z"),
		ticket("fb-billable-0011", "Deutschlandticket November 2026", 5800, "2026-10-28T11:00:00Z"),
		ticket("fb-billable-0012", "Einzelfahrt Tarifzone ABC", 420, "2026-11-03T16:45:00Z"),
		ticket("fb-billable-0013", "Deutschlandticket Dezember 2026", 5800, "2026-11-20T10:00:00Z"),
	)
	d.Texts.AfterTable = "Gesamtbetrag {{total_amount}} – Rechnung {{invoice_number}}"
	return d
}

// CollectionMonth is a collection within one month, issued in the test environment.
func CollectionMonth() *invoicedoc.Document {
	d := base("TEST-RE-2026-000007", Café(),
		ticket("fb-billable-0020", "Kurzstrecke", 210, "2026-11-03T06:10:00Z"),
		ticket("fb-billable-0021", "Kurzstrecke", 210, "2026-11-03T17:40:00Z"),
		ticket("fb-billable-0022", "Tageskarte Tarifzone AB", 990, "2026-11-14T09:00:00Z"),
	)
	d.Test = true
	return d
}

// CollectionSplits is flow 5: a collection with split items, invoiced to a
// customer who is beneficiary of one item and passive in the other.
func CollectionSplits() *invoicedoc.Document {
	a := ticket("fb-billable-0030", "Deutschlandticket Job November 2026", 5800, "2026-10-25T12:00:00Z")
	a.Gross = 3300
	a.Split = []invoicedoc.Share{{Name: "Stadt Beispielstadt", Amount: 3300, Invoiced: true}, {Name: "Anna Łęcka", Amount: 2500}}
	b := ticket("fb-billable-0031", "Deutschlandticket Job Dezember 2026", 5800, "2026-11-24T12:00:00Z")
	b.Gross = 1900
	b.Split = []invoicedoc.Share{{Name: "Anna Łęcka", Amount: 3900}, {Name: "Stadt Beispielstadt", Amount: 1900, Invoiced: true}}
	c := ticket("fb-billable-0032", "Einzelfahrt Tarifzone AB", 350, "2026-11-25T08:00:00Z")
	return base("RE-2026-000105", Amt(), a, b, c)
}

// Cancellation cancels CollectionMonths.
func Cancellation() *invoicedoc.Document {
	orig := CollectionMonths()
	d := base("RE-2026-000106", orig.Buyer, orig.Lines...)
	d.Kind = invoicedoc.KindCancellation
	d.IssueDate = at("2026-11-23T10:00:00Z")
	d.Payment = invoicedoc.Payment{}
	d.Cancels = &invoicedoc.Reference{Number: orig.Number, IssueDate: orig.IssueDate}
	d.Texts.Subject = "Stornorechnung {{invoice_number}}"
	return d
}

// PaymentNotice asks the buyer of SingleCustomer to pay, partly paid already.
func PaymentNotice() *invoicedoc.Document {
	orig := SingleCustomer()
	d := base("ZA-2026-000001", orig.Buyer, orig.Lines...)
	d.Kind = invoicedoc.KindPaymentNotice
	d.IssueDate = at("2026-12-10T08:00:00Z")
	d.Payment = invoicedoc.Payment{DueDate: at("2026-12-20T08:00:00Z"), Paid: 1000}
	d.Cancels = &invoicedoc.Reference{Number: orig.Number, IssueDate: orig.IssueDate}
	d.Texts.BeforeTable = "Zu Rechnung RE-2026-000102 sind noch {{total_amount}} offen."
	return d
}

// CollectionPaymentNotice asks to pay a collection: three identical
// tickets at 2,99 € (two billed by one invoice, one by another) and an item
// not invoiced yet. It references both invoices (BG-3, BT-83).
func CollectionPaymentNotice() *invoicedoc.Document {
	r1 := &invoicedoc.Reference{Number: "RE-2026-000110", IssueDate: at("2026-11-05T12:00:00Z")}
	r2 := &invoicedoc.Reference{Number: "RE-2026-000111", IssueDate: at("2026-11-12T12:00:00Z")}
	lines := []invoicedoc.Line{
		ticket("fb-billable-0043", "Einzelfahrt Erwachsene", 299, "2026-11-10T07:00:00Z"),
		ticket("fb-billable-0041", "Einzelfahrt Erwachsene", 299, "2026-11-02T07:00:00Z"),
		ticket("fb-billable-0042", "Einzelfahrt Erwachsene", 299, "2026-11-03T07:00:00Z"),
		ticket("fb-billable-0044", "Tageskarte Tarifzone AB", 990, "2026-11-20T09:00:00Z"),
	}
	lines[0].Invoice, lines[1].Invoice, lines[2].Invoice = r2, r1, r1
	d := base("ZA-2026-000002", Café(), lines...)
	d.Kind = invoicedoc.KindPaymentNotice
	d.IssueDate = at("2026-11-25T08:00:00Z")
	d.Payment = invoicedoc.Payment{DueDate: at("2026-12-09T08:00:00Z")}
	return d
}

// XMLFlows are the documents that get XML (every buyer has electronic invoicing).
func XMLFlows() []Flow {
	return []Flow{
		{"single_customer", SingleCustomer()},
		{"split", Split()},
		{"collection_months", CollectionMonths()},
		{"collection_month_test", CollectionMonth()},
		{"collection_splits", CollectionSplits()},
		{"cancellation", Cancellation()},
		{"payment_notice", PaymentNotice()},
		{"collection_payment_notice", CollectionPaymentNotice()},
	}
}

// AllFlows are XMLFlows plus the invoice without customer.
func AllFlows() []Flow {
	return append([]Flow{{"single_no_customer", SingleNoCustomer()}}, XMLFlows()...)
}
