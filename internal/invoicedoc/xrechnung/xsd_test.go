package xrechnung

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/testtool"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestXSD validates both syntaxes of every XML flow against the official
// schemas, and checks that the setup rejects broken files.
func TestXSD(t *testing.T) {
	dir := t.TempDir()
	groups := map[string][]string{}
	for _, f := range invoicetest.XMLFlows() {
		u, c := encodeBoth(t, f.Doc)
		up, cp := filepath.Join(dir, f.Name+".ubl.xml"), filepath.Join(dir, f.Name+".cii.xml")
		os.WriteFile(up, u, 0o644)
		os.WriteFile(cp, c, 0o644)
		if bytes.Contains(u, []byte("<CreditNote ")) {
			groups[testtool.XSDUBLCreditNote] = append(groups[testtool.XSDUBLCreditNote], up)
		} else {
			groups[testtool.XSDUBLInvoice] = append(groups[testtool.XSDUBLInvoice], up)
		}
		groups[testtool.XSDCII] = append(groups[testtool.XSDCII], cp)
	}
	if len(groups[testtool.XSDUBLCreditNote]) != 1 || len(groups[testtool.XSDUBLInvoice]) != 7 || len(groups[testtool.XSDCII]) != 8 {
		t.Fatalf("unexpected grouping %v", groups)
	}
	for schema, files := range groups {
		out, ok := testtool.XMLLint(t, schema, files...)
		if !ok || strings.Count(out, " validates") != len(files) {
			t.Errorf("%s:\n%s", schema, out)
		}
	}

	// Mutants the XSD must reject: element order, unknown element, missing
	// CII delivery element, 381 content in a UBL Invoice line.
	ubl, _ := EncodeUBL(invoicetest.SingleCustomer())
	cii, _ := EncodeCII(invoicetest.CollectionMonths())
	mutants := []struct{ name, schema, doc string }{
		{"ubl order", testtool.XSDUBLInvoice, swap(string(ubl), "  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>\n", "  <cbc:ProfileID>")},
		{"ubl unknown element", testtool.XSDUBLInvoice, strings.Replace(string(ubl), "<cbc:BuyerReference>", "<cbc:Unknown>x</cbc:Unknown><cbc:BuyerReference>", 1)},
		{"ubl credited quantity in invoice", testtool.XSDUBLInvoice, strings.ReplaceAll(string(ubl), "InvoicedQuantity", "CreditedQuantity")},
		{"cii without delivery", testtool.XSDCII, strings.Replace(string(cii), "    <ram:ApplicableHeaderTradeDelivery/>\n", "", 1)},
	}
	for _, m := range mutants {
		if m.doc == string(ubl) || m.doc == string(cii) {
			t.Fatalf("%s: mutation did not apply", m.name)
		}
		p := filepath.Join(dir, "mutant.xml")
		os.WriteFile(p, []byte(m.doc), 0o644)
		if out, ok := testtool.XMLLint(t, m.schema, p); ok {
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
		u, c := encodeBoth(t, f.Doc)
		for name, got := range map[string][]byte{f.Name + ".ubl.xml": u, f.Name + ".cii.xml": c} {
			testtool.Golden(t, filepath.Join("testdata", name), got, *update, "go test ./internal/invoicedoc/xrechnung -run TestGolden -update")
		}
	}
}
