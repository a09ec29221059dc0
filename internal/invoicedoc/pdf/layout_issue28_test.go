package pdf

import (
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/testtool"
)

// TestSplitNoteInsideMargin is issue 28's overflow: an item named 255 × W,
// split 470 / 1 cent with a partner whose name is 35 × Ä; the split note
// ran 16 pt past the right margin.
func TestSplitNoteInsideMargin(t *testing.T) {
	l := invoicetest.Split().Lines[0]
	l.Name = strings.Repeat("W", 255)
	l.Gross = 470
	l.Split = []invoicedoc.Share{{Name: "Café Zürich GmbH", Amount: 470, Invoiced: true}, {Name: strings.Repeat("Ä", 35), Amount: 1}}
	d := invoicetest.Split()
	d.Lines = []invoicedoc.Line{l}
	r := render(t, outDir(t), "split_note_overflow", d)
	checkInside(t, r.path)
}

// TestTableHeaderNotOrphaned: the table header never ends a page without
// the first row under it (issue 28: a 5,000-character subject and text
// before the table left the header alone at the foot of a page). The
// subject is varied so that the table starts at every height of the last
// 30 mm of a page; the first row (a 255-character name) is 30 mm high.
func TestTableHeaderNotOrphaned(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Property)
	dir := outDir(t)
	for n := 2800; n <= 3400; n += 20 {
		d := invoicetest.SingleCustomer()
		d.Lines[0].Name = repeatTo("Deutschlandticket Jobticket Verbundraum ", 255)
		d.Texts.Subject = repeatTo("Betreff ", 5000-n)
		d.Texts.BeforeTable = repeatTo("Text vor der Tabelle ", 5000)
		r := render(t, dir, "orphan_"+itoa(n), d)
		_, _, ws := words(t, r.path)
		for _, h := range ws {
			if h.text != "Bezeichnung" {
				continue
			}
			row := false
			for _, w := range ws {
				row = row || (w.page == h.page && w.y0 > h.y1 && w.text == "Deutschlandticket")
			}
			if !row {
				t.Errorf("subject of %d characters: the table header on page %d has no row under it", 5000-n, h.page)
			}
		}
	}
}

// TestRTLTableRows: right-to-left ticket names in the item table stand in
// visual order (the first word of a Hebrew or Arabic name rightmost, the
// letters of each word right to left) and come back from pdftotext in
// logical order; a number inside stays left to right.
func TestRTLTableRows(t *testing.T) {
	d := invoicetest.CollectionMonths()
	names := [][]string{{"כרטיס", "חודשי", "תל", "אביב"}, {"تذكرة", "شهرية", "الرياض"}, {"כרטיס", "2026"}}
	for i, n := range names {
		d.Lines[i%len(d.Lines)].Name = strings.Join(n, " ")
	}
	d.Lines = d.Lines[:len(names)]
	r := render(t, outDir(t), "rtl_rows", d)
	_, _, ws := words(t, r.path)
	// pdftotext -bbox gives each word's glyphs in visual order.
	find := func(w string, row int) box {
		for _, b := range ws {
			if b.text == w || b.text == visualText(w, true) {
				return b
			}
		}
		t.Fatalf("row %d: %q not found in %v", row, w, ws)
		return box{}
	}
	for i, n := range names[:2] {
		for k := 1; k < len(n); k++ {
			a, b := find(n[k-1], i), find(n[k], i)
			if a.y1 < b.y0 || b.y1 < a.y0 || a.x0 <= b.x1 {
				t.Errorf("row %d: %q (x %.1f–%.1f) should stand right of %q (x %.1f–%.1f) on one line", i, n[k-1], a.x0, a.x1, n[k], b.x0, b.x1)
			}
		}
	}
	if a, b := find("כרטיס", 2), find("2026", 2); a.x0 <= b.x1 {
		t.Errorf("a number after a Hebrew word stands left of it in an RTL line: %v %v", a, b)
	}
	got := text(t, r.path)
	got = strings.Map(func(r rune) rune {
		if r >= '\u202a' && r <= '\u202e' {
			return -1
		}
		return r
	}, got)
	for _, n := range names[:2] {
		if !strings.Contains(got, strings.Join(n, " ")) {
			t.Errorf("pdftotext does not read %q in logical order:\n%s", strings.Join(n, " "), got)
		}
	}
}

// TestUndrawableStoredText: text the API now refuses (a character no font
// has, a control character) may be stored from before; it renders, drawn
// as U+FFFD and never as .notdef, with the original in /ActualText.
func TestUndrawableStoredText(t *testing.T) {
	d := invoicetest.SingleCustomer()
	d.Texts.Notes = "Weg \U00013000 1 a\x01b"
	d.Buyer.AddressLines[0] = "Firma \U00013001"
	if _, ok := Drawable(d.Texts.Notes); ok {
		t.Fatal("Drawable accepts an Egyptian hieroglyph and U+0001")
	}
	r := render(t, t.TempDir(), "undrawable", d)
	for _, id := range drawnGlyphs(t, r.pdf) {
		if id == 0 {
			t.Fatal("a glyph is drawn as .notdef")
		}
	}
	if got := text(t, r.path); !strings.Contains(got, "Weg \U00013000 1") || !strings.Contains(got, "Firma \U00013001") {
		t.Errorf("the original characters are not in the text:\n%s", got)
	}
}
