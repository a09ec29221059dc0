package invoicedoc_test

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/money"
)

func TestTotalsCollection(t *testing.T) {
	d := invoicetest.CollectionMonths()
	tot := d.Totals()
	// 3 × 58.00 + 4.20 = 178.20 gross; VAT = round(17820 × 7 / 107) = 1166.
	if tot.Gross != 17820 || tot.VAT != 1166 || tot.Net != 16654 || tot.Payable != 17820 || tot.Paid != 0 {
		t.Fatalf("totals = %+v", tot)
	}
	if len(tot.Groups) != 1 || tot.Groups[0] != (invoicedoc.VATGroup{RateBP: 700, Net: 16654, VAT: 1166, Gross: 17820}) {
		t.Fatalf("groups = %+v", tot.Groups)
	}
	// Cumulative distribution: 5420.56→5421, 10841.12→10841, 11233.64→11234, 16654.21→16654.
	want := []invoicedoc.LineAmounts{{Net: 5421, VAT: 379}, {Net: 5420, VAT: 380}, {Net: 393, VAT: 27}, {Net: 5420, VAT: 380}}
	for i, w := range want {
		if tot.Lines[i] != w {
			t.Errorf("line %d = %+v, want %+v", i, tot.Lines[i], w)
		}
	}
}

func TestTotalsTenTickets(t *testing.T) {
	// einvoice.md 2.5: 10 × 49.00 € at 7 % must total exactly 490.00 €.
	var lines []invoicedoc.Line
	for i := 0; i < 10; i++ {
		lines = append(lines, invoicedoc.Line{Gross: 4900, RateBP: 700, Quantity: 1})
	}
	tot := invoicedoc.ComputeTotals(lines, 0)
	if tot.Gross != 49000 || tot.VAT != 3206 || tot.Net != 45794 {
		t.Fatalf("totals = %+v", tot)
	}
	if d := tot.VAT - money.Share(tot.Net, 700, 10000); d < -1 || d > 1 {
		t.Fatalf("VAT %d vs net×rate %d", tot.VAT, money.Share(tot.Net, 700, 10000))
	}
}

func TestTotalsMixedRates(t *testing.T) {
	lines := []invoicedoc.Line{{Gross: 1190, RateBP: 1900}, {Gross: 5800, RateBP: 700}, {Gross: 119, RateBP: 1900}}
	tot := invoicedoc.ComputeTotals(lines, 500)
	if len(tot.Groups) != 2 || tot.Groups[0].RateBP != 700 || tot.Groups[1].RateBP != 1900 {
		t.Fatalf("groups = %+v", tot.Groups)
	}
	if tot.Groups[1] != (invoicedoc.VATGroup{RateBP: 1900, Net: 1100, VAT: 209, Gross: 1309}) {
		t.Fatalf("19%% group = %+v", tot.Groups[1])
	}
	if tot.Gross != 7109 || tot.Payable != 6609 || tot.Lines[0].Net+tot.Lines[2].Net != 1100 {
		t.Fatalf("totals = %+v", tot)
	}
}

// FuzzTotals checks the invariants over random baskets: the total equals the
// sum charged, line nets add up per group, VAT stays within a cent of net × rate.
func FuzzTotals(f *testing.F) {
	f.Add([]byte{10, 20, 30}, uint16(700))
	f.Add([]byte{255, 1, 0, 7}, uint16(1900))
	f.Fuzz(func(t *testing.T, amounts []byte, rate uint16) {
		r := int64(rate%3000) + 1
		var lines []invoicedoc.Line
		var sum money.Cents
		for i, a := range amounts {
			g := money.Cents(int64(a)*137 + int64(i))
			if i%4 == 3 { // repeated bytes give identical items: one position
				g = money.Cents(int64(a) * 137)
			}
			rb := r
			if i%3 == 2 {
				rb = 700
			}
			lines = append(lines, invoicedoc.Line{Gross: g, RateBP: rb})
			sum += g
		}
		tot := invoicedoc.ComputeTotals(lines, 0)
		if tot.Gross != sum || tot.Net+tot.VAT != tot.Gross {
			t.Fatalf("gross %d vs sum %d (net %d vat %d)", tot.Gross, sum, tot.Net, tot.VAT)
		}
		for _, g := range tot.Groups {
			var nets money.Cents
			for i, l := range lines {
				if l.RateBP == g.RateBP {
					nets += tot.Lines[i].Net
					if tot.Lines[i].Net+tot.Lines[i].VAT != l.Gross {
						t.Fatalf("line %d net+vat != gross", i)
					}
				}
			}
			if nets != g.Net {
				t.Fatalf("rate %d: line nets %d != group net %d", g.RateBP, nets, g.Net)
			}
			// Positions (the document lines): exact sums, each net within a
			// cent of gross / (1 + rate), identical items in one position.
			var posNets money.Cents
			for i, p := range invoicedoc.GroupPositions(lines) {
				if p.RateBP != g.RateBP {
					continue
				}
				pn := tot.Positions[i].Net
				posNets += pn
				exact := new(big.Rat).SetFrac64(int64(p.Gross)*10000, 10000+p.RateBP)
				if d := new(big.Rat).Sub(exact, new(big.Rat).SetInt64(int64(pn))); d.Cmp(big.NewRat(1, 1)) > 0 || d.Cmp(big.NewRat(-1, 1)) < 0 {
					t.Fatalf("position %d: net %d vs exact %s", i, pn, exact.FloatString(3))
				}
				for _, k := range p.Items {
					if lines[k].Gross != p.UnitGross {
						t.Fatalf("position %d mixes amounts", i)
					}
				}
			}
			if posNets != g.Net {
				t.Fatalf("rate %d: position nets %d != group net %d", g.RateBP, posNets, g.Net)
			}
			if d := g.VAT - money.Share(g.Net, g.RateBP, 10000); d < -1 || d > 1 {
				t.Fatalf("rate %d: VAT %d vs net×rate %d", g.RateBP, g.VAT, money.Share(g.Net, g.RateBP, 10000))
			}
		}
	})
}

func TestServicePeriod(t *testing.T) {
	ts := func(s ...string) []time.Time {
		var out []time.Time
		for _, x := range s {
			v, _ := time.Parse(time.RFC3339, x)
			out = append(out, v)
		}
		return out
	}
	cases := []struct {
		times      []time.Time
		kind       invoicedoc.PeriodKind
		label, txt string
		start, end string
	}{
		{ts("2026-11-21T08:03:00Z"), invoicedoc.PeriodPoint, "Leistungszeitpunkt", "21.11.2026, 09:03 Uhr", "2026-11-21", "2026-11-21"},
		// Late evening UTC on 31 March is already 1 April in Berlin (summer time).
		{ts("2026-03-31T22:30:00Z"), invoicedoc.PeriodPoint, "Leistungszeitpunkt", "01.04.2026, 00:30 Uhr", "2026-04-01", "2026-04-01"},
		{ts("2026-11-03T06:10:00Z", "2026-11-14T09:00:00Z", "2026-11-03T17:40:00Z"), invoicedoc.PeriodMonth, "Leistungszeitraum", "November 2026", "2026-11-01", "2026-11-30"},
		{ts("2026-02-01T00:00:00Z", "2026-02-28T22:59:00Z"), invoicedoc.PeriodMonth, "Leistungszeitraum", "Februar 2026", "2026-02-01", "2026-02-28"},
		// 2026-09-30T22:30Z is 1 October in Berlin, so these two share a month.
		{ts("2026-10-31T20:00:00Z", "2026-09-30T22:30:00Z"), invoicedoc.PeriodMonth, "Leistungszeitraum", "Oktober 2026", "2026-10-01", "2026-10-31"},
		{ts("2026-11-20T10:00:00Z", "2026-09-30T22:30:00Z", "2026-10-28T11:00:00Z"), invoicedoc.PeriodRange, "Leistungszeitraum", "01.10.2026 – 20.11.2026", "2026-10-01", "2026-11-20"},
	}
	for i, c := range cases {
		p, ok := invoicedoc.ComputeServicePeriod(c.times)
		if !ok || p.Kind != c.kind || p.Label() != c.label || p.Text() != c.txt {
			t.Errorf("case %d: %v %v %q %q", i, ok, p.Kind, p.Label(), p.Text())
		}
		s, e := p.Dates()
		if s.Format("2006-01-02") != c.start || e.Format("2006-01-02") != c.end {
			t.Errorf("case %d: dates %s..%s", i, s, e)
		}
	}
	if _, ok := invoicedoc.ComputeServicePeriod(nil); ok {
		t.Error("empty times gave a period")
	}
}

func TestResolvedTexts(t *testing.T) {
	d := invoicetest.SingleCustomer()
	d.Lines[0].Gross = 465500
	d.Texts.Notes = "notes keep {{invoice_number}}"
	r := d.ResolvedTexts()
	if r.Subject != "Rechnung RE-2026-000102" ||
		r.BeforeTable != "Bitte überweisen Sie 4.655,00 € unter Angabe von RE-2026-000102." ||
		r.AfterTable != "Fragen? Schreiben Sie uns." || r.Notes != "notes keep {{invoice_number}}" {
		t.Fatalf("resolved = %+v", r)
	}
	p := invoicetest.PaymentNotice()
	if got := p.ResolvedTexts().BeforeTable; got != "Zu Rechnung RE-2026-000102 sind noch 48,00 € offen." {
		t.Fatalf("payment notice total = %q", got)
	}
}

func TestPaymentTermsAndSplitNotes(t *testing.T) {
	if got := invoicetest.SingleCustomer().PaymentTerms(); got != "Zahlbar ohne Abzug bis 05.12.2026 per Überweisung, Verwendungszweck RE-2026-000102." {
		t.Errorf("terms = %q", got)
	}
	if got := invoicetest.PaymentNotice().PaymentTerms(); got != "Zahlbar ohne Abzug bis 20.12.2026 per Überweisung, Verwendungszweck RE-2026-000102." {
		t.Errorf("payment notice terms = %q", got)
	}
	if got := invoicetest.Cancellation().PaymentTerms(); got != "Der Betrag von 178,20 € wird mit offenen Forderungen verrechnet oder Ihnen erstattet." {
		t.Errorf("cancellation terms = %q", got)
	}
	notes := invoicetest.CollectionSplits().SplitNotes()
	want := []string{
		"Aufgeteilte Position 1 (Deutschlandticket Job November 2026, gesamt 58,00 €): Ihr Anteil 33,00 €; weitere Beteiligte: Anna Łęcka 25,00 €.",
		"Aufgeteilte Position 2 (Deutschlandticket Job Dezember 2026, gesamt 58,00 €): Ihr Anteil 19,00 €; weitere Beteiligte: Anna Łęcka (Begünstigte/r) 39,00 €.",
	}
	if len(notes) != 2 || notes[0] != want[0] || notes[1] != want[1] {
		t.Fatalf("notes = %q", notes)
	}
}

func TestFixturesValid(t *testing.T) {
	for _, f := range invoicetest.AllFlows() {
		if err := f.Doc.Validate(); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
	if err := invoicedoc.ValidateSeller(&invoicedoc.Seller{}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("empty seller: %v", err)
	}
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name  string
		field string
		mut   func(d *invoicedoc.Document)
	}{
		{"no number", "/number", func(d *invoicedoc.Document) { d.Number = " " }},
		{"no issue date", "/issue_date", func(d *invoicedoc.Document) { d.IssueDate = time.Time{} }},
		{"BR-DE-15 blank buyer reference", "/buyer/electronic_invoicing/buyer_reference", func(d *invoicedoc.Document) { d.Buyer.Electronic.BuyerReference = "  " }},
		{"BR-CL-25 buyer scheme", "/buyer/electronic_invoicing/electronic_address_scheme_id", func(d *invoicedoc.Document) { d.Buyer.Electronic.Scheme = "XX" }},
		{"BR-CL-25 seller scheme", "/seller/electronic_address_scheme", func(d *invoicedoc.Document) { d.Seller.ElectronicAddressScheme = "204" }},
		{"BR-63 buyer address", "/buyer/electronic_invoicing/electronic_address", func(d *invoicedoc.Document) { d.Buyer.Electronic.ElectronicAddress = "" }},
		{"BR-62 seller address", "/seller/electronic_address", func(d *invoicedoc.Document) { d.Seller.ElectronicAddress = "" }},
		{"BR-DE-5 contact", "/seller/contact_name", func(d *invoicedoc.Document) { d.Seller.ContactName = "" }},
		{"BR-DE-6/27 phone", "/seller/contact_phone", func(d *invoicedoc.Document) { d.Seller.ContactPhone = "+4" }},
		{"BR-DE-7/28 e-mail", "/seller/contact_email", func(d *invoicedoc.Document) { d.Seller.ContactEmail = "a@b" }},
		{"BR-DE-7/28 two @", "/seller/contact_email", func(d *invoicedoc.Document) { d.Seller.ContactEmail = "ab@cd@ef" }},
		{"BR-DE-16 tax id", "/seller/vat_id", func(d *invoicedoc.Document) { d.Seller.VATID, d.Seller.TaxNumber = "", "" }},
		{"BR-DE-19 IBAN checksum", "/seller/iban", func(d *invoicedoc.Document) { d.Seller.IBAN = "DE89 3704 0044 0532 0130 01" }},
		{"BR-06 seller name", "/seller/name", func(d *invoicedoc.Document) { d.Seller.Name = "" }},
		{"BR-DE-3 seller city", "/seller/address/city", func(d *invoicedoc.Document) { d.Seller.Address.City = "" }},
		{"BR-DE-4 seller post code", "/seller/address/postal_code", func(d *invoicedoc.Document) { d.Seller.Address.PostalCode = "" }},
		{"BR-09 seller country", "/seller/address/country_code", func(d *invoicedoc.Document) { d.Seller.Address.CountryCode = "de" }},
		{"BT-44 buyer name", "/buyer/electronic_invoicing/address/name", func(d *invoicedoc.Document) { d.Buyer.Electronic.Address.Name = "" }},
		{"BR-DE-8 buyer city", "/buyer/electronic_invoicing/address/city", func(d *invoicedoc.Document) { d.Buyer.Electronic.Address.City = "" }},
		{"BR-DE-9 buyer post code", "/buyer/electronic_invoicing/address/postal_code", func(d *invoicedoc.Document) { d.Buyer.Electronic.Address.PostalCode = "" }},
		{"address line too long", "/buyer/address_lines/1", func(d *invoicedoc.Document) { d.Buyer.AddressLines[1] = strings.Repeat("ä", 36) }},
		{"too many address lines", "/buyer/address_lines", func(d *invoicedoc.Document) { d.Buyer.AddressLines = make([]string, 6) }},
		{"no lines", "/lines", func(d *invoicedoc.Document) { d.Lines = nil }},
		{"blank ticket name", "/lines/0/name", func(d *invoicedoc.Document) { d.Lines[0].Name = "\t" }},
		{"BR-27 negative", "/lines/0/gross", func(d *invoicedoc.Document) { d.Lines[0].Gross = -1 }},
		{"BR-DE-14 rate", "/lines/0/rate_bp", func(d *invoicedoc.Document) { d.Lines[0].RateBP = 0 }},
		{"quantity", "/lines/0/quantity", func(d *invoicedoc.Document) { d.Lines[0].Quantity = 0 }},
		{"order time", "/lines/0/ordered_at", func(d *invoicedoc.Document) { d.Lines[0].OrderedAt = time.Time{} }},
		{"split share mismatch", "/lines/0/split/0/amount", func(d *invoicedoc.Document) { d.Lines[0].Split[0].Amount = 2299 }},
		{"split without invoiced", "/lines/0/split", func(d *invoicedoc.Document) { d.Lines[0].Split[0].Invoiced = false }},
		{"paid too much", "/payment/paid", func(d *invoicedoc.Document) { d.Payment.Paid = 2301 }},
		{"due before issue", "/payment/due_date", func(d *invoicedoc.Document) { d.Payment.DueDate = d.IssueDate.AddDate(0, 0, -1) }},
		{"cancellation without reference", "/cancels", func(d *invoicedoc.Document) { d.Kind = invoicedoc.KindCancellation }},
		{"BT-25 blank", "/cancels/number", func(d *invoicedoc.Document) { d.Cancels = &invoicedoc.Reference{IssueDate: d.IssueDate} }},
		{"BR-CO-09 VAT prefix", "/seller/vat_id", func(d *invoicedoc.Document) { d.Seller.VATID = "123456789" }},
		{"duplicate line id", "/lines/1/billable_item_id", func(d *invoicedoc.Document) { d.Lines = append(d.Lines, d.Lines[0]); d.Lines[1].Split = nil }},
		{"unknown kind", "/kind", func(d *invoicedoc.Document) { d.Kind = 9 }},
		{"no recipient above 250 €", "/buyer", func(d *invoicedoc.Document) { d.Buyer = nil; d.Lines[0].Split = nil; d.Lines[0].Gross = 25001 }},
	}
	for _, c := range cases {
		d := invoicetest.Split()
		c.mut(d)
		err := d.Validate()
		ae := apperr.As(err)
		if ae == nil || ae.Kind != apperr.Unprocessable || ae.Code != "invoice_invalid" {
			t.Errorf("%s: err = %v", c.name, err)
			continue
		}
		found := false
		for _, fe := range ae.Details {
			found = found || fe.Field == c.field
		}
		if !found {
			t.Errorf("%s: details %+v lack %s", c.name, ae.Details, c.field)
		}
	}
}

func TestIBAN(t *testing.T) {
	for _, ok := range []string{"DE89370400440532013000", "de89 3704 0044 0532 0130 00", "GB82 WEST 1234 5698 7654 32"} {
		if !invoicedoc.ValidIBAN(ok) {
			t.Errorf("%s rejected", ok)
		}
	}
	for _, bad := range []string{"", "DE00370400440532013000", "DE8937040044053201300!", "XX89"} {
		if invoicedoc.ValidIBAN(bad) {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestKindAndBuyer(t *testing.T) {
	if invoicedoc.KindCancellation.TypeCode() != "381" || invoicedoc.KindInvoice.TypeCode() != "380" || invoicedoc.KindPaymentNotice.TypeCode() != "380" {
		t.Error("type codes")
	}
	if invoicetest.Amt().Name() != "Stadt Beispielstadt" || (&invoicedoc.Buyer{AddressLines: []string{"Max"}}).Name() != "Max" {
		t.Error("buyer name")
	}
	if invoicetest.SingleNoCustomer().HasElectronic() || !invoicetest.Split().HasElectronic() {
		t.Error("HasElectronic")
	}
}

// TestValidEmail tables BR-DE-28 as the XRechnung 3.0 schematron checks it
// (x@example.com and a@bc.de were refused by a two-characters-per-side rule).
func TestValidEmail(t *testing.T) {
	valid := []string{"x@example.com", "a@bc.de", "rechnung@stadtwerke-musterstadt.de", "first.last+tag@sub.example.co.uk",
		"a@b.c", "ÄÖ@müller.de", "o'brien@example.ie", "1@2.3"}
	invalid := []string{"", "@", "a@", "@b.de", "a@b", "a@b.", "a@.de", "a@b..de", "a@@b.de", "a@b@c.de", "a b@c.de", "a@b .de",
		" a@b.de", "a@b.de ", "a\t@b.de", "rechnung", "a.example.com"}
	for _, s := range valid {
		if !invoicedoc.ValidEmail(s) {
			t.Errorf("ValidEmail(%q) = false, want true", s)
		}
	}
	for _, s := range invalid {
		if invoicedoc.ValidEmail(s) {
			t.Errorf("ValidEmail(%q) = true, want false", s)
		}
	}
}
