package pdf

import (
	"strings"

	"github.com/boxesandglue/boxesandglue/backend/bag"
	"github.com/boxesandglue/boxesandglue/frontend"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/money"
)

// minAddressSize is the smallest type size for an address line that is too
// wide for the address field at 10 pt (35 upper-case W fit at 6.9 pt).
const minAddressSize = 6.5

// body lays out the first-page header and the flowing content.
func (v *view) body(l *layout) {
	d, s := v.d, v.d.Seller
	// Letterhead.
	l.at(marginLeft, bag.MustSP("274mm"), l.text([]span{accent(s.Name)}, bag.MustSP("120mm"), 16, frontend.HAlignLeft))
	l.at(bag.MustSP("130mm"), bag.MustSP("274mm"), l.text([]span{muted(s.Address.Street + "\n" + s.Address.PostalCode + " " + s.Address.City +
		"\n" + s.ContactPhone + "\n" + s.ContactEmail)}, bag.MustSP("60mm"), 8, frontend.HAlignRight))

	// Address field (DIN 5008 form B position): sender line, then recipient.
	l.at(marginLeft, bag.MustSP("250mm"), l.text([]span{muted(s.Name + " · " + s.Address.Street + " · " + s.Address.PostalCode + " " + s.Address.City)},
		bag.MustSP("85mm"), 6.5, frontend.HAlignLeft))
	l.rect(marginLeft, bag.MustSP("246.5mm"), bag.MustSP("85mm"), bag.MustSP("0.3pt"), rgbRule)
	addrTop, addrWidth := bag.MustSP("244mm"), bag.MustSP("85mm")
	addrBottom := addrTop
	if d.Buyer != nil {
		// Each address line stays one line in the envelope window: a line
		// wider than the field (35 upper-case letters) is set smaller.
		for _, line := range d.Buyer.AddressLines {
			size := 10.0
			if w := textWidth(line, false, size); w > addrWidth {
				size = max(size*float64(addrWidth)/float64(w), minAddressSize)
			}
			vl := l.text([]span{plain(line)}, addrWidth, size, frontend.HAlignLeft)
			l.at(marginLeft, addrBottom, vl)
			addrBottom -= height(vl)
		}
	} else {
		vl := l.text([]span{muted("Ohne Empfängerangabe (Kleinbetragsrechnung, § 33 UStDV)")}, addrWidth, 10, frontend.HAlignLeft)
		l.at(marginLeft, addrTop, vl)
		addrBottom -= height(vl)
	}

	// Information block on the right.
	info := v.infoRows()
	y := bag.MustSP("250mm")
	for _, r := range info {
		lv := l.text([]span{muted(r[0])}, bag.MustSP("32mm"), 8.5, frontend.HAlignLeft)
		vv := l.text([]span{plain(r[1])}, bag.MustSP("41mm"), 8.5, frontend.HAlignRight)
		l.at(bag.MustSP("117mm"), y, lv)
		l.at(bag.MustSP("149mm"), y, vv)
		y -= max(height(lv), height(vv)) + bag.MustSP("1.2mm")
	}

	// Title and subject.
	l.y = min(bag.MustSP("202mm"), y-bag.MustSP("8mm"), addrBottom-bag.MustSP("8mm"))
	l.block(l.text([]span{accent(title(d) + " " + d.Number)}, contentWidth, 15, frontend.HAlignLeft), bag.MustSP("2mm"))
	if d.Kind == invoicedoc.KindCancellation {
		l.block(l.text([]span{bold("Storno der Rechnung " + d.Cancels.Number + " vom " + invoicedoc.GermanDate(d.Cancels.IssueDate) +
			". Die unten aufgeführten Beträge werden Ihnen gutgeschrieben bzw. erstattet.")}, contentWidth, 10, frontend.HAlignLeft), bag.MustSP("2mm"))
	}
	if d.Kind == invoicedoc.KindPaymentNotice {
		ref := "."
		if refs := d.Preceding(); len(refs) > 0 {
			var parts []string
			for _, r := range refs {
				parts = append(parts, r.Number+" vom "+invoicedoc.GermanDate(r.IssueDate))
			}
			ref = " zu Rechnung " + strings.Join(parts, ", ") + "."
		}
		l.block(l.text([]span{bold("Zahlungsaufforderung" + ref + " Dies ist keine Rechnung.")}, contentWidth, 10, frontend.HAlignLeft), bag.MustSP("2mm"))
	}
	if strings.TrimSpace(v.texts.Subject) != "" {
		l.flow([]span{bold(v.texts.Subject)}, 11, bag.MustSP("2mm"))
	}
	l.y -= bag.MustSP("3mm")
	if strings.TrimSpace(v.texts.BeforeTable) != "" {
		l.paragraphs(v.texts.BeforeTable, 10)
	}

	v.table(l)
	v.sums(l)

	if notes := d.SplitNotes(); len(notes) > 0 {
		l.block(l.text([]span{bold("Aufgeteilte Positionen (weitere Beteiligte)")}, contentWidth, 10, frontend.HAlignLeft), bag.MustSP("1.5mm"))
		for _, n := range notes {
			l.flow([]span{plain(n)}, 9, bag.MustSP("1mm"))
		}
		l.y -= bag.MustSP("3mm")
	}
	if strings.TrimSpace(v.texts.AfterTable) != "" {
		l.paragraphs(v.texts.AfterTable, 10)
	}
	if strings.TrimSpace(v.texts.Notes) != "" {
		l.paragraphs(v.texts.Notes, 10)
	}
	v.payment(l)
}

// infoRows are the label/value pairs of the information block.
func (v *view) infoRows() [][2]string {
	d := v.d
	label := "Rechnungsnummer"
	switch d.Kind {
	case invoicedoc.KindPaymentNotice:
		label = "Nummer"
	}
	rows := [][2]string{{label, d.Number}, {"Datum", invoicedoc.GermanDate(d.IssueDate)}}
	switch refs := d.Preceding(); {
	case len(refs) == 1:
		rows = append(rows, [2]string{"Zu Rechnung", refs[0].Number}, [2]string{"Rechnungsdatum", invoicedoc.GermanDate(refs[0].IssueDate)})
	case len(refs) > 1:
		var nums []string
		for _, r := range refs {
			nums = append(nums, r.Number)
		}
		rows = append(rows, [2]string{"Zu Rechnungen", strings.Join(nums, ", ")})
	}
	rows = append(rows, [2]string{v.period.Label(), v.period.Text()})
	if !d.Payment.DueDate.IsZero() && d.Kind != invoicedoc.KindCancellation {
		rows = append(rows, [2]string{"Fällig am", invoicedoc.GermanDate(d.Payment.DueDate)})
	}
	if d.HasElectronic() {
		rows = append(rows, [2]string{"Ihre Referenz", d.Buyer.Electronic.BuyerReference})
	}
	return rows
}

var tableCols = []column{
	{bag.MustSP("11mm"), frontend.HAlignLeft}, // "Pos." in bold needs 19.8 pt
	{bag.MustSP("69mm"), frontend.HAlignLeft},
	{bag.MustSP("24mm"), frontend.HAlignLeft},
	{bag.MustSP("14mm"), frontend.HAlignRight},
	{bag.MustSP("26mm"), frontend.HAlignRight},
	{bag.MustSP("26mm"), frontend.HAlignRight},
}

func (v *view) tableHeader(l *layout) preparedRow {
	return l.prepRow(tableCols, [][]span{{bold("Pos.")}, {bold("Bezeichnung")}, {bold("Bestellt am")}, {bold("USt")}, {bold("Netto")}, {bold("Brutto")}}, 8.5, rgbShade)
}

func (v *view) table(l *layout) {
	header := v.tableHeader(l)
	l.ensure(bag.MustSP("25mm"))
	for i, p := range v.positions {
		desc := []span{plain(p.Name)}
		if len(p.Items) > 1 || p.Quantity != 1 {
			desc = append(desc, muted("\n"+itoa(int(p.Quantity))+" × "+p.UnitGross.German()))
		}
		if len(p.Split) > 0 {
			each := ""
			if len(p.Items) > 1 {
				each = " je Stück"
			}
			desc = append(desc, muted("\nIhr Anteil am Gesamtbetrag von "+p.SplitTotal().German()+each))
		}
		if len(p.Invoices) > 0 {
			var nums []string
			for _, r := range p.Invoices {
				nums = append(nums, r.Number)
			}
			invoiced := 0
			for _, i := range p.Items {
				if v.d.Lines[i].Invoice != nil {
					invoiced++
				}
			}
			part := ""
			if invoiced < len(p.Items) {
				part = "davon " + itoa(invoiced) + " "
			}
			desc = append(desc, muted("\n"+part+"abgerechnet mit Rechnung "+strings.Join(nums, ", ")))
		}
		ordered := invoicedoc.GermanDate(p.First)
		if last := invoicedoc.GermanDate(p.Last); last != ordered {
			ordered += " –\n" + last
		}
		cells := [][]span{{plain(itoa(p.Number))}, desc, {plain(ordered)}, {plain(percentLabel(p.RateBP))},
			{plain(v.totals.Positions[i].Net.German())}, {plain(p.Gross.German())}}
		r := l.prepRow(tableCols, cells, 9, "")
		if i == 0 {
			// The header never stands alone at the foot of a page: it
			// goes with the first row (TestTableHeaderNotOrphaned).
			l.ensure(header.h + r.h)
			l.drawRow(header)
		} else if l.y-r.h < bodyBottom {
			l.newPage()
			l.drawRow(v.tableHeader(l)) // a node list is placed once
		}
		l.drawRow(r)
		l.hline(rgbRule, "0.3pt")
	}
	l.y -= bag.MustSP("3mm")
}

func (v *view) sums(l *layout) {
	t := v.totals
	cols := []column{{bag.MustSP("110mm"), frontend.HAlignRight}, {bag.MustSP("60mm"), frontend.HAlignRight}}
	row := func(label string, amount money.Cents, strong bool) {
		mk := plain
		if strong {
			mk = bold
		}
		l.row(cols, [][]span{{mk(label)}, {mk(amount.German())}}, 9.5, "")
	}
	l.ensure(bag.MustSP("40mm"))
	row("Summe netto", t.Net, false)
	for _, g := range t.Groups {
		row("Umsatzsteuer "+percentLabel(g.RateBP)+" auf "+g.Net.German(), g.VAT, false)
	}
	l.rect(marginLeft+bag.MustSP("70mm"), l.y, bag.MustSP("100mm"), bag.MustSP("0.6pt"), rgbAccent)
	l.y -= bag.MustSP("0.5mm")
	gross := "Gesamtbetrag brutto"
	if v.d.Kind == invoicedoc.KindCancellation {
		gross = "Stornobetrag brutto"
	}
	row(gross, t.Gross, true)
	if t.Paid != 0 {
		row("bereits bezahlt", -t.Paid, false)
	}
	switch {
	case v.d.Kind == invoicedoc.KindCancellation:
		row("Erstattungsbetrag", t.Payable, true)
	case t.Paid != 0:
		row("Offener Betrag", t.Payable, true)
	}
	l.y -= bag.MustSP("5mm")
}

func (v *view) payment(l *layout) {
	d, s := v.d, v.d.Seller
	if d.Kind == invoicedoc.KindCancellation {
		// A refund goes to the buyer: the seller's account is irrelevant here.
		l.ensure(bag.MustSP("15mm"))
		l.block(l.text([]span{bold("Erstattung")}, contentWidth, 10, frontend.HAlignLeft), bag.MustSP("1.5mm"))
		l.block(l.text([]span{plain(d.PaymentTerms())}, contentWidth, 9.5, frontend.HAlignLeft), 0)
		return
	}
	holder := s.AccountHolder
	if holder == "" {
		holder = s.Name
	}
	rows := [][2]string{{"Kontoinhaber", holder}, {"IBAN", formatIBAN(invoicedoc.NormalizeIBAN(s.IBAN))}}
	if s.BIC != "" {
		rows = append(rows, [2]string{"BIC", s.BIC})
	}
	if s.BankName != "" {
		rows = append(rows, [2]string{"Bank", s.BankName})
	}
	rows = append(rows, [2]string{"Verwendungszweck", d.PaymentReference()})
	cols := []column{{bag.MustSP("35mm"), frontend.HAlignLeft}, {bag.MustSP("135mm"), frontend.HAlignLeft}}
	heading := l.text([]span{bold("Zahlung")}, contentWidth, 10, frontend.HAlignLeft)
	terms := l.text([]span{plain(d.PaymentTerms())}, contentWidth, 9.5, frontend.HAlignLeft)
	var prepared []preparedRow
	for _, r := range rows {
		prepared = append(prepared, l.prepRowPad(cols, [][]span{{muted(r[0])}, {plain(r[1])}}, 9, "", bag.MustSP("0.7mm")))
	}
	gap := bag.MustSP("1.5mm")
	l.ensure(height(heading) + height(terms) + 2*gap + rowsHeight(prepared)) // keep the block together
	l.block(heading, gap)
	l.block(terms, gap)
	for _, r := range prepared {
		l.drawRow(r)
	}
}
