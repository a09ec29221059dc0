package httpapi_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/store"
)

// TestInvoicePDFWithInvoice: the PDF answers 200 as soon as the invoice
// response is there (only the XML files are asynchronous), on both engines.
// Concurrent first downloads through one instance render the PDF once;
// through two instances on one database they may each render but the store
// keeps one file and every download gets the same bytes; the job that runs
// afterwards keeps that file.
func TestInvoicePDFWithInvoice(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, s *store.Store) {
		e1 := apitest.NewOnStore(t, s, apitest.Options{})
		e2 := apitest.NewOnStore(t, s, apitest.Options{Now: e1.Clock.Now()})
		key := e1.LiveKey
		cust := newCustomer(t, e1, key, []string{"Firma GmbH", "Weg 1", "01234 Dresden"}, electronic("Firma GmbH", "EM", "re@firma.example", "R-1", "01234"))
		items := orderSingles(t, e1, key, 3)
		var invs []InvoiceJSON
		for _, id := range items {
			put(t, e1, key, id, map[string]any{"customer_id": cust})
			invs = append(invs, issue(t, e1, key, id, cust, nil))
		}

		// 1. Immediately after the response: 200, a PDF; the XML is pending.
		r := get(t, e1, invs[0].PDFURL, 200)
		if !bytes.HasPrefix(r.Body, []byte("%PDF-")) || r.Header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("pdf right after creation: %v %.20q", r.Header, r.Body)
		}
		get(t, e1, invs[0].UBLURL, 202)

		// 2. Eight concurrent first downloads through one instance: one
		// rendering, identical bytes.
		before := e1.Invoices.PDFsRendered()
		bodies := downloadConcurrently(t, []*apitest.Env{e1}, invs[1].PDFURL, 8)
		if n := e1.Invoices.PDFsRendered() - before; n != 1 {
			t.Errorf("one instance rendered the PDF %d times for 8 concurrent downloads, want 1", n)
		}
		sameBodies(t, bodies)

		// 3. Through two instances: at most one rendering each, one stored
		// file, identical bytes.
		b1, b2 := e1.Invoices.PDFsRendered(), e2.Invoices.PDFsRendered()
		bodies = downloadConcurrently(t, []*apitest.Env{e1, e2}, invs[2].PDFURL, 8)
		if n1, n2 := e1.Invoices.PDFsRendered()-b1, e2.Invoices.PDFsRendered()-b2; n1 > 1 || n2 > 1 || n1+n2 == 0 {
			t.Errorf("renderings per instance: %d and %d, want at most one each", n1, n2)
		}
		sameBodies(t, bodies)
		if n := count(t, e1, "invoice_files"); n != 3 {
			t.Errorf("stored files before the jobs ran: %d, want the 3 PDFs", n)
		}

		// 4. The jobs add the XML and keep the PDFs already served.
		rendered := e1.Invoices.PDFsRendered()
		if n := runJobs(t, e1); n != 3 {
			t.Errorf("jobs run: %d, want 3", n)
		}
		if n := e1.Invoices.PDFsRendered() - rendered; n != 0 {
			t.Errorf("the jobs rendered %d PDFs that downloads had already stored", n)
		}
		if n := count(t, e1, "invoice_files"); n != 9 {
			t.Errorf("stored files after the jobs: %d, want 3 × (PDF, UBL, CII)", n)
		}
		for i, want := range [][]byte{r.Body, bodies[0]} {
			inv := invs[2*i]
			if got := get(t, e2, strings.Replace(inv.PDFURL, e1.URL, e2.URL, 1), 200).Body; !bytes.Equal(got, want) {
				t.Errorf("%s: the PDF changed after the job ran", inv.InvoiceNumber)
			}
			// The Factur-X attachment of the PDF rendered on download is
			// exactly the .cii.xml the job produced later.
			if _, att := pdfCheck(t, want); !bytes.Equal(att, get(t, e1, inv.CIIURL, 200).Body) {
				t.Errorf("%s: PDF attachment differs from the .cii.xml", inv.InvoiceNumber)
			}
		}
	})
}

// downloadConcurrently GETs url n times at once, spreading the requests over
// the given servers, and returns the bodies (each must answer 200).
func downloadConcurrently(t *testing.T, envs []*apitest.Env, url string, n int) [][]byte {
	t.Helper()
	bodies := make([][]byte, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		e := envs[i%len(envs)]
		path := strings.TrimPrefix(url, envs[0].URL)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := e.Do(apitest.Req{Method: "GET", Path: path})
			if r.Status != 200 {
				t.Errorf("download %d: %d %s", i, r.Status, r.Body)
				return
			}
			bodies[i] = r.Body
		}()
	}
	close(start)
	wg.Wait()
	return bodies
}

func sameBodies(t *testing.T, bodies [][]byte) {
	t.Helper()
	for i, b := range bodies {
		if !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Equal(b, bodies[0]) {
			t.Errorf("download %d differs from download 0 (%d vs %d bytes)", i, len(b), len(bodies[0]))
		}
	}
}

// TestInvoiceIdenticalItemsAndNotice: three identical tickets of a
// collection are one position with quantity 3 on the invoice (PDF, UBL,
// CII), so they cannot show different net amounts; the documents carry a
// human reference (name, order time), not technical id lines on the PDF.
// A payment notice for the collection references the invoice (BG-3, BT-83,
// per item in JSON) and its PDF is no Factur-X invoice, while the invoice's
// PDF is. Both engines; every XML file XSD-valid.
func TestInvoiceIdenticalItemsAndNotice(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		cust := newCustomer(t, e, key, []string{"Firma GmbH", "Weg 1", "01234 Dresden"}, electronic("Firma GmbH", "EM", "re@firma.example", "R-1", "01234"))
		items := orderSingles(t, e, key, 4)
		coll := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: key}).Map(t)["id"].(string)
		for _, id := range items {
			put(t, e, key, id, map[string]any{"customer_id": cust})
		}
		e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll + "/billable_items.json", Key: key,
			Body: map[string]any{"billable_item_ids": items[:3]}})
		inv := issue(t, e, key, items[0], cust, nil)
		price := inv.Lines[0].Gross
		if len(inv.Lines) != 3 || inv.Totals.Gross != 3*price {
			t.Fatalf("invoice lines: %+v", inv.Lines)
		}
		var nets int64
		for _, l := range inv.Lines {
			nets += l.Net
			if l.Position != 1 || l.InvoicedBy != nil {
				t.Errorf("line %s: position %d, invoiced by %v", l.BillableItemID, l.Position, l.InvoicedBy)
			}
		}
		if nets != inv.Totals.Net {
			t.Errorf("Σ item nets %d != net %d", nets, inv.Totals.Net)
		}
		runJobs(t, e)
		ubl, cii := get(t, e, inv.UBLURL, 200).Body, get(t, e, inv.CIIURL, 200).Body
		xsdValid(t, "identical.ubl.xml", ubl)
		xsdValid(t, "identical.cii.xml", cii)
		unit := fmt.Sprintf("%d.%02d", price/100, price%100)
		for _, x := range [][]byte{ubl, cii} {
			if n := bytes.Count(x, []byte(`unitCode="C62">`)); n != 1 || !bytes.Contains(x, []byte(`unitCode="C62">3<`)) {
				t.Errorf("want one XML line with quantity 3, got %d lines:\n%s", n, x)
			}
			for _, id := range items[:3] {
				if !bytes.Contains(x, []byte("("+id+")")) {
					t.Errorf("line note lacks item %s", id)
				}
			}
		}
		text, att := pdfCheck(t, get(t, e, inv.PDFURL, 200).Body)
		text = strings.Join(strings.Fields(text), " ")
		gross := strings.Replace(unit, ".", ",", 1) + " €"
		if !strings.Contains(text, "3 × "+gross) || strings.Contains(text, "farebox-billable-") || !bytes.Equal(att, cii) {
			t.Errorf("invoice PDF: want one row 3 × %s, no item ids, the CII attached: %s", gross, text)
		}

		// The fourth item joins the collection uninvoiced; the notice lists
		// all four as one position and references the invoice.
		e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll + "/billable_items.json", Key: key,
			Body: map[string]any{"billable_item_ids": items[3:]}})
		// A notice for a customer none of the collection's items is charged
		// to, and one for an empty collection, are refused by name (the
		// codes are among the route's x-error-codes: apitest checks).
		other := newCustomer(t, e, key, []string{"Andere AG", "Gasse 2", "10115 Berlin"}, nil)
		for _, c := range []struct{ coll, customer, code string }{
			{coll, other, "customer_not_in_collection"},
			{e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: key}).Map(t)["id"].(string), cust, "collection_empty"},
		} {
			r := e.Do(apitest.Req{Method: "POST", Path: "/v9/ticketing/billable_collection/" + c.coll + "/payment_notice.json", Key: key,
				Body: map[string]any{"customer_id": c.customer}})
			if r.Status != 422 || r.Map(t)["code"] != c.code {
				t.Errorf("notice refused with %s: %d %s", c.code, r.Status, r.Body)
			}
		}
		var pn InvoiceJSON
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/billable_collection/" + coll + "/payment_notice.json", Key: key,
			Body: map[string]any{"customer_id": cust}}).JSON(t, &pn)
		if len(pn.Lines) != 4 {
			t.Fatalf("notice lines: %+v", pn.Lines)
		}
		for _, l := range pn.Lines {
			invoiced := l.BillableItemID != items[3]
			if l.Position != 1 || (l.InvoicedBy != nil) != invoiced || (invoiced && *l.InvoicedBy != inv.InvoiceNumber) {
				t.Errorf("notice line %s: position %d, invoiced by %v", l.BillableItemID, l.Position, l.InvoicedBy)
			}
		}
		if want := "Verwendungszweck " + pn.InvoiceNumber + " " + inv.InvoiceNumber; !strings.Contains(pn.PaymentTerms, want) {
			t.Errorf("notice terms %q lack %q", pn.PaymentTerms, want)
		}
		runJobs(t, e)
		nubl, ncii := get(t, e, pn.UBLURL, 200).Body, get(t, e, pn.CIIURL, 200).Body
		xsdValid(t, "notice.ubl.xml", nubl)
		xsdValid(t, "notice.cii.xml", ncii)
		for _, want := range []string{
			"<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>" + inv.InvoiceNumber + "</cbc:ID>",
			"<cbc:PaymentID>" + pn.InvoiceNumber + " " + inv.InvoiceNumber + "</cbc:PaymentID>",
		} {
			if !strings.Contains(strings.Join(strings.Fields(string(nubl)), ""), strings.ReplaceAll(want, " ", "")) {
				t.Errorf("notice UBL lacks %s", want)
			}
		}
		if !bytes.Contains(ncii, []byte("<ram:InvoiceReferencedDocument>\n          <ram:IssuerAssignedID>"+inv.InvoiceNumber)) &&
			!bytes.Contains(ncii, []byte("<ram:IssuerAssignedID>"+inv.InvoiceNumber+"</ram:IssuerAssignedID>")) {
			t.Errorf("notice CII lacks the invoice reference")
		}
		ntext, _ := pdfCheck(t, get(t, e, pn.PDFURL, 200).Body)
		ntext = strings.Join(strings.Fields(ntext), " ")
		if !strings.Contains(ntext, "4 × "+gross) || !strings.Contains(ntext, "davon 3 abgerechnet mit Rechnung "+inv.InvoiceNumber) ||
			!strings.Contains(ntext, "Zahlungsaufforderung zu Rechnung "+inv.InvoiceNumber) {
			t.Errorf("notice PDF: want one row 4 × %s, 3 of them invoiced by %s: %s", gross, inv.InvoiceNumber, ntext)
		}
		for _, c := range []struct {
			url    string
			notice bool
		}{{inv.PDFURL, false}, {pn.PDFURL, true}} {
			xmp, files, af, err := invoicetest.PDFParts(get(t, e, c.url, 200).Body)
			if err != nil {
				t.Fatal(err)
			}
			facturX := strings.Contains(xmp, `fx:DocumentType="INVOICE"`) || len(files) > 0 || af
			if facturX == c.notice || (!c.notice && files["factur-x.xml"] == nil) {
				t.Errorf("%s: Factur-X %v (files %d, /AF %v) for notice=%v", c.url, facturX, len(files), af, c.notice)
			}
		}
	})
}
