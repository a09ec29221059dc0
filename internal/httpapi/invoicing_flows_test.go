package httpapi_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
)

// TestInvoicingFlows runs the interface's five invoicing flows, a
// cancellation and payment notices as a partner would, on both engines,
// and checks the JSON, the numbers and every downloaded file.
func TestInvoicingFlows(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 10, 15, 8, 0, 0, 0, time.UTC)
	apitest.ForEachEngine(t, apitest.Options{Now: start}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		cafe := newCustomer(t, e, key, []string{"Café Zürich GmbH", "Große Straße 5", "01067 Dresden"},
			electronic("Café Zürich GmbH", "EM", "eingang@cafe-zuerich.example", "KST-4711", "01067"))
		amt := newCustomer(t, e, key, []string{"Stadt Beispielstadt", "Rathausplatz 1", "04109 Leipzig"},
			electronic("Stadt Beispielstadt", "0204", "04011000-12345-67", "04011000-12345-67", "04109"))
		plain := newCustomer(t, e, key, []string{"Łukasz Wójcik", "Weg 1", "12345 Berlin"}, nil)

		// Flow 1: one item, no customer.
		items := orderSingles(t, e, key, 1)
		price := int64(item(t, e, key, items[0])["amount_in_cents"].(float64))
		f1 := issue(t, e, key, items[0], "", nil)
		if f1.InvoiceNumber != "2026-000001" || f1.Kind != "invoice" || f1.TypeCode != "380" || f1.CustomerID != nil || f1.Electronic ||
			len(f1.Recipient) != 0 || f1.Environment != "live" {
			t.Errorf("flow 1: %+v", f1)
		}
		if f1.ServicePeriod.Label != "Leistungszeitpunkt" || f1.ServicePeriod.Text != "15.10.2026, 10:00 Uhr" {
			t.Errorf("flow 1 service period: %+v", f1.ServicePeriod)
		}
		if len(f1.Lines) != 1 || f1.Lines[0].Gross != price || f1.Lines[0].Net+f1.Lines[0].VAT != price || f1.Lines[0].VATRateBP != 700 ||
			f1.Totals.Gross != price || f1.Totals.Payable != price || len(f1.Totals.Breakdown) != 1 || f1.Totals.Breakdown[0].Rate != 700 {
			t.Errorf("flow 1 amounts: %+v", f1)
		}
		if !strings.HasPrefix(f1.PDFURL, e.URL+"/v9/ticketing/invoices/"+f1.InvoiceID+"/") || !strings.HasSuffix(f1.PDFURL, ".pdf") ||
			strings.TrimSuffix(f1.UBLURL, ".ubl.xml") != strings.TrimSuffix(f1.PDFURL, ".pdf") || strings.TrimSuffix(f1.CIIURL, ".cii.xml") != strings.TrimSuffix(f1.UBLURL, ".ubl.xml") {
			t.Errorf("flow 1 urls: %s %s %s", f1.PDFURL, f1.UBLURL, f1.CIIURL)
		}
		// The PDF is there with the invoice (the job has not run yet); the
		// job later stores nothing new for it.
		early := get(t, e, f1.PDFURL, 200)
		if n := runJobs(t, e); n != 1 {
			t.Errorf("jobs run: %d, want 1", n)
		}
		r := get(t, e, f1.PDFURL, 200)
		if !bytes.Equal(early.Body, r.Body) {
			t.Errorf("the PDF changed after the job ran")
		}
		if r.Header.Get("Content-Type") != "application/pdf" || r.Header.Get("Content-Disposition") != `attachment; filename="2026-000001.pdf"` {
			t.Errorf("pdf headers: %v", r.Header)
		}
		text, att := pdfCheck(t, r.Body)
		if !strings.Contains(text, "2026-000001") || att != nil {
			t.Errorf("flow 1 pdf: attachment %d bytes; text %.300s", len(att), text)
		}
		for _, u := range []string{f1.UBLURL, f1.CIIURL} {
			if m := get(t, e, u, 404).Map(t); m["code"] != "electronic_invoicing_not_enabled" {
				t.Errorf("xml without electronic invoicing: %v", m)
			}
		}
		// A wrong identifier is a 404 like an unknown invoice.
		bad := strings.Replace(f1.PDFURL, "/"+f1.InvoiceID+"/", "/"+f1.InvoiceID+"/0", 1)
		if m := get(t, e, bad, 404).Map(t); m["code"] != "not_found" {
			t.Errorf("wrong identifier: %v", m)
		}

		// Flow 2: customer with electronic invoicing, texts with tags.
		e.Clock.Advance(time.Hour)
		items = orderSingles(t, e, key, 1)
		put(t, e, key, items[0], map[string]any{"customer_id": cafe})
		f2 := issue(t, e, key, items[0], cafe, map[string]any{"subject": "Rechnung {{invoice_number}}",
			"custom_text_before_table": "Bitte überweisen Sie {{total_amount}}.", "custom_text_after_table": "Danke, {{invoice_number}}",
			"notes": "{{invoice_number}} bleibt wörtlich"})
		total := fmt.Sprintf("%d,%02d €", price/100, price%100)
		if f2.InvoiceNumber != "2026-000002" || !f2.Electronic || *f2.CustomerID != cafe || f2.Recipient[0] != "Café Zürich GmbH" ||
			*f2.Subject != "Rechnung 2026-000002" || *f2.Before != "Bitte überweisen Sie "+total+"." || *f2.After != "Danke, 2026-000002" ||
			*f2.Notes != "{{invoice_number}} bleibt wörtlich" || f2.Totals.PayableText != total || f2.DueDate == nil || *f2.DueDate != "2026-10-29" {
			t.Errorf("flow 2: %+v", f2)
		}
		// The same item for the same customer again: 409, the first stands.
		r = e.Must(409, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + items[0] + "/invoice/" + cafe + ".json", Key: key})
		if m := r.Map(t); m["code"] != "already_invoiced" || count(t, e, "invoices") != 2 {
			t.Errorf("double invoice: %v", m)
		}
		if it := item(t, e, key, items[0]); fmt.Sprint(it["invoiced_for"]) != fmt.Sprintf("[map[customer_id:%s invoice_id:%s]]", cafe, f2.InvoiceID) {
			t.Errorf("item after invoicing: %v", it)
		}
		// The invoiced item cannot change any more.
		e.Must(409, apitest.Req{Method: "PUT", Path: "/v5/ticketing/billable_item/" + items[0] + ".json", Key: key, Body: map[string]any{"customer_id": amt}})
		pending := get(t, e, f2.UBLURL, 202)
		if pending.Header.Get("Retry-After") != "2" {
			t.Errorf("Retry-After: %q", pending.Header.Get("Retry-After"))
		}
		runJobs(t, e)
		checkFiles(t, e, f2, []string{"Café Zürich GmbH", "Rechnung 2026-000002", "Leistungszeitpunkt"})
		var got InvoiceJSON
		e.Must(200, apitest.Req{Method: "GET", Path: "/v5/ticketing/invoices/" + f2.InvoiceID + ".json", Key: key}).JSON(t, &got)
		if got.InvoiceNumber != f2.InvoiceNumber || got.UBLURL != f2.UBLURL || *got.Subject != *f2.Subject {
			t.Errorf("GET invoice: %+v", got)
		}

		// Flow 3: a split; the first entry is the beneficiary.
		items = orderSingles(t, e, key, 1)
		first := price / 3
		split := []map[string]any{{"customer_id": amt, "amount_in_cents": first}, {"customer_id": cafe, "amount_in_cents": price - first}}
		it := put(t, e, key, items[0], map[string]any{"split": split})
		if it["customer_id"] != nil || len(it["split"].([]any)) != 2 {
			t.Errorf("split item: %v", it)
		}
		f3a := issue(t, e, key, items[0], cafe, nil)
		f3b := issue(t, e, key, items[0], amt, nil)
		if f3a.Lines[0].Gross != price-first || f3a.Lines[0].ItemAmount != price || len(f3a.Lines[0].Passive) != 1 ||
			f3a.Lines[0].Passive[0].Name != "Stadt Beispielstadt" || f3a.Lines[0].Passive[0].Amount != first || !f3a.Lines[0].Passive[0].Beneficiary {
			t.Errorf("split invoice for the second customer: %+v", f3a.Lines)
		}
		if f3b.Lines[0].Gross != first || f3b.Lines[0].Passive[0].Name != "Café Zürich GmbH" || f3b.Lines[0].Passive[0].Beneficiary {
			t.Errorf("split invoice for the beneficiary: %+v", f3b.Lines)
		}
		runJobs(t, e)
		checkFiles(t, e, f3a, []string{"Stadt Beispielstadt"})
		checkFiles(t, e, f3b, []string{"Café Zürich GmbH"})

		// Flow 4: a collection across two months, one customer; items added
		// by PUT and by the bulk endpoint; invoiced without customer id.
		coll := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: key}).Map(t)["id"].(string)
		a := orderSingles(t, e, key, 1)
		e.Clock.Set(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))
		b := orderSingles(t, e, key, 2)
		put(t, e, key, a[0], map[string]any{"customer_id": amt, "billablable_collection_id": coll})
		for _, id := range b {
			put(t, e, key, id, map[string]any{"customer_id": amt})
		}
		cr := e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll + "/billable_items.json", Key: key,
			Body: map[string]any{"billable_item_ids": b}}).Map(t)
		if len(cr["billable_item_ids"].([]any)) != 3 {
			t.Errorf("collection: %v", cr)
		}
		f4 := issue(t, e, key, b[1], "", map[string]any{"subject": "Sammelrechnung"})
		if len(f4.Lines) != 3 || f4.Lines[0].BillableItemID != a[0] || *f4.CustomerID != amt || *f4.CollectionID != coll ||
			f4.ServicePeriod.Label != "Leistungszeitraum" || f4.ServicePeriod.Text != "15.10.2026 – 20.11.2026" || f4.Totals.Gross != 3*price {
			t.Errorf("flow 4: %+v", f4)
		}
		sumNet, sumVAT := int64(0), int64(0)
		for _, l := range f4.Lines {
			sumNet, sumVAT = sumNet+l.Net, sumVAT+l.VAT
		}
		if sumNet != f4.Totals.Net || sumVAT != f4.Totals.VAT || f4.Totals.Net+f4.Totals.VAT != f4.Totals.Gross {
			t.Errorf("flow 4 totals do not add up: %+v", f4.Totals)
		}
		runJobs(t, e)
		checkFiles(t, e, f4, []string{"Leistungszeitraum", "Sammelrechnung"})

		// Flow 5: a collection whose items carry splits, within one month.
		coll5 := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: key, Body: map[string]any{}}).Map(t)["id"].(string)
		c5 := orderSingles(t, e, key, 2)
		for _, id := range c5 {
			put(t, e, key, id, map[string]any{"split": []map[string]any{{"customer_id": plain, "amount_in_cents": price - 100}, {"customer_id": cafe, "amount_in_cents": 100}}})
		}
		e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll5 + "/billable_items.json", Key: key,
			Body: map[string]any{"billable_item_ids": c5}})
		r = e.Must(422, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + c5[0] + "/invoice.json", Key: key})
		if r.Map(t)["code"] != "customer_required" {
			t.Errorf("split collection without customer: %s", r.Body)
		}
		f5 := issue(t, e, key, c5[0], cafe, nil)
		if len(f5.Lines) != 2 || f5.Totals.Gross != 200 || f5.ServicePeriod.Text != "November 2026" || f5.Lines[1].Passive[0].Name != "Łukasz Wójcik" {
			t.Errorf("flow 5: %+v", f5)
		}
		f5b := issue(t, e, key, c5[1], plain, nil)
		if len(f5b.Lines) != 2 || f5b.Totals.Gross != 2*(price-100) || f5b.Electronic {
			t.Errorf("flow 5, beneficiary without electronic invoicing: %+v", f5b)
		}
		runJobs(t, e)
		checkFiles(t, e, f5, []string{"Łukasz Wójcik"})

		// Cancellation of flow 2: own number, 381 credit note, once; the item
		// becomes invoiceable again.
		var canc InvoiceJSON
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + f2.InvoiceID + "/cancel.json", Key: key}).JSON(t, &canc)
		if canc.Kind != "cancellation" || canc.TypeCode != "381" || *canc.RefersTo != f2.InvoiceID || *canc.RefersToNumber != "2026-000002" ||
			canc.InvoiceNumber != "2026-000008" || canc.Totals.Gross != f2.Totals.Gross || canc.Subject != nil {
			t.Errorf("cancellation: %+v", canc)
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v5/ticketing/invoices/" + f2.InvoiceID + ".json", Key: key}).JSON(t, &got)
		if got.CancelledBy == nil || *got.CancelledBy != canc.InvoiceID {
			t.Errorf("original after cancellation: %+v", got)
		}
		if m := e.Must(409, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + f2.InvoiceID + "/cancel.json", Key: key}).Map(t); m["code"] != "already_cancelled" {
			t.Errorf("second cancellation: %v", m)
		}
		runJobs(t, e)
		checkFiles(t, e, canc, []string{"Stornorechnung", "2026-000002"})
		f2again := issue(t, e, key, f2.Lines[0].BillableItemID, cafe, nil)
		if f2again.InvoiceNumber != "2026-000009" {
			t.Errorf("re-invoice after cancellation: %s", f2again.InvoiceNumber)
		}

		// Payment notices: for an invoice and for a collection.
		var pn, pnc InvoiceJSON
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + f4.InvoiceID + "/payment_notice.json", Key: key}).JSON(t, &pn)
		if pn.Kind != "payment_notice" || pn.InvoiceNumber != "ZA-2026-000001" || *pn.RefersToNumber != f4.InvoiceNumber || pn.Totals.Payable != f4.Totals.Gross {
			t.Errorf("payment notice: %+v", pn)
		}
		e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/billable_collection/" + coll5 + "/payment_notice.json", Key: key,
			Body: map[string]any{"customer_id": cafe}}).JSON(t, &pnc)
		if pnc.InvoiceNumber != "ZA-2026-000002" || pnc.RefersTo != nil || len(pnc.Lines) != 2 || pnc.Totals.Gross != 200 {
			t.Errorf("collection payment notice: %+v", pnc)
		}
		if m := e.Must(409, apitest.Req{Method: "POST", Path: "/v9/ticketing/invoices/" + f2.InvoiceID + "/payment_notice.json", Key: key}).Map(t); m["code"] != "invoice_cancelled" {
			t.Errorf("payment notice for a cancelled invoice: %v", m)
		}
		runJobs(t, e)
		checkFiles(t, e, pn, []string{"Zahlungsaufforderung"})
		checkFiles(t, e, pnc, []string{"Zahlungsaufforderung"})

		// Test keys: own marked series, invisible to live keys and vice versa.
		titems := orderSingles(t, e, e.TestKey, 1)
		tinv := issue(t, e, e.TestKey, titems[0], "", nil)
		if tinv.InvoiceNumber != "TEST-2026-000001" || tinv.Environment != "test" {
			t.Errorf("test invoice: %+v", tinv)
		}
		e.Must(404, apitest.Req{Method: "GET", Path: "/v5/ticketing/invoices/" + tinv.InvoiceID + ".json", Key: key})
		e.Must(404, apitest.Req{Method: "GET", Path: "/v5/ticketing/invoices/" + f1.InvoiceID + ".json", Key: e.TestKey})
		e.Must(404, apitest.Req{Method: "GET", Path: "/v5/ticketing/customers/" + cafe + ".json", Key: e.TestKey})
		runJobs(t, e)
		if text, _ := pdfCheck(t, get(t, e, tinv.PDFURL, 200).Body); !strings.Contains(text, "TEST") {
			t.Errorf("test invoice PDF without TEST mark: %.300s", text)
		}
	})
}

// checkFiles downloads the PDF, UBL and CII of a document with electronic
// invoicing, validates both XML files against the official XSDs, and checks
// that the PDF shows want and embeds exactly the .cii.xml.
func checkFiles(t *testing.T, e *apitest.Env, inv InvoiceJSON, want []string) {
	t.Helper()
	if !inv.Electronic {
		t.Fatalf("%s has no electronic invoicing", inv.InvoiceNumber)
	}
	ubl := get(t, e, inv.UBLURL, 200)
	cii := get(t, e, inv.CIIURL, 200)
	pdf := get(t, e, inv.PDFURL, 200)
	for _, f := range []struct {
		r   *apitest.Resp
		ext string
		ct  string
	}{{ubl, ".ubl.xml", "application/xml"}, {cii, ".cii.xml", "application/xml"}, {pdf, ".pdf", "application/pdf"}} {
		if f.r.Header.Get("Content-Type") != f.ct || f.r.Header.Get("Content-Disposition") != `attachment; filename="`+inv.InvoiceNumber+f.ext+`"` {
			t.Errorf("%s%s headers: %v", inv.InvoiceNumber, f.ext, f.r.Header)
		}
	}
	xsdValid(t, inv.InvoiceNumber+".ubl.xml", ubl.Body)
	xsdValid(t, inv.InvoiceNumber+".cii.xml", cii.Body)
	golden(t, inv.InvoiceNumber+".ubl.xml", ubl.Body)
	golden(t, inv.InvoiceNumber+".cii.xml", cii.Body)
	for _, x := range [][]byte{ubl.Body, cii.Body} {
		if !bytes.Contains(x, []byte(inv.InvoiceNumber)) {
			t.Errorf("%s: XML lacks the number", inv.InvoiceNumber)
		}
		for _, l := range inv.Lines {
			if !bytes.Contains(x, []byte(l.BillableItemID)) {
				t.Errorf("%s: XML lacks line %s", inv.InvoiceNumber, l.BillableItemID)
			}
		}
	}
	if inv.Kind == "cancellation" && !bytes.Contains(ubl.Body, []byte("<CreditNote")) {
		t.Errorf("cancellation UBL is not a CreditNote")
	}
	if inv.Kind == "payment_notice" && (!bytes.Contains(cii.Body, []byte("urn:farebox:payment-notice:1.0")) || bytes.Contains(cii.Body, []byte("xrechnung_3.0"))) {
		t.Errorf("payment notice claims XRechnung conformance")
	}
	text, att := pdfCheck(t, pdf.Body)
	if inv.Kind == "payment_notice" {
		// A notice is no invoice: no Factur-X attachment or XMP in its PDF.
		xmp, files, af, err := invoicetest.PDFParts(pdf.Body)
		if err != nil || att != nil || len(files) != 0 || af || strings.Contains(xmp, "factur-x") || strings.Contains(xmp, "fx:") {
			t.Errorf("%s: the payment notice PDF carries Factur-X data (%v, %d files, /AF %v)", inv.InvoiceNumber, err, len(files), af)
		}
	} else if !bytes.Equal(att, cii.Body) || !bytes.Contains(pdf.Body, []byte("factur-x")) {
		t.Errorf("%s: PDF attachment (%d bytes) differs from the .cii.xml (%d bytes)", inv.InvoiceNumber, len(att), len(cii.Body))
	}
	text = strings.Join(strings.Fields(text), " ") // a value may wrap at any space
	for _, w := range append(want, inv.InvoiceNumber) {
		if !strings.Contains(text, w) {
			t.Errorf("%s: PDF text lacks %q", inv.InvoiceNumber, w)
		}
	}
}
