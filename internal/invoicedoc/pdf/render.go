package pdf

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"time"

	pdflib "github.com/boxesandglue/baseline-pdf"
	"github.com/boxesandglue/boxesandglue/backend/bag"
	"github.com/boxesandglue/boxesandglue/backend/document"
	"github.com/boxesandglue/boxesandglue/backend/font"
	"github.com/boxesandglue/boxesandglue/backend/lang"
	"github.com/boxesandglue/boxesandglue/frontend"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
)

//go:embed fonts/DejaVuSans.ttf
var fontRegular []byte

//go:embed fonts/DejaVuSans-Bold.ttf
var fontBold []byte

// Factur-X embedding constants (Factur-X 1.0 / ZUGFeRD 2.x, profile EN 16931).
const (
	AttachmentName   = "factur-x.xml"
	FacturXNamespace = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#"
	FacturXLevel     = "EN 16931"
)

// noLigatures keeps "ff", "fi" as separate glyphs so extracted text stays
// searchable ("Zahlungsaufforderung", not U+FB00).
var noLigatures = []string{"-liga"}

// renderMu serialises rendering: boxesandglue v0.2.14 keeps package-level
// state (its logger and the node slabs, see engine.go) that concurrent
// documents race on (found with go test -race, TestParallelRender), and the
// faces parsed once per process are shared by all documents.
var renderMu sync.Mutex

var (
	germanOnce sync.Once
	german     *lang.Lang
	germanErr  error
)

func germanLang() (*lang.Lang, error) {
	germanOnce.Do(func() { german, germanErr = frontend.GetLanguage("de") })
	return german, germanErr
}

// Render produces the document as a PDF/A-3b file, after a turn in q (a
// nil q is the process's queue of DefaultLimits). When cii is not empty
// (a buyer with electronic invoicing) it is embedded unchanged as the
// Factur-X attachment factur-x.xml with AFRelationship Alternative, and the
// XMP metadata declares the Factur-X extension schema; pass exactly the bytes
// served as .cii.xml. Without cii the PDF is a plain PDF/A-3b document. A
// payment notice is not an invoice and must not look like one to software
// reading Factur-X/ZUGFeRD: Render refuses a CII for it.
// Render is safe for concurrent use; calls are serialised internally.
func (q *Queue) Render(d *invoicedoc.Document, cii []byte) ([]byte, error) {
	const op = "pdf.Render"
	if d == nil {
		return nil, apperr.E(op, apperr.Invalid, CodeInvoiceMissing, "no invoice document")
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Kind == invoicedoc.KindPaymentNotice && len(cii) > 0 {
		// The Factur-X attachment and XMP declare an invoice; a notice is
		// none (docs/invoicing.md, "Payment notices").
		return nil, apperr.E(op, apperr.Internal, CodeNoticeNotFacturx, "a payment notice is rendered without Factur-X data")
	}
	v := newView(d)
	return q.compose(func(fe *frontend.Document) error { return setup(fe, d, cii) }, v.pageFurniture, v.body)
}

// compose renders one document with the engine: after its turn in q and
// under renderMu (Exclusive: the library's node slabs
// are not safe for concurrent use and are emptied after each document,
// engine.go), with the shared faces. prepare sets the document's metadata,
// onPage draws each page's furniture and body lays out the content.
func (q *Queue) compose(prepare func(fe *frontend.Document) error, onPage func(l *layout) error, body func(l *layout)) (out []byte, err error) {
	err = q.Exclusive(func() (err error) {
		out, err = composeLocked(prepare, onPage, body)
		return err
	})
	return out, err
}

// composeLocked is compose under renderMu.
func composeLocked(prepare func(fe *frontend.Document) error, onPage func(l *layout) error, body func(l *layout)) (_ []byte, err error) {
	const op = "pdf.Render"
	// A panic inside the library (or here) is a failed document, never a
	// crashed request or job: the caller records it (generation_failed).
	defer func() {
		if r := recover(); r != nil {
			err = apperr.E(op, apperr.Internal, CodeRenderFailed, fmt.Sprintf("rendering the PDF failed: %v", r))
		}
	}()
	if err := checkArenas(); err != nil {
		return nil, apperr.Wrap(op, err)
	}
	// Nothing of this document may stay reachable from the library's node
	// slabs once it is written (engine.go).
	defer resetNodeArenas()
	var buf bytes.Buffer
	fe, err := newFrontend(&buf)
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	if err := prepare(fe); err != nil {
		return nil, apperr.Wrap(op, err)
	}
	fam := fe.NewFontFamily("text")
	l := &layout{fe: fe, fam: fam, onPage: onPage, faces: map[*faceProto]*pdflib.Face{}, fonts: map[fontKey]*font.Font{}}
	for _, m := range []struct {
		face   *faceProto
		weight frontend.FontWeight
	}{{regularFace, frontend.FontWeight400}, {boldFace, frontend.FontWeight700}} {
		f, err := m.face.docFace(fe)
		if err != nil {
			return nil, apperr.Wrap(op, err)
		}
		fs, err := m.face.sourceFor(f)
		if err != nil {
			return nil, apperr.Wrap(op, err)
		}
		if err := fam.AddMember(fs, m.weight, frontend.FontStyleNormal); err != nil {
			return nil, apperr.Wrap(op, err)
		}
		l.faces[m.face] = f // complexLine sets text in the same face
	}
	l.newPage()
	body(l)
	if l.err != nil {
		return nil, apperr.Wrap(op, l.err)
	}
	l.page.Shipout()
	if err := fe.Finish(); err != nil {
		return nil, apperr.Wrap(op, err)
	}
	out, err := fixXMP(buf.Bytes())
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	return out, nil
}

// setup sets PDF/A-3b, metadata, the sRGB output intent and the attachment.
func setup(fe *frontend.Document, d *invoicedoc.Document, cii []byte) error {
	if err := setupPDFA(fe, title(d)+" "+d.Number, d.Seller.Name, d.IssueDate); err != nil {
		return err
	}
	doc := fe.Doc
	if len(cii) == 0 {
		return nil
	}
	doc.AttachFile(document.Attachment{
		Name: AttachmentName, Description: "Factur-X/ZUGFeRD invoice data (UN/CEFACT CII, XRechnung 3.0)",
		MimeType: "text/xml", Data: cii, CreationDate: doc.CreationDate, ModDate: doc.CreationDate,
	})
	doc.AddXMPExtension(document.XMPExtension{
		Schema: "Factur-X PDFA Extension Schema", NamespaceURI: FacturXNamespace, Prefix: "fx",
		Properties: []document.XMPExtensionProperty{
			{Name: "DocumentFileName", ValueType: "Text", Category: "external", Description: "The name of the embedded XML document"},
			{Name: "DocumentType", ValueType: "Text", Category: "external", Description: "The type of the hybrid document in capital letters, e.g. INVOICE or ORDER"},
			{Name: "Version", ValueType: "Text", Category: "external", Description: "The actual version of the standard applying to the embedded XML document"},
			{Name: "ConformanceLevel", ValueType: "Text", Category: "external", Description: "The conformance level of the embedded XML document"},
		},
		Values: map[string]string{"DocumentFileName": AttachmentName, "DocumentType": "INVOICE", "Version": "1.0", "ConformanceLevel": FacturXLevel},
	})
	return nil
}

// setupPDFA makes the document a German PDF/A-3b with an sRGB output
// intent and its title, author and creation date.
func setupPDFA(fe *frontend.Document, title, author string, created time.Time) error {
	de, err := germanLang()
	if err != nil {
		return err
	}
	doc := fe.Doc
	doc.DefaultLanguage = de
	doc.DefaultLanguageTag = "de"
	doc.Format = document.FormatPDFA3b
	if _, err := doc.LoadSRGBColorprofile(); err != nil {
		return err
	}
	doc.Title = title
	doc.Author = author
	// No Info /Subject: boxesandglue writes no dc:description, and PDF/A
	// requires the Info dictionary to match the XMP metadata.
	doc.Creator = "farebox"
	doc.CreationDate = created.UTC().Truncate(time.Second)
	return nil
}

// title is the document's German heading.
func title(d *invoicedoc.Document) string {
	switch d.Kind {
	case invoicedoc.KindCancellation:
		return "Stornorechnung"
	case invoicedoc.KindPaymentNotice:
		return "Zahlungsaufforderung"
	}
	return "Rechnung"
}

// view holds the values the layout prints, computed once.
type view struct {
	d         *invoicedoc.Document
	positions []invoicedoc.Position
	totals    invoicedoc.Totals
	texts     invoicedoc.Texts
	period    invoicedoc.ServicePeriod
}

func newView(d *invoicedoc.Document) *view {
	v := &view{d: d, positions: d.Positions(), totals: d.Totals(), texts: d.ResolvedTexts()}
	v.period, _ = d.ServicePeriod()
	return v
}

// pageFurniture draws the footer, the test banner and, from page 2 on, a
// running header.
func (v *view) pageFurniture(l *layout) error {
	return furniture(l, v.d.Seller, v.d.Test, "TEST · Testumgebung · keine gültige Rechnung · nicht bezahlen", title(v.d)+" "+v.d.Number)
}

// furniture draws the seller's footer, on test documents the red banner
// with testText, and from page 2 on the running header naming running.
func furniture(l *layout, s invoicedoc.Seller, test bool, testText, running string) error {
	// Footer: three columns below a rule.
	footTop := bag.MustSP("27mm")
	l.rect(marginLeft, footTop+bag.MustSP("2mm"), contentWidth, bag.MustSP("0.3pt"), rgbRule)
	widths := []bag.ScaledPoint{bag.MustSP("48mm"), bag.MustSP("52mm"), bag.MustSP("70mm")}
	x := marginLeft
	addr := []string{s.Name, s.Address.Street, s.Address.PostalCode + " " + s.Address.City}
	contact := []string{"Ansprechpartner: " + s.ContactName, "Telefon: " + s.ContactPhone, "E-Mail: " + s.ContactEmail}
	var tax []string
	if s.VATID != "" {
		tax = append(tax, "USt-IdNr.: "+s.VATID)
	}
	if s.TaxNumber != "" {
		tax = append(tax, "Steuernummer: "+s.TaxNumber)
	}
	if s.LegalInfo != "" {
		tax = append(tax, s.LegalInfo)
	}
	for i, lines := range [][]string{addr, contact, tax} {
		l.at(x, footTop, l.text([]span{muted(strings.Join(lines, "\n"))}, widths[i]-bag.MustSP("2mm"), 7, frontend.HAlignLeft))
		x += widths[i]
	}
	if test {
		l.rect(marginLeft, bag.MustSP("284mm"), contentWidth, bag.MustSP("7mm"), rgbAlert)
		l.at(marginLeft, bag.MustSP("282.4mm"), l.text([]span{{text: testText, bold: true, color: "#ffffff"}},
			contentWidth, 10, frontend.HAlignCenter))
	}
	if l.pages > 1 {
		pageNo := bag.MustSP("25mm")
		l.at(marginLeft, bag.MustSP("274mm"), l.text([]span{muted(s.Name + " · " + running)}, contentWidth-pageNo, 8, frontend.HAlignLeft))
		l.at(marginLeft+contentWidth-pageNo, bag.MustSP("274mm"), l.text([]span{muted("Seite " + itoa(l.pages))}, pageNo, 8, frontend.HAlignRight))
		l.rect(marginLeft, bag.MustSP("268mm"), contentWidth, bag.MustSP("0.3pt"), rgbRule)
	}
	return l.err
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
