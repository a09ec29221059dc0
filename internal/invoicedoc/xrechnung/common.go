package xrechnung

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/money"
)

const (
	// CustomizationID is BT-24 of XRechnung 3.0 invoices and credit notes.
	CustomizationID = "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"
	// PaymentNoticeID is BT-24 of payment notices: deliberately not the
	// XRechnung identifier, so the document claims no conformance.
	PaymentNoticeID = "urn:farebox:payment-notice:1.0"
	// ProfileID is BT-23, the Peppol billing process.
	ProfileID = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"
	// PaymentMeansCode is BT-81: SEPA credit transfer.
	PaymentMeansCode = "58"
	// UnitCode is the quantity unit of every line: one (C62).
	UnitCode = "C62"
)

// NonConformanceNote is the note every payment notice carries.
const NonConformanceNote = "Zahlungsaufforderung, keine Rechnung: Dieses Dokument folgt der XML-Struktur von XRechnung, " +
	"beansprucht aber keine Konformität mit XRechnung oder EN 16931."

// TestNote is the note of documents from the test environment.
const TestNote = "TESTDOKUMENT aus der Testumgebung: keine gültige Rechnung, bitte nicht bezahlen."

// prepared is everything both encoders need, computed once.
type prepared struct {
	d         *invoicedoc.Document
	e         *invoicedoc.ElectronicInvoicing
	positions []invoicedoc.Position
	totals    invoicedoc.Totals
	period    invoicedoc.ServicePeriod
	texts     invoicedoc.Texts
	notes     []string
	terms     string
	specID    string
	iban      string
	hasDue    bool
	dueDate   time.Time
}

func prepare(op string, d *invoicedoc.Document) (*prepared, error) {
	if d == nil {
		return nil, apperr.E(op, apperr.Invalid, CodeInvoiceMissing, "no invoice document")
	}
	if !d.HasElectronic() {
		return nil, apperr.E(op, apperr.Unprocessable, CodeElectronicInvoicingMissing,
			"the customer has no electronic invoicing details, so no XRechnung file can be generated")
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	p := &prepared{d: d, e: d.Buyer.Electronic, positions: d.Positions(), totals: d.Totals(), texts: d.ResolvedTexts(),
		terms: d.PaymentTerms(), specID: CustomizationID, iban: invoicedoc.NormalizeIBAN(d.Seller.IBAN)}
	p.period, _ = d.ServicePeriod()
	if d.Kind == invoicedoc.KindPaymentNotice {
		p.specID = PaymentNoticeID
	}
	if !d.Payment.DueDate.IsZero() && d.Kind != invoicedoc.KindCancellation {
		p.hasDue, p.dueDate = true, d.Payment.DueDate
	}
	p.notes = notes(d, p.texts)
	return p, nil
}

// notes are the document-level notes (BT-22) in a fixed order.
func notes(d *invoicedoc.Document, t invoicedoc.Texts) []string {
	var out []string
	add := func(s string) {
		if clean(s) != "" {
			out = append(out, s)
		}
	}
	if d.Test {
		add(TestNote)
	}
	switch d.Kind {
	case invoicedoc.KindPaymentNotice:
		add(NonConformanceNote)
		for _, r := range d.Preceding() {
			add(fmt.Sprintf("Zahlungsaufforderung zu Rechnung %s vom %s.", r.Number, invoicedoc.GermanDate(r.IssueDate)))
		}
	case invoicedoc.KindCancellation:
		add(fmt.Sprintf("Stornorechnung zu Rechnung %s vom %s.", d.Cancels.Number, invoicedoc.GermanDate(d.Cancels.IssueDate)))
	}
	add(t.Subject)
	add(t.BeforeTable)
	add(t.AfterTable)
	add(t.Notes)
	for _, n := range d.SplitNotes() {
		add(n)
	}
	return out
}

func ublDate(t time.Time) string { return invoicedoc.CalendarDate(t).Format("2006-01-02") }
func ciiDate(t time.Time) string { return invoicedoc.CalendarDate(t).Format("20060102") }

// percent formats basis points without trailing zeros: 700 → "7", 550 → "5.5".
func percent(bp int64) string {
	s := money.RatePercent(bp)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// unitPrice is BT-146, the net price of one unit: net / quantity with the
// fewest decimals (at least two) for which quantity × price, rounded to the
// cent, is the line net again (PEPPOL-EN16931-R120); exact for quantity 1.
func unitPrice(net money.Cents, qty int64) string {
	if qty == 1 {
		return net.Decimal()
	}
	exact := new(big.Rat).SetFrac64(int64(net), qty*100)
	var s string
	for dec := 2; ; dec++ {
		s = exact.FloatString(dec)
		price, _ := new(big.Rat).SetString(s)
		line := new(big.Rat).Mul(price, new(big.Rat).SetInt64(qty))
		if line.FloatString(2) == net.Decimal() || exact.Cmp(price) == 0 {
			break
		}
	}
	s = strings.TrimRight(s, "0")
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 < 2 {
		s += strings.Repeat("0", 2-(len(s)-i-1))
	}
	return s
}

// lineNote is BT-127 of a position: when the items were ordered and which
// billable items it bills (their ids, so a partner can match them), and the
// invoice that already bills them on a collection payment notice.
func lineNote(d *invoicedoc.Document, p invoicedoc.Position) string {
	var b strings.Builder
	b.WriteString("Bestellt am ")
	for k, i := range p.Items {
		if k > 0 {
			b.WriteString("; ")
		}
		l := d.Lines[i]
		if l.Invoice != nil {
			fmt.Fprintf(&b, "%s (%s, Rechnung %s)", invoicedoc.GermanDateTime(l.OrderedAt), l.BillableItemID, l.Invoice.Number)
		} else {
			fmt.Fprintf(&b, "%s (%s)", invoicedoc.GermanDateTime(l.OrderedAt), l.BillableItemID)
		}
	}
	for k, r := range p.Invoices {
		sep := ", "
		if k == 0 {
			sep = "; abgerechnet mit Rechnung "
		}
		fmt.Fprintf(&b, "%s%s vom %s", sep, r.Number, invoicedoc.GermanDate(r.IssueDate))
	}
	return b.String()
}

func quantity(q int64) string { return fmt.Sprintf("%d", q) }

// encode renders d: prepare's checks first, then body writes the document
// on a fresh writer; a failure of the writer is encodeErr's.
func encode(op string, d *invoicedoc.Document, body func(w *writer, p *prepared)) ([]byte, error) {
	p, err := prepare(op, d)
	if err != nil {
		return nil, err
	}
	w := newWriter()
	body(w, p)
	out, err := w.finish()
	if err != nil {
		return nil, encodeErr(op, err)
	}
	return out, nil
}

// encodeErr classifies a writer failure: a required value that is empty
// after XML cleaning is the caller's data (Unprocessable); anything else is
// a bug (Internal).
func encodeErr(op string, err error) error {
	var re *requiredError
	if errors.As(err, &re) {
		e := apperr.E(op, apperr.Unprocessable, CodeInvoiceInvalid, err.Error())
		e.Err = err
		return e
	}
	return apperr.Wrap(op, err)
}
