package xrechnung

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/testtool"
)

var hostile = []string{"Müller & Söhne <GmbH>", "]]><!-- x -->", "\"quoted\" 'apos'", "a\x00b\x01c\x1fd", "\uFFFE\uFFFFz",
	"bad \xff\xfe utf8", "line\r\nbreak\ttab", "Łódź ß é 中文 😀", "&amp; &#0; &#x1;", " "}

func hostileDoc(name, text string) *invoicedoc.Document {
	d := invoicetest.Split()
	d.Lines[0].Name = name
	d.Buyer.Electronic.Address.Name = name
	d.Buyer.Electronic.BuyerReference = "ref " + name
	d.Lines[0].Split[1].Name = name
	d.Texts = invoicedoc.Texts{Subject: text, Notes: text, BeforeTable: name, AfterTable: text + name}
	return d
}

// FuzzEscaping feeds arbitrary names and texts through both encoders: the
// result is either well-formed XML carrying the cleaned value, or an
// Unprocessable error for a value that is blank after cleaning; never an
// internal error or broken XML.
func FuzzEscaping(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, h)
	}
	f.Fuzz(func(t *testing.T, name, text string) {
		d := hostileDoc(name, text)
		for syntax, enc := range map[string]func(*invoicedoc.Document) ([]byte, error){"ubl": EncodeUBL, "cii": EncodeCII} {
			out, err := enc(d)
			if err != nil {
				if apperr.KindOf(err) != apperr.Unprocessable || !invoicedoc.Blank(name) && clean(name) != "" {
					t.Fatalf("%s: unexpected error for %q: %v", syntax, name, err)
				}
				continue
			}
			if err := checkWellFormed(out, "ApplicableHeaderTradeDelivery"); err != nil {
				t.Fatalf("%s: %v", syntax, err)
			}
			var v *view
			if syntax == "ubl" {
				v = ublView(t, out)
			} else {
				v = ciiView(t, out)
			}
			if v.lines[0].name != clean(name) || v.buyerName != clean(name) {
				t.Fatalf("%s: name %q read back as %q", syntax, clean(name), v.lines[0].name)
			}
		}
	})
}

// TestHostileNamesXSD runs the hostile names through xmllint, whose parser
// is stricter than encoding/xml about characters.
func TestHostileNamesXSD(t *testing.T) {
	dir := t.TempDir()
	var ubl, cii []string
	for i, h := range hostile {
		d := hostileDoc("Kunde "+h, h)
		u, err := EncodeUBL(d)
		if err != nil {
			t.Fatalf("%q: %v", h, err)
		}
		c, err := EncodeCII(d)
		if err != nil {
			t.Fatalf("%q: %v", h, err)
		}
		up, cp := filepath.Join(dir, string(rune('a'+i))+".ubl.xml"), filepath.Join(dir, string(rune('a'+i))+".cii.xml")
		os.WriteFile(up, u, 0o644)
		os.WriteFile(cp, c, 0o644)
		ubl, cii = append(ubl, up), append(cii, cp)
	}
	for schema, files := range map[string][]string{testtool.XSDUBLInvoice: ubl, testtool.XSDCII: cii} {
		if out, ok := testtool.XMLLint(t, schema, files...); !ok || strings.Count(out, " validates") != len(files) {
			t.Errorf("%s:\n%s", schema, out)
		}
	}
}
