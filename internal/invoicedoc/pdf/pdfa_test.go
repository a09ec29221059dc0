package pdf

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/testtool"
)

// pdfaKinds is one PDF of every kind the renderer makes: invoices with and
// without Factur-X, the invoice without recipient, a cancellation, payment
// notices (plain PDF/A-3b) and a letter (RenderLetter), plus an invoice in
// every script (fallback fonts, ActualText).
func pdfaKinds(t *testing.T) []rendered {
	t.Helper()
	dir := t.TempDir()
	var out []rendered
	for _, f := range invoicetest.AllFlows() {
		out = append(out, render(t, dir, f.Name, f.Doc))
	}
	scripts := invoicetest.SingleCustomer()
	scripts.Buyer.AddressLines[0] = "شركة النقل عنوان 12"
	scripts.Texts.Notes = "הערה 12 · 東京 中文 · Ελληνικά · Русский · 😀 · 𝔘𝔫𝔦"
	out = append(out, render(t, dir, "scripts", scripts))
	b, err := RenderLetter(Letter{Seller: invoicetest.Seller(), Title: "Kündigungsbestätigung", Reference: "fb-sub-1",
		Date: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC), Rows: [][2]string{{"Abonnement", "Monatskarte"}},
		Paragraphs: []string{"Ihr Abonnement endet am 30.11.2026."}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "letter.pdf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return append(out, rendered{name: "letter", pdf: b, path: p})
}

// TestXMPPacket reads every kind's XMP metadata with an XML parser: the
// packet starts with <?xpacket begin="U+FEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
// (the BOM as EF BB BF, not double-encoded), ends with <?xpacket end="w"?>,
// is well-formed, and its title and author equal the Info dictionary's.
func TestXMPPacket(t *testing.T) {
	for _, r := range pdfaKinds(t) {
		xmp, _, _, err := invoicetest.PDFParts(r.pdf)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if !strings.HasPrefix(xmp, "<?xpacket begin=\"\xef\xbb\xbf\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>") {
			t.Errorf("%s: packet header %q", r.name, xmp[:min(len(xmp), 60)])
		}
		if strings.Contains(xmp, "\xc3\xaf\xc2\xbb\xc2\xbf") {
			t.Errorf("%s: double-encoded BOM in the packet", r.name)
		}
		dec := xml.NewDecoder(strings.NewReader(xmp))
		var pis []xml.ProcInst
		var path []string
		values := map[string]string{}
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: XMP is not well-formed XML: %v", r.name, err)
			}
			switch tok := tok.(type) {
			case xml.ProcInst:
				pis = append(pis, tok.Copy())
			case xml.StartElement:
				path = append(path, tok.Name.Local)
			case xml.EndElement:
				path = path[:len(path)-1]
			case xml.CharData:
				if n := len(path); n >= 3 && path[n-1] == "li" {
					values[path[n-3]] += string(tok)
				}
			}
		}
		if len(pis) != 2 || pis[0].Target != "xpacket" || pis[1].Target != "xpacket" ||
			string(pis[0].Inst) != "begin=\"\uFEFF\" id=\"W5M0MpCehiHzreSzNTczkc9d\"" || string(pis[1].Inst) != `end="w"` {
			t.Errorf("%s: xpacket instructions %q", r.name, pis)
		}
		info := tool(t, "pdfinfo", "-enc", "UTF-8", r.path)
		for _, k := range []struct{ xmp, info string }{{"title", "Title:"}, {"creator", "Author:"}} {
			want := ""
			for _, ln := range strings.Split(info, "\n") {
				if v, ok := strings.CutPrefix(ln, k.info); ok {
					want = strings.TrimSpace(v)
				}
			}
			if want == "" || values[k.xmp] != want {
				t.Errorf("%s: XMP dc:%s %q, Info %s %q", r.name, k.xmp, values[k.xmp], k.info, want)
			}
		}
	}
}

// preflightClasspath is Debian's libpdfbox2-java with what its Preflight
// needs on a current JRE (javax.activation, JAXB API).
var preflightClasspath = []string{
	"/usr/share/java/preflight.jar", "/usr/share/java/pdfbox2.jar", "/usr/share/java/xmpbox.jar",
	"/usr/share/java/fontbox2.jar", "/usr/share/java/commons-logging.jar",
	"/usr/share/java/javax.activation.jar", "/usr/share/java/jaxb-api.jar",
}

// pdfa1Only are Preflight findings that apply to PDF/A-1 only; our files
// are PDF/A-3b (ISO 19005-3), which changed these rules:
//   - 3.1.11 CIDSet missing: PDF/A-1 (6.3.5) requires a CIDSet for every
//     subset CID font; PDF/A-2/3 (6.2.11.4.2) make it optional.
//   - 7.11.2 "part must be 1": pdfaid:part is 3.
//   - 1.2.9 "EmbeddedFile entry is present in a FileSpecification
//     dictionary" and 1.4.7 "EmbeddedFile entry is present in the Names
//     dictionary": PDF/A-1 forbids embedded files; PDF/A-3 (6.8) allows
//     them, and Factur-X requires the embedded factur-x.xml.
var pdfa1Only = []*regexp.Regexp{
	regexp.MustCompile(`^3\.1\.11 : Invalid Font definition, [A-Z]{6}\+[A-Za-z0-9-]+: The CIDSet entry is missing for the Composite Subset$`),
	regexp.MustCompile(`^7\.11\.2 : Error on MetaData, part must be 1$`),
	regexp.MustCompile(`^1\.2\.9 : Body Syntax error, EmbeddedFile entry is present in a FileSpecification dictionary$`),
	regexp.MustCompile(`^1\.4\.7 : Trailer Syntax error, EmbeddedFile entry is present in the Names dictionary$`),
}

// TestPreflight runs Apache PDFBox Preflight (PDF/A-1b) on every kind of
// document and accepts only the findings listed in pdfa1Only.
func TestPreflight(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Validator)
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal("java not installed (apt-get install default-jre-headless libpdfbox2-java libactivation-java libjaxb-api-java)")
	}
	for _, j := range preflightClasspath {
		if _, err := os.Stat(j); err != nil {
			t.Fatalf("%s missing (apt-get install libpdfbox2-java libactivation-java libjaxb-api-java)", j)
		}
	}
	kinds := pdfaKinds(t)
	args := []string{"-cp", strings.Join(preflightClasspath, ":"), "org.apache.pdfbox.preflight.Validator_A1b"}
	for _, r := range kinds {
		out, _ := exec.Command(java, append(args, r.path)...).CombinedOutput()
		text := string(out)
		if !strings.Contains(text, "is a valid PDF/A-1b file") && !strings.Contains(text, "is not a valid PDF/A-1b file") {
			t.Fatalf("%s: Preflight did not run:\n%s", r.name, text)
		}
		for _, ln := range strings.Split(text, "\n") {
			ln = strings.TrimSpace(ln)
			if !regexp.MustCompile(`^\d+(\.\d+)* : `).MatchString(ln) {
				continue
			}
			allowed := false
			for _, re := range pdfa1Only {
				allowed = allowed || re.MatchString(ln)
			}
			if !allowed {
				t.Errorf("%s: %s", r.name, ln)
			} else {
				t.Logf("%s: PDF/A-1 only: %s", r.name, ln)
			}
		}
	}
}
