package pdf

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/invoicedoc/xrechnung"
)

func init() { api.DisableConfigDir() }

// tool runs a poppler utility; a missing tool fails the test.
func tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not installed (apt-get install poppler-utils)", name)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// firstPage renders the first page of the PDF at path at dpi (pdftoppm)
// into base.png and returns the image.
func firstPage(t *testing.T, path string, dpi int, base string) image.Image {
	t.Helper()
	tool(t, "pdftoppm", "-png", "-r", strconv.Itoa(dpi), "-f", "1", "-l", "1", "-singlefile", path, base)
	f, err := os.Open(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// rendered is one flow's PDF on disk with its CII.
type rendered struct {
	name string
	doc  *invoicedoc.Document
	cii  []byte
	pdf  []byte
	path string
}

func render(t *testing.T, dir, name string, d *invoicedoc.Document) rendered {
	t.Helper()
	var cii []byte
	if d.HasElectronic() && d.Kind != invoicedoc.KindPaymentNotice {
		var err error
		if cii, err = xrechnung.EncodeCII(d); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Render(d, cii)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p := filepath.Join(dir, name+".pdf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return rendered{name, d, cii, b, p}
}

var spaces = regexp.MustCompile(`\s+`)

// text extracts the PDF's text with pdftotext, whitespace collapsed.
func text(t *testing.T, path string) string {
	return spaces.ReplaceAllString(tool(t, "pdftotext", "-layout", "-enc", "UTF-8", path, "-"), " ")
}

func TestFlowsText(t *testing.T) {
	dir := t.TempDir()
	for _, f := range invoicetest.AllFlows() {
		r := render(t, dir, f.Name, f.Doc)
		t.Run(f.Name, func(t *testing.T) {
			got := text(t, r.path)
			d := r.doc
			tot := d.Totals()
			p, _ := d.ServicePeriod()
			rt := d.ResolvedTexts()
			want := []string{title(d) + " " + d.Number, d.Seller.Name, d.Seller.Address.Street, "USt-IdNr.: " + d.Seller.VATID,
				"Steuernummer: " + d.Seller.TaxNumber, d.Seller.ContactName, d.Seller.ContactPhone, d.Seller.ContactEmail,
				p.Label() + " " + p.Text(), "Datum " + invoicedoc.GermanDate(d.IssueDate),
				"Summe netto " + tot.Net.German(), "Umsatzsteuer 7 % auf " + tot.Net.German() + " " + tot.VAT.German(),
				tot.Gross.German(), rt.Subject, rt.BeforeTable, rt.AfterTable, rt.Notes}
			if d.Kind != invoicedoc.KindCancellation {
				want = append(want, "IBAN DE89 3704 0044 0532 0130 00", "BIC COBADEFFXXX", "Verwendungszweck "+d.PaymentReference(), d.PaymentTerms())
			}
			if d.Buyer != nil {
				want = append(want, d.Buyer.AddressLines...)
			} else {
				want = append(want, "Ohne Empfängerangabe")
			}
			for i, p := range d.Positions() {
				want = append(want, p.Name, tot.Positions[i].Net.German(), p.Gross.German(), invoicedoc.GermanDate(p.First))
			}
			for _, n := range d.SplitNotes() {
				want = append(want, n)
			}
			switch d.Kind {
			case invoicedoc.KindCancellation:
				want = append(want, "Storno der Rechnung "+d.Cancels.Number+" vom "+invoicedoc.GermanDate(d.Cancels.IssueDate), "Erstattungsbetrag "+tot.Payable.German(), "Stornobetrag brutto")
			case invoicedoc.KindPaymentNotice:
				want = append(want, "Dies ist keine Rechnung", "Verwendungszweck "+d.PaymentReference())
				if tot.Paid != 0 {
					want = append(want, "bereits bezahlt -"+tot.Paid.German(), "Offener Betrag "+tot.Payable.German())
				}
				for _, r := range d.Preceding() {
					want = append(want, r.Number+" vom "+invoicedoc.GermanDate(r.IssueDate))
				}
				for _, p := range d.Positions() {
					if len(p.Invoices) > 0 {
						want = append(want, "abgerechnet mit Rechnung "+p.Invoices[0].Number)
					}
				}
			default:
				want = append(want, "Gesamtbetrag brutto "+tot.Gross.German())
			}
			if d.Test {
				want = append(want, "TEST · Testumgebung · keine gültige Rechnung · nicht bezahlen")
			}
			for _, w := range want {
				w = spaces.ReplaceAllString(strings.TrimSpace(w), " ")
				if w != "" && !strings.Contains(got, w) {
					t.Errorf("text lacks %q", w)
				}
			}
			// Rows carry a human reference (name, order date), not the
			// technical billable item id.
			if strings.Contains(got, "{{") || (!d.Test && strings.Contains(got, "TEST ·")) || strings.Contains(got, "fb-billable-") {
				t.Errorf("unexpected text: %s", got)
			}
		})
	}
}

func TestStructure(t *testing.T) {
	dir := t.TempDir()
	for _, f := range invoicetest.AllFlows() {
		r := render(t, dir, f.Name, f.Doc)
		t.Run(f.Name, func(t *testing.T) {
			// Fonts: both DejaVu faces embedded as subsets with Unicode maps; nothing else.
			fonts := tool(t, "pdffonts", r.path)
			lines := strings.Split(strings.TrimSpace(fonts), "\n")[2:]
			if len(lines) == 0 || len(lines) > 2 {
				t.Fatalf("fonts:\n%s", fonts)
			}
			for _, l := range lines {
				if !regexp.MustCompile(`^[A-Z]{6}\+DejaVuSans(-Bold)?\s+CID TrueType\s+Identity-H\s+yes\s+yes\s+yes`).MatchString(l) {
					t.Errorf("font not embedded/subset/unicode: %q", l)
				}
			}
			// Attachment: byte-identical to the CII, via poppler and via pdfcpu.
			list := tool(t, "pdfdetach", "-list", r.path)
			if r.cii == nil {
				if !strings.HasPrefix(list, "0 embedded files") {
					t.Errorf("unexpected attachment: %s", list)
				}
			} else {
				if !strings.Contains(list, "1 embedded files") || !strings.Contains(list, "1: "+AttachmentName) {
					t.Fatalf("attachments: %s", list)
				}
				out := filepath.Join(dir, f.Name+".cii.xml")
				tool(t, "pdfdetach", "-save", "1", "-o", out, r.path)
				if got, _ := os.ReadFile(out); !bytes.Equal(got, r.cii) {
					t.Errorf("pdfdetach attachment differs from the CII (%d vs %d bytes)", len(got), len(r.cii))
				}
			}
			conf := model.NewDefaultConfiguration()
			conf.ValidationMode = model.ValidationRelaxed
			aa, err := api.ExtractAttachmentsRaw(bytes.NewReader(r.pdf), "", nil, conf)
			if r.cii == nil && err != nil && strings.Contains(err.Error(), "no attachments available") {
				err = nil
			}
			if err != nil {
				t.Fatalf("pdfcpu: %v", err)
			}
			if r.cii != nil {
				if len(aa) != 1 || aa[0].FileName != AttachmentName {
					t.Fatalf("pdfcpu attachments %v", aa)
				}
				got, _ := io.ReadAll(aa[0])
				if !bytes.Equal(got, r.cii) {
					t.Errorf("pdfcpu attachment differs from the CII")
				}
			} else if len(aa) != 0 {
				t.Errorf("pdfcpu attachments %v", aa)
			}
			// XMP: PDF/A-3 conformance B and, with an attachment, the Factur-X extension.
			meta := tool(t, "pdfinfo", "-meta", r.path)
			for _, w := range []string{"<pdfaid:part>3</pdfaid:part>", "<pdfaid:conformance>B</pdfaid:conformance>"} {
				if !strings.Contains(meta, w) {
					t.Errorf("XMP lacks %s", w)
				}
			}
			fx := []string{FacturXNamespace, `fx:DocumentFileName="factur-x.xml"`, `fx:ConformanceLevel="EN 16931"`, `fx:DocumentType="INVOICE"`,
				`fx:Version="1.0"`, "<pdfaSchema:prefix>fx</pdfaSchema:prefix>", "<pdfaProperty:name>ConformanceLevel</pdfaProperty:name>"}
			for _, w := range fx {
				if strings.Contains(meta, w) != (r.cii != nil) {
					t.Errorf("XMP Factur-X %q presence wrong (attachment %v)", w, r.cii != nil)
				}
			}
			// Catalog: associated files with AFRelationship, and the PDF/A output intent.
			ctx, err := api.ReadContext(bytes.NewReader(r.pdf), conf)
			if err != nil {
				t.Fatal(err)
			}
			if err := api.ValidateContext(ctx); err != nil {
				t.Errorf("pdfcpu relaxed validation: %v", err)
			}
			cat, err := ctx.Catalog()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := cat.Find("OutputIntents"); !ok {
				t.Error("no OutputIntents")
			}
			if _, ok := cat.Find("AF"); ok != (r.cii != nil) {
				t.Errorf("catalog /AF presence %v", ok)
			}
			if r.cii != nil && !bytes.Contains(r.pdf, []byte("/AFRelationship /Alternative")) && !bytes.Contains(r.pdf, []byte("/AFRelationship/Alternative")) {
				t.Error("no AFRelationship /Alternative in the file spec")
			}
			info := tool(t, "pdfinfo", r.path)
			if !strings.Contains(info, "Title:           "+title(r.doc)+" "+r.doc.Number) || !strings.Contains(info, "Page size:       595.28 x 841.89 pts (A4)") {
				t.Errorf("pdfinfo:\n%s", info)
			}
		})
	}
}

func TestUnicodeNames(t *testing.T) {
	d := invoicetest.SingleCustomer()
	names := []string{"Jürgen Bärwald-Łukasiewicz", "Zoë Hélène Straße", "ÄÖÜ äöü ß é Ł ł ń € – „Zitat“"}
	d.Buyer.AddressLines = append([]string{names[0], names[1]}, d.Buyer.AddressLines[2:]...)
	d.Lines[0].Name = names[2]
	r := render(t, t.TempDir(), "unicode", d)
	got := text(t, r.path)
	for _, n := range names {
		if !strings.Contains(got, n) {
			t.Errorf("text lacks %q:\n%s", n, got)
		}
	}
}

func TestManyLinesPaginate(t *testing.T) {
	d := invoicetest.CollectionMonths()
	base := d.Lines[0]
	d.Lines = nil
	for i := 0; i < 45; i++ {
		l := base
		l.BillableItemID = "fb-billable-p" + itoa(i)
		l.Name = "Fahrkarte Nr. " + itoa(i) // distinct items: one row each
		d.Lines = append(d.Lines, l)
	}
	r := render(t, t.TempDir(), "many", d)
	info := tool(t, "pdfinfo", r.path)
	pages := regexp.MustCompile(`Pages:\s+(\d+)`).FindStringSubmatch(info)
	if pages == nil || pages[1] == "1" {
		t.Fatalf("expected several pages:\n%s", info)
	}
	got := text(t, r.path)
	// Every page with table rows repeats the table header.
	n, _ := strconv.Atoi(pages[1])
	for p := 1; p <= n; p++ {
		pt := spaces.ReplaceAllString(tool(t, "pdftotext", "-layout", "-f", itoa(p), "-l", itoa(p), r.path, "-"), " ")
		if strings.Contains(pt, "Fahrkarte Nr. ") != strings.Contains(pt, "Pos. Bezeichnung Bestellt am USt Netto Brutto") {
			t.Errorf("page %d: rows without table header", p)
		}
		if p > 1 && !strings.Contains(pt, "Rechnung RE-2026-000104 Seite "+itoa(p)) {
			t.Errorf("page %d: running header missing", p)
		}
	}
	if !strings.Contains(got, "Seite 2") || !strings.Contains(got, "Fahrkarte Nr. 44") || !strings.Contains(got, "Gesamtbetrag brutto 2.610,00 €") {
		t.Errorf("continuation text missing")
	}
	if !strings.Contains(got, "Seite "+pages[1]) {
		t.Errorf("last page number missing")
	}
}

// TestRenderedPixels rasterises the first page and checks what a reader
// sees: the red TEST banner only on test documents, and ink in the title
// and table areas (the page is not blank).
func TestRenderedPixels(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		doc  *invoicedoc.Document
	}{{"test", invoicetest.CollectionMonth()}, {"live", invoicetest.SingleCustomer()}} {
		r := render(t, dir, c.name, c.doc)
		img := firstPage(t, r.path, 40, filepath.Join(dir, c.name))
		b := img.Bounds()
		red := count(img, image.Rect(b.Dx()/10, b.Dy()*13/297, b.Dx()*9/10, b.Dy()*20/297), func(r, g, bl uint32) bool { return r > 0xa000 && g < 0x5000 && bl < 0x5000 })
		if (red > 100) != c.doc.Test {
			t.Errorf("%s: %d red pixels in the banner area", c.name, red)
		}
		ink := count(img, image.Rect(b.Dx()/10, b.Dy()*90/297, b.Dx()*9/10, b.Dy()*160/297), func(r, g, bl uint32) bool { return r < 0x8000 && g < 0x8000 && bl < 0x8000 })
		if ink < 200 {
			t.Errorf("%s: page body looks blank (%d dark pixels)", c.name, ink)
		}
	}
}

func count(img image.Image, r image.Rectangle, f func(r, g, b uint32) bool) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if f(cr, cg, cb) {
				n++
			}
		}
	}
	return n
}

func TestRenderRefusals(t *testing.T) {
	if _, err := Render(nil, nil); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("nil: %v", err)
	}
	d := invoicetest.SingleCustomer()
	d.Number = ""
	if _, err := Render(d, nil); apperr.KindOf(err) != apperr.Unprocessable {
		t.Errorf("no number: %v", err)
	}
}

func TestHelpers(t *testing.T) {
	if formatIBAN("DE89370400440532013000") != "DE89 3704 0044 0532 0130 00" || percentLabel(700) != "7 %" || percentLabel(550) != "5,50 %" || itoa(45) != "45" {
		t.Error("helpers")
	}
}
