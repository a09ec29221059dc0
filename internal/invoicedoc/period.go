package invoicedoc

import (
	"fmt"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/money"
)

// PeriodKind is which of the interface's three service period rules applies.
type PeriodKind int

const (
	// PeriodPoint: one item; its order time (Leistungszeitpunkt, date and time).
	PeriodPoint PeriodKind = iota + 1
	// PeriodMonth: several items ordered in one Berlin calendar month.
	PeriodMonth
	// PeriodRange: several items ordered in different months.
	PeriodRange
)

// ServicePeriod is the time of supply printed on the document.
type ServicePeriod struct {
	Kind  PeriodKind
	First time.Time // earliest order time (UTC instant)
	Last  time.Time // latest order time; equals First for PeriodPoint
}

var germanMonths = [...]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli",
	"August", "September", "Oktober", "November", "Dezember"}

// ComputeServicePeriod applies the interface's rules to the items' order
// times: one time gives a point, several times within one Europe/Berlin
// calendar month give that month, anything else the range from the first to
// the last. It returns false when there are no times.
func ComputeServicePeriod(orderTimes []time.Time) (ServicePeriod, bool) {
	if len(orderTimes) == 0 {
		return ServicePeriod{}, false
	}
	first, last := orderTimes[0], orderTimes[0]
	for _, t := range orderTimes[1:] {
		if t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	p := ServicePeriod{First: first.UTC(), Last: last.UTC()}
	switch {
	case len(orderTimes) == 1:
		p.Kind = PeriodPoint
	case clock.MonthStart(first, clock.Berlin).Equal(clock.MonthStart(last, clock.Berlin)):
		p.Kind = PeriodMonth
	default:
		p.Kind = PeriodRange
	}
	return p, true
}

// ServicePeriod computes the period from the document's lines.
func (d *Document) ServicePeriod() (ServicePeriod, bool) {
	times := make([]time.Time, len(d.Lines))
	for i, l := range d.Lines {
		times[i] = l.OrderedAt
	}
	return ComputeServicePeriod(times)
}

// Label is the German label: Leistungszeitpunkt or Leistungszeitraum.
func (p ServicePeriod) Label() string {
	if p.Kind == PeriodPoint {
		return "Leistungszeitpunkt"
	}
	return "Leistungszeitraum"
}

// Text is the German value, in Europe/Berlin: "21.11.2026, 14:03 Uhr",
// "November 2026" or "03.10.2026 – 21.11.2026".
func (p ServicePeriod) Text() string {
	f, l := p.First.In(clock.Berlin), p.Last.In(clock.Berlin)
	switch p.Kind {
	case PeriodPoint:
		return GermanDateTime(f)
	case PeriodMonth:
		return fmt.Sprintf("%s %d", germanMonths[f.Month()-1], f.Year())
	default:
		return f.Format("02.01.2006") + " – " + l.Format("02.01.2006")
	}
}

// Dates are the calendar dates (Berlin) the XML carries: for a point the
// delivery date (BT-72, start == end); for a month its first and last day;
// for a range the first and last order date (BG-14).
func (p ServicePeriod) Dates() (start, end time.Time) {
	f, l := p.First.In(clock.Berlin), p.Last.In(clock.Berlin)
	day := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) }
	switch p.Kind {
	case PeriodPoint:
		return day(f), day(f)
	case PeriodMonth:
		s := time.Date(f.Year(), f.Month(), 1, 0, 0, 0, 0, time.UTC)
		return s, s.AddDate(0, 1, -1)
	default:
		return day(f), day(l)
	}
}

// CalendarDate converts an instant to its Europe/Berlin calendar date
// (midnight UTC of that date), the form every XML date is written in.
func CalendarDate(t time.Time) time.Time {
	b := t.In(clock.Berlin)
	return time.Date(b.Year(), b.Month(), b.Day(), 0, 0, 0, 0, time.UTC)
}

// GermanDate formats an instant as its Berlin date "21.11.2026".
func GermanDate(t time.Time) string { return t.In(clock.Berlin).Format("02.01.2006") }

// GermanDateTime formats an instant as "21.11.2026, 14:03 Uhr" (Berlin).
func GermanDateTime(t time.Time) string {
	return t.In(clock.Berlin).Format("02.01.2006, 15:04") + " Uhr"
}

// ReplaceTags substitutes {{invoice_number}} with number and {{total_amount}}
// with the German formatted amount ("4.655,00 €").
func ReplaceTags(s, number string, total money.Cents) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return strings.NewReplacer("{{invoice_number}}", number, "{{total_amount}}", total.German()).Replace(s)
}

// ResolvedTexts returns the texts with tags replaced. As the interface
// specifies, tags are replaced in the subject and the texts before and after
// the table; notes are taken literally. {{total_amount}} is the amount the
// buyer has to pay (Totals.Payable).
func (d *Document) ResolvedTexts() Texts {
	total := d.Totals().Payable
	return Texts{
		Subject:     ReplaceTags(d.Texts.Subject, d.Number, total),
		Notes:       d.Texts.Notes,
		BeforeTable: ReplaceTags(d.Texts.BeforeTable, d.Number, total),
		AfterTable:  ReplaceTags(d.Texts.AfterTable, d.Number, total),
	}
}

// MaxPaymentReference is the length of a SEPA remittance text.
const MaxPaymentReference = 140

// PaymentReference is the purpose of transfer (BT-83), so that the bank
// transfer can be matched: for a payment notice the numbers of the invoices
// it asks to pay (Preceding), led by the notice's own number when it also
// lists items not invoiced yet; otherwise, or when that would not fit a SEPA
// remittance text, the document's own number.
func (d *Document) PaymentReference() string {
	if d.Kind != KindPaymentNotice {
		return d.Number
	}
	var nums []string
	if d.Cancels == nil {
		for _, l := range d.Lines {
			if l.Invoice == nil {
				nums = append(nums, d.Number)
				break
			}
		}
	}
	for _, r := range d.Preceding() {
		nums = append(nums, r.Number)
	}
	ref := strings.Join(nums, " ")
	if ref == "" || len(ref) > MaxPaymentReference {
		return d.Number
	}
	return ref
}

// PaymentTerms is BT-20: the configured text, or a generated German sentence
// naming the due date and the purpose of transfer.
func (d *Document) PaymentTerms() string {
	if strings.TrimSpace(d.Payment.Terms) != "" {
		return d.Payment.Terms
	}
	t := d.Totals()
	switch {
	case d.Kind == KindCancellation:
		return fmt.Sprintf("Der Betrag von %s wird mit offenen Forderungen verrechnet oder Ihnen erstattet.", t.Payable.German())
	case t.Payable <= 0:
		return "Der Rechnungsbetrag ist bereits bezahlt."
	case !d.Payment.DueDate.IsZero():
		return fmt.Sprintf("Zahlbar ohne Abzug bis %s per Überweisung, Verwendungszweck %s.",
			GermanDate(d.Payment.DueDate), d.PaymentReference())
	default:
		return fmt.Sprintf("Zahlbar ohne Abzug per Überweisung, Verwendungszweck %s.", d.PaymentReference())
	}
}

// SplitNotes are the passive participants of split lines as German sentences
// (one per split line), for the XML notes (BT-22) and the PDF.
func (d *Document) SplitNotes() []string {
	var out []string
	for _, p := range d.Positions() {
		var parts []string
		for i, s := range p.Split {
			if s.Invoiced {
				continue
			}
			role := ""
			if i == 0 {
				role = " (Begünstigte/r)"
			}
			parts = append(parts, fmt.Sprintf("%s%s %s", s.Name, role, s.Amount.German()))
		}
		if len(parts) == 0 {
			continue
		}
		each := ""
		if len(p.Items) > 1 {
			each = fmt.Sprintf(" je Stück, %d Stück", len(p.Items))
		}
		out = append(out, fmt.Sprintf("Aufgeteilte Position %d (%s, gesamt %s%s): Ihr Anteil %s; weitere Beteiligte: %s.",
			p.Number, p.Name, p.SplitTotal().German(), each, (p.Gross/money.Cents(len(p.Items))).German(), strings.Join(parts, ", ")))
	}
	return out
}
