package xrechnung

import (
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/money"
)

// eachView runs check on both syntaxes of every XML flow.
func eachView(t *testing.T, check func(t *testing.T, d *invoicedoc.Document, v *view)) {
	for _, f := range invoicetest.XMLFlows() {
		for _, v := range views(t, f.Doc) {
			t.Run(f.Name+"/"+v.syntax, func(t *testing.T) { check(t, f.Doc, v) })
		}
	}
}

func TestHeaderRules(t *testing.T) {
	eachView(t, func(t *testing.T, d *invoicedoc.Document, v *view) {
		// BR-DE-21 / scenario: exact BT-24; payment notices claim nothing.
		wantSpec := CustomizationID
		if d.Kind == invoicedoc.KindPaymentNotice {
			wantSpec = PaymentNoticeID
			if !slices.Contains(v.notes, NonConformanceNote) {
				t.Errorf("payment notice lacks the non-conformance note: %q", v.notes)
			}
		} else if slices.Contains(v.notes, NonConformanceNote) {
			t.Errorf("invoice carries the payment-notice note")
		}
		if v.specID != wantSpec {
			t.Errorf("BT-24 = %q", v.specID)
		}
		if v.profileID != ProfileID { // PEPPOL-EN16931-R001
			t.Errorf("BT-23 = %q", v.profileID)
		}
		if v.number != d.Number || v.issueDate != "20261121" && d.Kind == invoicedoc.KindInvoice {
			t.Errorf("BT-1/BT-2 = %q %q", v.number, v.issueDate)
		}
		// BR-DE-15: buyer reference present and equal to the customer's.
		if strings.TrimSpace(v.buyerRef) == "" || v.buyerRef != d.Buyer.Electronic.BuyerReference {
			t.Errorf("BT-10 = %q", v.buyerRef)
		}
		// BR-DE-17 list, and BR-CL-01: 381 only in a UBL CreditNote.
		if !slices.Contains([]string{"326", "380", "384", "389", "381", "875", "876", "877"}, v.typeCode) || v.typeCode != d.Kind.TypeCode() {
			t.Errorf("BT-3 = %q", v.typeCode)
		}
		if v.syntax == "ubl" && (v.typeCode == "381") != (v.root == "CreditNote") {
			t.Errorf("BR-CL-01: type %s in root %s", v.typeCode, v.root)
		}
		// BR-DE-26: credit notes and payment notices for an invoice reference it (BG-3).
		// A collection payment notice references the invoices of its items.
		if refs := d.Preceding(); len(refs) > 0 {
			if v.refNumber != refs[0].Number || v.refDate != invoicedoc.CalendarDate(refs[0].IssueDate).Format("20060102") {
				t.Errorf("BG-3 = %q %q", v.refNumber, v.refDate)
			}
		} else if v.refNumber != "" {
			t.Errorf("unexpected BG-3 %q", v.refNumber)
		}
		// Dates strictly formatted (BR-TMP-6/7 in 2.6.0).
		for _, s := range []string{v.issueDate, v.dueDate, v.deliveryDate, v.periodStart, v.periodEnd, v.refDate} {
			if s != "" && !regexp.MustCompile(`^20\d\d(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$`).MatchString(s) {
				t.Errorf("bad date %q", s)
			}
		}
		if d.Test != slices.Contains(v.notes, TestNote) {
			t.Errorf("test note presence %v, test flag %v", slices.Contains(v.notes, TestNote), d.Test)
		}
	})
}

func TestPartyRules(t *testing.T) {
	eachView(t, func(t *testing.T, d *invoicedoc.Document, v *view) {
		s, e := d.Seller, d.Buyer.Electronic
		// BR-06, BR-08, BR-09, BR-DE-3, BR-DE-4; BR-07, BR-DE-8, BR-DE-9 (both parties).
		got := []string{v.sellerName, v.sellerStreet, v.sellerCity, v.sellerPost, v.sellerCountry,
			v.buyerName, v.buyerStreet, v.buyerCity, v.buyerPost, v.buyerCountry}
		want := []string{s.Name, s.Address.Street, s.Address.City, s.Address.PostalCode, s.Address.CountryCode,
			e.Address.Name, e.Address.Street, e.Address.City, e.Address.PostalCode, e.Address.CountryCode}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("party field %d = %q, want %q", i, got[i], want[i])
			}
		}
		// BR-DE-16 / BR-CO-26: VAT id and tax number.
		if v.sellerVAT != s.VATID || v.sellerTaxNo != s.TaxNumber {
			t.Errorf("BT-31/32 = %q %q", v.sellerVAT, v.sellerTaxNo)
		}
		// BR-DE-2, -5, -6, -7 and the format warnings BR-DE-27, -28.
		if v.contactName != s.ContactName || v.contactPhone != s.ContactPhone || v.contactEmail != s.ContactEmail {
			t.Errorf("BG-6 = %q %q %q", v.contactName, v.contactPhone, v.contactEmail)
		}
		if !regexp.MustCompile(`\d.*\d.*\d`).MatchString(v.contactPhone) ||
			!regexp.MustCompile(`^[^@\s]{2,}@[^@\s]{2,}$`).MatchString(v.contactEmail) {
			t.Errorf("BR-DE-27/28 format: %q %q", v.contactPhone, v.contactEmail)
		}
		// PEPPOL-EN16931-R010/R020, BR-62/63, BR-CL-25: both electronic addresses with EAS schemes.
		if v.sellerEndpoint != s.ElectronicAddress || v.sellerScheme != s.ElectronicAddressScheme || !invoicedoc.KnownScheme(v.sellerScheme) {
			t.Errorf("BT-34 = %q (%q)", v.sellerEndpoint, v.sellerScheme)
		}
		if v.buyerEndpoint != e.ElectronicAddress || v.buyerScheme != e.Scheme || !invoicedoc.KnownScheme(v.buyerScheme) {
			t.Errorf("BT-49 = %q (%q)", v.buyerEndpoint, v.buyerScheme)
		}
	})
}

func TestPaymentRules(t *testing.T) {
	eachView(t, func(t *testing.T, d *invoicedoc.Document, v *view) {
		// BR-DE-1, BR-DE-23-a/b, BR-DE-19: one credit transfer with a valid IBAN.
		if len(v.paymentCodes) != 1 || v.paymentCodes[0] != "58" || !invoicedoc.ValidIBAN(v.iban) || v.iban != "DE89370400440532013000" {
			t.Errorf("BG-16 = %q %q", v.paymentCodes, v.iban)
		}
		if v.terms != d.PaymentTerms() || strings.Contains(v.terms, "#SKONTO#") {
			t.Errorf("BT-20 = %q", v.terms)
		}
		wantDue := ""
		if d.Kind != invoicedoc.KindCancellation && !d.Payment.DueDate.IsZero() {
			wantDue = invoicedoc.CalendarDate(d.Payment.DueDate).Format("20060102")
		}
		if v.dueDate != wantDue {
			t.Errorf("BT-9 = %q, want %q", v.dueDate, wantDue)
		}
	})
}

func TestArithmeticRules(t *testing.T) {
	eachView(t, func(t *testing.T, d *invoicedoc.Document, v *view) {
		tot := d.Totals()
		pos := d.Positions()
		var nets, charged money.Cents
		perRate := map[string]money.Cents{}
		if len(v.lines) != len(pos) {
			t.Fatalf("%d XML lines for %d positions", len(v.lines), len(pos))
		}
		for i, l := range v.lines {
			nets += l.net
			perRate[l.percent] += l.net
			charged += pos[i].Gross
			// BR-DE-14 / BR-S-05 on lines; BR-27 price positive; R120 quantity × price.
			if l.category != "S" || l.percent != "7" {
				t.Errorf("line %d category %q rate %q", i, l.category, l.percent)
			}
			if strings.HasPrefix(l.price, "-") || l.qty != strconv.FormatInt(pos[i].Quantity, 10) || l.unit != "C62" || qtyTimesPrice(t, l.qty, l.price) != l.net {
				t.Errorf("line %d price %q qty %q unit %q net %d", i, l.price, l.qty, l.unit, l.net)
			}
			if l.id != strconv.Itoa(i+1) || l.name != pos[i].Name {
				t.Errorf("line %d = %q %q", i, l.id, l.name)
			}
			// BT-127 names every billable item of the line and its order time.
			for _, k := range pos[i].Items {
				if !strings.Contains(l.note, "("+d.Lines[k].BillableItemID) || !strings.Contains(l.note, invoicedoc.GermanDateTime(d.Lines[k].OrderedAt)) {
					t.Errorf("line %d note %q lacks item %s", i, l.note, d.Lines[k].BillableItemID)
				}
			}
			if l.net != tot.Positions[i].Net {
				t.Errorf("line %d net %d, model %d", i, l.net, tot.Positions[i].Net)
			}
		}
		if nets != v.lineTotal { // BR-CO-10
			t.Errorf("BR-CO-10: Σ lines %d != BT-106 %d", nets, v.lineTotal)
		}
		var vatSum money.Cents
		for _, g := range v.groups {
			if g.category != "S" || g.percent == "" { // BR-DE-14
				t.Errorf("breakdown %+v", g)
			}
			if perRate[g.percent] != g.taxable { // BR-S-08
				t.Errorf("BR-S-08: taxable %d, Σ lines %d", g.taxable, perRate[g.percent])
			}
			if diff := g.vat - money.Share(g.taxable, 700, 10000); diff < -1 || diff > 1 { // BR-CO-17 / BR-S-09, within a cent
				t.Errorf("BR-S-09: VAT %d vs taxable × rate %d", g.vat, money.Share(g.taxable, 700, 10000))
			}
			vatSum += g.vat
		}
		if len(v.groups) != 1 || vatSum != v.vatTotal {
			t.Errorf("breakdowns %d, Σ VAT %d vs BT-110 %d", len(v.groups), vatSum, v.vatTotal)
		}
		if v.taxExcl != v.lineTotal || v.taxIncl != v.taxExcl+v.vatTotal { // BR-CO-13, BR-CO-15
			t.Errorf("BR-CO-15: %d + %d != %d", v.taxExcl, v.vatTotal, v.taxIncl)
		}
		if v.payable != v.taxIncl-v.paid || v.paid != d.Payment.Paid { // BR-CO-16
			t.Errorf("BR-CO-16: %d − %d != %d", v.taxIncl, v.paid, v.payable)
		}
		if v.taxIncl != charged || v.vatTotal != tot.VAT { // rounding: the total is what was charged
			t.Errorf("BT-112 %d, charged %d; VAT %d model %d", v.taxIncl, charged, v.vatTotal, tot.VAT)
		}
		for _, a := range v.amounts { // BR-DEC-*
			cents(t, a)
			if !regexp.MustCompile(`^-?\d+\.\d\d$`).MatchString(a) {
				t.Errorf("amount %q not written with two decimals", a)
			}
		}
	})
}

func TestServicePeriodAndNotes(t *testing.T) {
	eachView(t, func(t *testing.T, d *invoicedoc.Document, v *view) {
		p, _ := d.ServicePeriod()
		s, e := p.Dates()
		// BR-DE-TMP-32: delivery date or invoicing period.
		if p.Kind == invoicedoc.PeriodPoint {
			if v.deliveryDate != s.Format("20060102") || v.periodStart != "" {
				t.Errorf("BT-72 = %q, period %q", v.deliveryDate, v.periodStart)
			}
		} else if v.periodStart != s.Format("20060102") || v.periodEnd != e.Format("20060102") || v.deliveryDate != "" {
			t.Errorf("BG-14 = %q..%q, delivery %q", v.periodStart, v.periodEnd, v.deliveryDate)
		}
		for _, n := range d.SplitNotes() { // passive participants as notes
			if !slices.Contains(v.notes, n) {
				t.Errorf("split note missing: %q", n)
			}
		}
		r := d.ResolvedTexts()
		for _, txt := range []string{r.Subject, r.BeforeTable, r.AfterTable, r.Notes} {
			if txt != "" && !slices.Contains(v.notes, txt) {
				t.Errorf("text missing from notes: %q", txt)
			}
			if strings.Contains(strings.Join(v.notes, " "), "{{total_amount}}") {
				t.Errorf("unreplaced tag in notes")
			}
		}
	})
}

func TestSpecificFlows(t *testing.T) {
	for _, v := range views(t, invoicetest.CollectionMonths()) {
		if v.periodStart != "20261001" || v.periodEnd != "20261120" || v.taxIncl != 17820 || v.vatTotal != 1166 || len(v.lines) != 4 {
			t.Errorf("%s collection: %s..%s %d %d", v.syntax, v.periodStart, v.periodEnd, v.taxIncl, v.vatTotal)
		}
		if !slices.Contains(v.notes, "Gesamtbetrag 178,20 € – Rechnung RE-2026-000104") || v.buyerScheme != "0204" {
			t.Errorf("%s collection notes %q", v.syntax, v.notes)
		}
	}
	for _, v := range views(t, invoicetest.CollectionMonth()) {
		if v.periodStart != "20261101" || v.periodEnd != "20261130" || v.number != "TEST-RE-2026-000007" {
			t.Errorf("%s month: %s..%s", v.syntax, v.periodStart, v.periodEnd)
		}
	}
	// A collection payment notice references every invoice of its items
	// (BG-3; CII D16B has one header reference, the others are on their
	// lines) and names them in the purpose of transfer (BT-83) beside its
	// own number for the item not invoiced yet. Identical tickets are one
	// line with a quantity.
	for _, v := range views(t, invoicetest.CollectionPaymentNotice()) {
		wantRefs := "RE-2026-000110 RE-2026-000111"
		if v.syntax == "cii" {
			// D16B: one header reference; the line mixes both invoices, so
			// the second is named in BT-83, the notes and the line note.
			wantRefs = "RE-2026-000110"
		}
		if strings.Join(v.refNumbers, " ") != wantRefs || v.refDate != "20261105" || v.specID != PaymentNoticeID ||
			v.paymentRef != "ZA-2026-000002 RE-2026-000110 RE-2026-000111" || len(v.lines) != 2 ||
			v.lines[0].qty != "3" || v.lines[0].price != "2.793" || v.lines[0].net != 838 || v.lines[1].qty != "1" {
			t.Errorf("%s collection payment notice: refs %q %s, BT-83 %q, lines %+v", v.syntax, v.refNumbers, v.refDate, v.paymentRef, v.lines)
		}
		if !slices.Contains(v.notes, "Zahlungsaufforderung zu Rechnung RE-2026-000111 vom 12.11.2026.") ||
			!strings.Contains(v.lines[0].note, "abgerechnet mit Rechnung RE-2026-000110 vom 05.11.2026, RE-2026-000111 vom 12.11.2026") {
			t.Errorf("%s collection payment notice notes: %q / %q", v.syntax, v.notes, v.lines[0].note)
		}
	}
	for _, v := range views(t, invoicetest.Split()) {
		want := "Aufgeteilte Position 1 (Deutschlandticket Job Dezember 2026, gesamt 58,00 €): Ihr Anteil 23,00 €; " +
			"weitere Beteiligte: Jörg Weiß 25,00 €, Éloïse Dubois 10,00 €."
		if !slices.Contains(v.notes, want) || v.taxIncl != 2300 || v.deliveryDate != "20261102" {
			t.Errorf("%s split: %q %d %s", v.syntax, v.notes, v.taxIncl, v.deliveryDate)
		}
	}
	for _, v := range views(t, invoicetest.Cancellation()) {
		if v.typeCode != "381" || v.refNumber != "RE-2026-000104" || v.taxIncl != 17820 || v.payable != 17820 || v.dueDate != "" {
			t.Errorf("%s cancellation: %s %s %d", v.syntax, v.typeCode, v.refNumber, v.payable)
		}
		if v.syntax == "ubl" && (v.root != "CreditNote" || len(v.tree.all("CreditNoteLine")) != 4 || len(v.tree.all("InvoiceLine")) != 0) {
			t.Errorf("ubl cancellation root %s", v.root)
		}
	}
	for _, v := range views(t, invoicetest.PaymentNotice()) {
		if v.paid != 1000 || v.payable != 4800 || v.specID != PaymentNoticeID || v.typeCode != "380" || v.refNumber != "RE-2026-000102" {
			t.Errorf("%s payment notice: paid %d payable %d", v.syntax, v.paid, v.payable)
		}
	}
}

// TestNoEmptyElements walks every generated file (PEPPOL-EN16931-R008).
func TestNoEmptyElements(t *testing.T) {
	eachView(t, func(t *testing.T, d *invoicedoc.Document, v *view) {
		delivery := 0
		v.tree.walk(func(n *node) {
			if len(n.children) == 0 && strings.TrimSpace(n.text) == "" {
				if n.name == "ApplicableHeaderTradeDelivery" {
					delivery++
					return
				}
				t.Errorf("empty element %s", n.name)
			}
			if n.name == "ApplicableHeaderTradeDelivery" && len(n.children) > 0 {
				delivery++
			}
		})
		if v.syntax == "cii" && delivery != 1 {
			t.Errorf("CII ApplicableHeaderTradeDelivery count %d", delivery)
		}
	})
	// Optional values that are blank or only control characters are omitted.
	d := invoicetest.SingleCustomer()
	d.Seller.LegalInfo, d.Seller.BIC, d.Seller.AccountHolder = "  ", "\x01", "\t"
	d.Texts = invoicedoc.Texts{Subject: " ", Notes: "\x00\x1f", BeforeTable: "\n", AfterTable: ""}
	d.Buyer.Electronic.Address.AdditionalLine1 = " "
	for _, v := range views(t, d) {
		v.tree.walk(func(n *node) {
			if len(n.children) == 0 && n.text == "" && n.name != "ApplicableHeaderTradeDelivery" {
				t.Errorf("%s: empty element %s", v.syntax, n.name)
			}
			if n.name == "CompanyLegalForm" || n.name == "BICID" || n.name == "AdditionalStreetName" || n.name == "LineTwo" || n.name == "FinancialInstitutionBranch" {
				t.Errorf("%s: optional %s written", v.syntax, n.name)
			}
		})
		if v.syntax == "cii" && len(v.tree.all("SupplyChainTradeTransaction/ApplicableHeaderTradeAgreement/SellerTradeParty/Description")) != 0 {
			t.Errorf("cii: blank seller description written")
		}
		if len(v.notes) != 0 {
			t.Errorf("%s: notes %q", v.syntax, v.notes)
		}
	}
}

func TestRefusals(t *testing.T) {
	for name, enc := range map[string]func(*invoicedoc.Document) ([]byte, error){"ubl": EncodeUBL, "cii": EncodeCII} {
		out, err := enc(invoicetest.SingleNoCustomer())
		if ae := apperr.As(err); out != nil || ae == nil || ae.Kind != apperr.Unprocessable || ae.Code != "electronic_invoicing_missing" {
			t.Errorf("%s no customer: %v", name, err)
		}
		d := invoicetest.SingleCustomer()
		d.Buyer.Electronic = nil
		if _, err := enc(d); apperr.As(err) == nil || apperr.As(err).Code != "electronic_invoicing_missing" {
			t.Errorf("%s customer without electronic invoicing: %v", name, err)
		}
		d = invoicetest.SingleCustomer()
		d.Buyer.Electronic.BuyerReference = " \x02 "
		if _, err := enc(d); apperr.KindOf(err) != apperr.Unprocessable {
			t.Errorf("%s blank buyer reference: %v", name, err)
		}
		d = invoicetest.SingleCustomer()
		d.Seller.ElectronicAddressScheme = "XX"
		if _, err := enc(d); apperr.KindOf(err) != apperr.Unprocessable {
			t.Errorf("%s scheme XX: %v", name, err)
		}
		if _, err := enc(nil); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%s nil: %v", name, err)
		}
	}
}

// TestRoundingBasket: ten 49 € tickets total exactly 490.00 € (einvoice.md 2.5).
func TestRoundingBasket(t *testing.T) {
	d := invoicetest.SingleCustomer()
	d.Lines = nil
	for i := 0; i < 10; i++ {
		l := invoicetest.SingleCustomer().Lines[0]
		l.BillableItemID = "fb-billable-r" + string(rune('0'+i))
		l.Gross = 4900
		d.Lines = append(d.Lines, l)
	}
	for _, v := range views(t, d) {
		if v.taxIncl != 49000 || v.vatTotal != 3206 || v.lineTotal != 45794 || v.payable != 49000 {
			t.Errorf("%s: gross %d VAT %d net %d", v.syntax, v.taxIncl, v.vatTotal, v.lineTotal)
		}
	}
}

func TestFormatting(t *testing.T) {
	// BT-146: the fewest decimals (≥ 2) with round(quantity × price) = net.
	cases := map[string]string{unitPrice(1000, 3): "3.333", unitPrice(1000, 4): "2.50", unitPrice(4579, 1): "45.79",
		unitPrice(1001, 8): "1.251", unitPrice(838, 3): "2.793", unitPrice(45794, 10): "45.794", unitPrice(1, 1000): "0.00001", percent(700): "7", percent(1900): "19", percent(550): "5.5", percent(1025): "10.25"}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q want %q", got, want)
		}
	}
	if got := clean(" a\x00b\x1f\uFFFEc\xff "); got != "abc\uFFFD" {
		t.Errorf("clean = %q", got)
	}
}

// qtyTimesPrice is quantity × unit price rounded half away from zero to the
// cent, as PEPPOL-EN16931-R120 compares it with the line net.
func qtyTimesPrice(t testing.TB, qty, price string) money.Cents {
	t.Helper()
	q, ok1 := new(big.Rat).SetString(qty)
	p, ok2 := new(big.Rat).SetString(price)
	if !ok1 || !ok2 {
		t.Fatalf("quantity %q or price %q is not a decimal", qty, price)
	}
	return cents(t, new(big.Rat).Mul(q, p).FloatString(2))
}
