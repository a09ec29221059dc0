package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/testtool"
)

// pdfText is the text pdftotext reads from a downloaded PDF, with the
// bidi embedding marks poppler puts around right-to-left runs removed.
func pdfText(t *testing.T, body []byte) string {
	t.Helper()
	f := testtool.WriteFile(t, t.TempDir(), "doc.pdf", body)
	out, err := exec.Command("pdftotext", "-enc", "UTF-8", f, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return strings.Map(func(r rune) rune {
		if r >= '\u202a' && r <= '\u202e' {
			return -1
		}
		return r
	}, string(out))
}

// TestInvoicePDFScripts is the reproduction of issue 28: a customer with
// an Arabic address line and an invoice whose texts are Hebrew, CJK,
// Greek, Cyrillic, emoji and mathematical letters. The PDF downloads with
// 200 (it panicked with 500 before), the files job finishes, and every
// word comes back from pdftotext in logical order.
func TestInvoicePDFScripts(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		cust := newCustomer(t, e, key, []string{"عنوان", "שלום עולם", "東京都 中文"}, electronic("Firma", "EM", "re@firma.example", "مرجع 7", "01234"))
		id := orderSingles(t, e, key, 1)[0]
		put(t, e, key, id, map[string]any{"customer_id": cust})
		texts := map[string]any{"notes": "הערה 12", "subject": "Ελληνικά Русский 😀", "custom_text_before_table": "𝔘𝔫𝔦 ∑ 中文",
			"custom_text_after_table": "مدينة الرياض"}
		inv := issue(t, e, key, id, cust, texts)
		r := get(t, e, inv.PDFURL, 200)
		if !bytes.HasPrefix(r.Body, []byte("%PDF-")) {
			t.Fatalf("pdf: %.20q", r.Body)
		}
		got := pdfText(t, r.Body)
		for _, w := range []string{"عنوان", "שלום", "עולם", "東京都", "中文", "הערה", "12", "Ελληνικά", "Русский", "😀", "𝔘𝔫𝔦", "∑",
			"مدينة", "الرياض", "مرجع"} {
			if !strings.Contains(got, w) {
				t.Errorf("pdftotext lacks %q:\n%s", w, got)
			}
		}
		if n := runJobs(t, e); n != 1 {
			t.Errorf("ran %d jobs", n)
		}
		js, _ := e.Store.Read().Jobs(context.Background(), "invoice.files")
		if len(js) != 1 || js[0].State != jobs.StateDone {
			t.Errorf("files job: %+v", js)
		}
		if b := get(t, e, inv.PDFURL, 200).Body; !bytes.Equal(b, r.Body) {
			t.Error("the PDF changed after the job ran")
		}
	})
}

// TestUnprintableTextRefused: a character no font can draw (an Egyptian
// hieroglyph, not in the fonts farebox uses) or a control character is
// refused where the text is accepted, with 422 unprintable_text naming
// the field, and nothing is written; never at rendering time.
func TestUnprintableTextRefused(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		for _, c := range []struct {
			path, field, code string
			body              map[string]any
		}{
			{"/v5/ticketing/customers.json", "/customer/address_lines/1", "unprintable_text", map[string]any{"address_lines": []string{"Firma", "Weg \U00013000 1"}}},
			// Control characters in address lines were refused before.
			{"/v5/ticketing/customers.json", "/customer/address_lines/0", "invalid_customer", map[string]any{"address_lines": []string{"Firma\u0007"}}},
			{"/v9/ticketing/customers.json", "/customer/electronic_invoicing/buyer_reference", "unprintable_text",
				map[string]any{"address_lines": []string{"Firma"}, "electronic_invoicing": electronic("Firma", "EM", "re@firma.example", "R-\U00013000", "01234")}},
		} {
			before := count(t, e, "customers")
			r := e.Must(422, apitest.Req{Method: "POST", Path: c.path, Key: key, Body: map[string]any{"customer": c.body}})
			m := r.Map(t)
			det, _ := m["details"].([]any)
			if m["code"] != c.code || len(det) != 1 || det[0].(map[string]any)["field"] != c.field {
				t.Errorf("%s %s: %v", c.path, c.field, m)
			}
			if n := count(t, e, "customers"); n != before {
				t.Errorf("refused customer written: %d → %d", before, n)
			}
		}
		cust := newCustomer(t, e, key, []string{"Firma"}, nil)
		id := orderSingles(t, e, key, 1)[0]
		put(t, e, key, id, map[string]any{"customer_id": cust})
		for field, v := range map[string]string{"notes": "a\x01b", "subject": "\U00013000", "custom_text_before_table": "x\x1bY",
			"custom_text_after_table": "\u0085"} {
			r := e.Must(422, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + id + "/invoice/" + cust + ".json", Key: key,
				Body: map[string]any{field: v}})
			m := r.Map(t)
			det, _ := m["details"].([]any)
			if m["code"] != "unprintable_text" || len(det) != 1 || det[0].(map[string]any)["field"] != "/"+field {
				t.Errorf("%s: %v", field, m)
			}
		}
		if n := count(t, e, "invoices"); n != 0 {
			t.Errorf("%d invoices written", n)
		}
		// Tabs and line breaks are text, not refused.
		issue(t, e, key, id, cust, map[string]any{"notes": "Zeile 1\r\n\tZeile 2"})
	})
}

// TestInvoicePDFRenderPanic: a renderer that panics (as the library did on
// right-to-left text) is never a 500 and never a job lost without trace:
// the download answers the documented 503 generation_failed, the files job
// is dead at once with the cause, an operator sees it and retries it
// (RetryDeadJob, the console's button), and with a working renderer the
// retried job stores the PDF.
func TestInvoicePDFRenderPanic(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		cust := newCustomer(t, e, key, []string{"Firma"}, nil)
		id := orderSingles(t, e, key, 1)[0]
		put(t, e, key, id, map[string]any{"customer_id": cust})
		inv := issue(t, e, key, id, cust, nil)
		e.Invoices.PDFRenderer = func(*invoicedoc.Document, bool) (invoicing.File, error) {
			s, i := []rune("x"), 4
			return invoicing.File{Body: []byte(string(s[i:3]))}, nil // the library's "slice bounds out of range"
		}
		for range 2 {
			m := get(t, e, inv.PDFURL, 503).Map(t)
			if m["code"] != "generation_failed" {
				t.Errorf("download: %v", m)
			}
		}
		if n := runJobs(t, e); n != 1 {
			t.Fatalf("ran %d jobs", n)
		}
		js, _ := e.Store.Read().Jobs(context.Background(), "invoice.files")
		if len(js) != 1 || js[0].State != jobs.StateDead || js[0].Attempts != 1 || js[0].LastError == nil ||
			!strings.Contains(*js[0].LastError, "rendering the PDF failed") {
			t.Fatalf("files job after a render panic: %+v", js)
		}
		e.Invoices.PDFRenderer = nil
		if _, err := e.Console.RetryDeadJob(context.Background(), idempotency.Claim{}, fmt.Sprint(js[0].ID)); err != nil {
			t.Fatal(err)
		}
		if n := runJobs(t, e); n != 1 {
			t.Fatalf("retry ran %d jobs", n)
		}
		if st, _ := e.Store.Read().JobState(context.Background(), "invoice.files", inv.InvoiceID); st != jobs.StateDone {
			t.Errorf("retried job is %s", st)
		}
		if b := get(t, e, inv.PDFURL, 200).Body; !bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Errorf("pdf after retry: %.20q", b)
		}
	})
}
