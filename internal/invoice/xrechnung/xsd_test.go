package xrechnung

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/invoice/invoicetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// schemaDir finds shared/data/einvoice/schemas: $FAREBOX_EINVOICE_SCHEMAS, or
// the first ancestor of the working directory that has shared/data/einvoice.
func schemaDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("FAREBOX_EINVOICE_SCHEMAS"); d != "" {
		return d
	}
	dir, _ := os.Getwd()
	for {
		cand := filepath.Join(dir, "shared", "data", "einvoice", "schemas")
		if _, err := os.Stat(cand); err == nil {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("official XSDs not found: set FAREBOX_EINVOICE_SCHEMAS to shared/data/einvoice/schemas")
		}
		dir = parent
	}
}

const (
	xsdUBLInvoice    = "ubl-2.1/maindoc/UBL-Invoice-2.1.xsd"
	xsdUBLCreditNote = "ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd"
	xsdCII           = "cii-d16b/uncefact/data/standard/CrossIndustryInvoice_100pD16B.xsd"
)

// xmllint validates files against schema and returns the combined output and
// whether every file validated. A missing xmllint fails the test.
func xmllint(t *testing.T, schema string, files ...string) (string, bool) {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatal("xmllint not installed (apt-get install libxml2-utils)")
	}
	args := append([]string{"--noout", "--nonet", "--schema", filepath.Join(schemaDir(t), schema)}, files...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err == nil
}

// TestXSD validates both syntaxes of every XML flow against the official
// schemas, and checks that the setup rejects broken files.
func TestXSD(t *testing.T) {
	dir := t.TempDir()
	groups := map[string][]string{}
	for _, f := range invoicetest.XMLFlows() {
		u, err := EncodeUBL(f.Doc)
		if err != nil {
			t.Fatal(err)
		}
		c, err := EncodeCII(f.Doc)
		if err != nil {
			t.Fatal(err)
		}
		up, cp := filepath.Join(dir, f.Name+".ubl.xml"), filepath.Join(dir, f.Name+".cii.xml")
		os.WriteFile(up, u, 0o644)
		os.WriteFile(cp, c, 0o644)
		if bytes.Contains(u, []byte("<CreditNote ")) {
			groups[xsdUBLCreditNote] = append(groups[xsdUBLCreditNote], up)
		} else {
			groups[xsdUBLInvoice] = append(groups[xsdUBLInvoice], up)
		}
		groups[xsdCII] = append(groups[xsdCII], cp)
	}
	if len(groups[xsdUBLCreditNote]) != 1 || len(groups[xsdUBLInvoice]) != 7 || len(groups[xsdCII]) != 8 {
		t.Fatalf("unexpected grouping %v", groups)
	}
	for schema, files := range groups {
		out, ok := xmllint(t, schema, files...)
		if !ok || strings.Count(out, " validates") != len(files) {
			t.Errorf("%s:\n%s", schema, out)
		}
	}

	// Mutants the XSD must reject: element order, unknown element, missing
	// CII delivery element, 381 content in a UBL Invoice line.
	ubl, _ := EncodeUBL(invoicetest.SingleCustomer())
	cii, _ := EncodeCII(invoicetest.CollectionMonths())
	mutants := []struct{ name, schema, doc string }{
		{"ubl order", xsdUBLInvoice, swap(string(ubl), "  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>\n", "  <cbc:ProfileID>")},
		{"ubl unknown element", xsdUBLInvoice, strings.Replace(string(ubl), "<cbc:BuyerReference>", "<cbc:Unknown>x</cbc:Unknown><cbc:BuyerReference>", 1)},
		{"ubl credited quantity in invoice", xsdUBLInvoice, strings.ReplaceAll(string(ubl), "InvoicedQuantity", "CreditedQuantity")},
		{"cii without delivery", xsdCII, strings.Replace(string(cii), "    <ram:ApplicableHeaderTradeDelivery/>\n", "", 1)},
	}
	for _, m := range mutants {
		if m.doc == string(ubl) || m.doc == string(cii) {
			t.Fatalf("%s: mutation did not apply", m.name)
		}
		p := filepath.Join(dir, "mutant.xml")
		os.WriteFile(p, []byte(m.doc), 0o644)
		if out, ok := xmllint(t, m.schema, p); ok {
			t.Errorf("%s: mutant validated:\n%s", m.name, out)
		}
	}
}

// swap moves the line `line` in front of the line starting with `before`.
func swap(doc, line, before string) string {
	doc = strings.Replace(doc, line, "", 1)
	i := strings.Index(doc, before)
	if i < 0 {
		return doc
	}
	return doc[:i] + line + doc[i:]
}

// TestGolden compares every flow with testdata; run with -update to rewrite.
// The golden files are XSD-validated by TestXSD (same bytes).
func TestGolden(t *testing.T) {
	for _, f := range invoicetest.XMLFlows() {
		u, err := EncodeUBL(f.Doc)
		if err != nil {
			t.Fatal(err)
		}
		c, err := EncodeCII(f.Doc)
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string][]byte{f.Name + ".ubl.xml": u, f.Name + ".cii.xml": c} {
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file (run go test -update and review the diff)", name)
			}
		}
	}
}
