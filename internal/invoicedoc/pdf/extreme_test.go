package pdf

import (
	"fmt"
	"html"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/money"
)

// Largest allowed inputs (the API's validation limits).
const (
	maxText      = 5000 // app.MaxTextLen: subject, notes, custom texts
	maxField     = invoicing.MaxFieldLen
	maxLine      = invoicedoc.MaxAddressLineLen
	maxItemName  = 255 // a product's local ticket name as printed on the line
	maxDocItems  = 100 // a large collection
	extremeSplit = 5   // passive participants on some lines
)

// repeatTo repeats s to exactly n runes.
func repeatTo(s string, n int) string {
	r := []rune(strings.Repeat(s, n/len([]rune(s))+1))
	return string(r[:n])
}

// extremeDoc is an invoice with every printed text at its maximum length.
// Without spaces every text is one unbroken token; with spaces it is words.
// The address lines are upper case and W-heavy (the widest glyphs).
func extremeDoc(spaces bool) *invoicedoc.Document {
	word := func(s string) string {
		if spaces {
			return s
		}
		return strings.ReplaceAll(s, " ", "")
	}
	d := invoicetest.SingleCustomer()
	d.Number = "RE-2026-000999"
	lines := []string{
		repeatTo(word("WWW WOLFGANG WEWERKA WERKSTÄTTEN "), maxLine),
		repeatTo(word("MMW WWM QQW "), maxLine),
		repeatTo(word("WWWWWWWWWWWWWWW WWWWW WWWWWWWWWWW "), maxLine),
		repeatTo(word("WESTWALLSTRASSE 1234 WW "), maxLine),
		repeatTo(word("12345 WWWWWWWWWW WWW WOLFSBURG "), maxLine),
	}
	d.Buyer.AddressLines = lines
	d.Buyer.Electronic.BuyerReference = repeatTo("PO-2026-000000123456/KST-4711/AB-99/", maxField)
	d.Texts = invoicedoc.Texts{
		Subject:     repeatTo(word("Rechnung {{invoice_number}} Monatskarte Verkehrsverbund "), maxText),
		Notes:       repeatTo(word("Siehe https://shop.verkehr.example/bestellungen/2026/000000123456?kunde=4711 und "), maxText),
		BeforeTable: repeatTo(word("Bitte überweisen Sie {{total_amount}} unter Angabe von {{invoice_number}} "), maxText),
		AfterTable:  repeatTo(word("Fragen an buchhaltung@verkehr.example oder www.verkehr.example/kontakt "), maxText),
	}
	base := d.Lines[0]
	d.Lines = nil
	for i := range maxDocItems {
		l := base
		l.BillableItemID = fmt.Sprintf("fb-billable-%032d", i)
		l.Name = repeatTo(word("Deutschlandticket Jobticket Verbundtarif Zone ABC "), maxItemName)
		l.Gross = money.Cents(999999)
		if i%10 == 0 {
			l.Split = []invoicedoc.Share{{Name: lines[0], Amount: l.Gross, Invoiced: true}}
			for j := range extremeSplit {
				l.Split = append(l.Split, invoicedoc.Share{Name: repeatTo(fmt.Sprintf("WWW%d", j), maxLine), Amount: 999999})
			}
		}
		d.Lines = append(d.Lines, l)
	}
	return d
}

// box is a word's bounding box from pdftotext -bbox (PDF points, y down).
type box struct {
	page           int
	x0, y0, x1, y1 float64
	text           string
}

var (
	bboxPage = regexp.MustCompile(`<page width="([\d.]+)" height="([\d.]+)">`)
	bboxWord = regexp.MustCompile(`<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">([^<]*)</word>`)
)

// words lists every word of the PDF with its box, and the page size.
func words(t *testing.T, path string) (w, h float64, out []box) {
	t.Helper()
	xml := tool(t, "pdftotext", "-bbox", path, "-")
	page := 0
	for _, line := range strings.Split(xml, "\n") {
		if m := bboxPage.FindStringSubmatch(line); m != nil {
			page++
			w, _ = strconv.ParseFloat(m[1], 64)
			h, _ = strconv.ParseFloat(m[2], 64)
			continue
		}
		if m := bboxWord.FindStringSubmatch(line); m != nil {
			var v [4]float64
			for i := range v {
				v[i], _ = strconv.ParseFloat(m[i+1], 64)
			}
			out = append(out, box{page, v[0], v[1], v[2], v[3], html.UnescapeString(m[5])})
		}
	}
	return w, h, out
}

// checkInside fails for every word outside the printable area (the
// 20 mm side margins, 10 mm at top and bottom) and for every two words whose
// boxes overlap (by more than a quarter point: glyph boxes of neighbouring
// lines may touch).
func checkInside(t *testing.T, path string) int {
	t.Helper()
	const mm = 72 / 25.4
	pw, ph, ws := words(t, path)
	if len(ws) == 0 {
		t.Fatal("no text found")
	}
	left, right := 20*mm-0.5, pw-20*mm+0.5
	bad := 0
	for _, b := range ws {
		if b.x0 < left || b.x1 > right || b.y0 < 10*mm || b.y1 > ph-10*mm {
			if bad++; bad <= 10 {
				t.Errorf("page %d: %q at x %.1f–%.1f, y %.1f–%.1f lies outside the printable area (x %.1f–%.1f)", b.page, b.text, b.x0, b.x1, b.y0, b.y1, left, right)
			}
		}
	}
	// pdftotext reports the font's whole bounding box (2.4 em for DejaVu,
	// more than the line pitch of 1.3 em), so only the middle 40 % of each
	// box (about one em around the glyphs) counts as its ink.
	core := make([]box, len(ws))
	for i, b := range ws {
		cut := (b.y1 - b.y0) * 0.3
		core[i] = b
		core[i].y0, core[i].y1 = b.y0+cut, b.y1-cut
	}
	const eps = 0.25
	for i, a := range core {
		for _, b := range core[i+1:] {
			if b.page != a.page {
				break // words come page by page
			}
			if a.x0+eps < b.x1 && b.x0+eps < a.x1 && a.y0+eps < b.y1 && b.y0+eps < a.y1 {
				if bad++; bad <= 10 {
					t.Errorf("page %d: %q (%.1f,%.1f–%.1f,%.1f) overlaps %q (%.1f,%.1f–%.1f,%.1f)", a.page, a.text, a.x0, a.y0, a.x1, a.y1, b.text, b.x0, b.y0, b.x1, b.y1)
				}
			}
		}
	}
	return len(ws)
}

// outDir keeps the rendered files when PDF_OUT_DIR is set (to look at them).
func outDir(t *testing.T) string {
	if d := os.Getenv("PDF_OUT_DIR"); d != "" {
		return d
	}
	return t.TempDir()
}

// TestExtremeInputsStayInside renders the largest allowed invoice with and
// without spaces and short documents with one extreme field each, and
// checks that every word lies inside the page margins, no two words
// overlap, and no character is lost.
func TestExtremeInputsStayInside(t *testing.T) {
	dir := outDir(t)
	ref := "PO-2026-000000123456/KST-4711/AB-99"
	short := func(edit func(d *invoicedoc.Document)) *invoicedoc.Document {
		d := invoicetest.SingleCustomer()
		edit(d)
		return d
	}
	cases := []struct {
		name string
		doc  *invoicedoc.Document
	}{
		{"max_words", extremeDoc(true)},
		{"max_unbroken", extremeDoc(false)},
		{"reference_35", short(func(d *invoicedoc.Document) { d.Buyer.Electronic.BuyerReference = ref })},
		{"address_upper_35", short(func(d *invoicedoc.Document) {
			d.Buyer.AddressLines = []string{repeatTo("WWWWW WWWWW ", maxLine), repeatTo("W", maxLine), repeatTo("MÜLLER-WESTERWALD ", maxLine),
				repeatTo("WALTER-WOLFF-WEG ", maxLine), repeatTo("99999 WWWWWWWWWWWWWW ", maxLine)}
		})},
		{"url_in_text", short(func(d *invoicedoc.Document) {
			d.Texts.AfterTable = "Ihre Bestellungen finden Sie unter https://shop.verkehr.example/kundenkonto/bestellungen/2026/rechnungen/RE-2026-000102?ansicht=vollstaendig&sprache=de jederzeit."
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := render(t, dir, c.name, c.doc)
			n := checkInside(t, r.path)
			got := bodyText(t, r.path)
			rt := c.doc.ResolvedTexts()
			for _, want := range append([]string{rt.Subject, rt.Notes, rt.BeforeTable, rt.AfterTable, c.doc.Buyer.Electronic.BuyerReference}, c.doc.Buyer.AddressLines...) {
				want = strings.Join(strings.Fields(want), "")
				if !strings.Contains(got, want) {
					t.Errorf("text lost, reordered or hyphenated: %.80q…", want)
				}
			}
			t.Logf("%d words, %s", n, r.path)
		})
	}
}

// bodyText is the text between the running header and the footer of every
// page in content-stream order, without whitespace, so a paragraph that
// continues on the next page reads as one.
func bodyText(t *testing.T, path string) string {
	const mm = 72 / 25.4
	pages, _ := strconv.Atoi(regexp.MustCompile(`Pages:\s+(\d+)`).FindStringSubmatch(tool(t, "pdfinfo", path))[1])
	var b strings.Builder
	for p := 1; p <= pages; p++ {
		top, bottom := 35*mm, 265*mm // between the running header rule and the footer
		if p == 1 {
			top = 0
		}
		b.WriteString(tool(t, "pdftotext", "-raw", "-enc", "UTF-8", "-f", itoa(p), "-l", itoa(p), "-x", "0", "-y", strconv.Itoa(int(top)),
			"-W", "596", "-H", strconv.Itoa(int(bottom-top)), path, "-"))
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, b.String())
}
