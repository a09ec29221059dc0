package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServeInvoiceWorkers: `farebox serve` runs job workers that render an
// invoice's files without any test hook (in-process wake-up after commit),
// and /metrics reports the queue and the run.
func TestServeInvoiceWorkers(t *testing.T) {
	t.Parallel()
	in, key := servePartner(t, sqliteEnv(t, map[string]string{"FAREBOX_LOG_FORMAT": "json"}))
	addr, logs, base := in.addr, in.logs, in.url()
	single := products(t, base, key)["single/adult"]
	order := call(base, "POST", "/v6/ticketing/orders.json", key, map[string]any{"product_ids": []string{single}}, nil).m()
	item := order["coupons"].([]any)[0].(map[string]any)["billable_item_id"].(string)
	inv := call(base, "POST", "/v5/ticketing/billable_item/"+item+"/invoice.json", key, nil, nil).m()
	if !strings.HasPrefix(inv["invoice_pdf_url"].(string), "http://"+addr+"/v9/ticketing/invoices/") || inv["invoice_number"] != "2026-000001" && !strings.HasSuffix(inv["invoice_number"].(string), "-000001") {
		t.Fatalf("invoice: %v", inv)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(inv["invoice_pdf_url"].(string))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == 200 {
			if !bytes.HasPrefix(b, []byte("%PDF-")) {
				t.Fatalf("not a PDF: %.20q", b)
			}
			break
		}
		if res.StatusCode == 429 { // polled faster than the per-invoice limit: wait as told
			secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			time.Sleep(time.Duration(secs) * time.Second)
			continue
		}
		if res.StatusCode != 202 || time.Now().After(deadline) {
			t.Fatalf("download: %d %s", res.StatusCode, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The job stores the files in its transaction and is marked done after
	// it, so a 200 download does not mean the job is done yet: wait for
	// the queue to say so (on a busy machine the gap is tens of ms).
	var m []byte
	for {
		res, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(m), `farebox_jobs{state="done"} 1`) || !strings.Contains(string(m), `farebox_jobs{state="running"} 1`) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, want := range []string{`farebox_jobs{state="done"} 1`, `farebox_jobs{state="dead"} 0`,
		`farebox_job_duration_seconds_count{kind="invoice.files",outcome="ok"} 1`} {
		if !strings.Contains(string(m), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !strings.Contains(logs.String(), "job workers started") || !strings.Contains(logs.String(), "development seller") {
		t.Errorf("startup logs: %s", logs.String())
	}
	if err := in.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestSellerConfigValidated: a broken seller setting stops serve at startup.
func TestSellerConfigValidated(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t, map[string]string{"FAREBOX_SELLER_IBAN": "DE00370400440532013000", "FAREBOX_SELLER_CONTACT_EMAIL": "nope"})
	serveStops(t, "serve with a bad IBAN", env, "/seller/iban", "--seller-*")
}
