package pdf

import (
	"bytes"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
)

// TestPaymentNoticeIsNoFacturX: read as software reads it (XMP and
// embedded files, with pdfcpu), an invoice or cancellation PDF of an
// electronic customer is a Factur-X hybrid, and a payment notice is a plain
// PDF/A-3b without any invoice declaration. A CII passed for a notice is
// refused, so no caller can make a notice look like an invoice.
func TestPaymentNoticeIsNoFacturX(t *testing.T) {
	for _, d := range []*invoicedoc.Document{invoicetest.SingleCustomer(), invoicetest.Cancellation()} {
		cii := mustCII(t, d)
		b, err := Render(d, cii)
		if err != nil {
			t.Fatal(err)
		}
		xmp, files, af, err := invoicetest.PDFParts(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{`fx:DocumentType="INVOICE"`, `fx:ConformanceLevel="EN 16931"`, FacturXNamespace, "<pdfaid:part>3</pdfaid:part>"} {
			if !strings.Contains(xmp, w) {
				t.Errorf("%s: XMP lacks %s", d.Number, w)
			}
		}
		if len(files) != 1 || !bytes.Equal(files[AttachmentName], cii) || !af {
			t.Errorf("%s: attachments %d, factur-x.xml equal %v, /AF %v", d.Number, len(files), bytes.Equal(files[AttachmentName], cii), af)
		}
		if code := "<ram:TypeCode>" + d.Kind.TypeCode() + "</ram:TypeCode>"; !bytes.Contains(files[AttachmentName], []byte(code)) {
			t.Errorf("%s: attachment lacks %s", d.Number, code)
		}
	}
	for _, d := range []*invoicedoc.Document{invoicetest.PaymentNotice(), invoicetest.CollectionPaymentNotice()} {
		cii := mustCII(t, d)
		if _, err := Render(d, cii); apperr.KindOf(err) != apperr.Internal {
			t.Errorf("%s: a CII for a notice was not refused: %v", d.Number, err)
		}
		b, err := Render(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		xmp, files, af, err := invoicetest.PDFParts(b)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(xmp, "<pdfaid:part>3</pdfaid:part>") {
			t.Errorf("%s: no PDF/A XMP: %.300s", d.Number, xmp)
		}
		for _, w := range []string{"factur-x", "fx:", "INVOICE", "EN 16931", "zugferd", "xrechnung"} {
			if strings.Contains(strings.ToLower(xmp), strings.ToLower(w)) {
				t.Errorf("%s: notice XMP declares %q", d.Number, w)
			}
		}
		if len(files) != 0 || af || bytes.Contains(b, []byte("/EmbeddedFiles")) {
			t.Errorf("%s: notice has attachments %v, /AF %v", d.Number, len(files), af)
		}
	}
}
