package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// soakLoad issues n invoices with all their files (PDF, UBL, CII: the
// customer has electronic_invoicing) through the HTTP API, conc at a time,
// in batches of every. After each batch, with the server idle, it prints
// the server's resident set (from /proc/pid) and its live heap after a
// forced GC (pprof heap?gc=1 on the --pprof-addr listener). The first
// reading at or after warmup invoices is the baseline; it fails when a later
// value exceeds the baseline by more than maxGrowth. The warm-up is there
// for memory that fills up to a bound and then stays: on SQLite each
// connection's page cache (2 MiB by default, 17 connections) fills as the
// database grows, which shows as anonymous RSS outside the Go heap.
func soakLoad(base, key string, n, every, warmup, conc, pid int, pprofURL string, maxGrowth float64) error {
	single, err := singleProduct(base, key)
	if err != nil {
		return err
	}
	out, err := do("POST", base+"/v9/ticketing/customers.json", key, map[string]any{"customer": map[string]any{
		"address_lines": []string{"Café Zürich GmbH", "z. Hd. Łukasz Wójcik", "Große Straße 5", "01067 Dresden"},
		"electronic_invoicing": map[string]any{"electronic_address": "eingang@cafe-zuerich.example", "electronic_address_scheme_id": "EM",
			"buyer_reference": "PO-2026-000000123456/KST-4711/AB-99", "address": map[string]any{"name": "Café Zürich GmbH",
				"street_with_number": "Große Straße 5", "postal_code": "01067", "city": "Dresden", "country_code": "DE"}},
	}}, 201)
	if err != nil {
		return err
	}
	var customer struct{ ID string }
	if err := json.Unmarshal(out, &customer); err != nil || customer.ID == "" {
		return fmt.Errorf("customer response %s: %v", firstLine(out), err)
	}
	fmt.Printf("%9s %9s %10s %9s %9s %9s\n", "invoices", "seconds", "invoices/s", "RSS MiB", "anon MiB", "heap MiB")
	start := time.Now()
	var baseRSS, baseHeap, worstRSS, worstHeap float64
	var baseAt int
	for done := 0; done < n; {
		batch := min(every, n-done)
		t0 := time.Now()
		if err := soakBatch(base, key, single, customer.ID, batch, conc); err != nil {
			return err
		}
		done += batch
		heap, err := liveHeapMiB(pprofURL)
		if err != nil {
			return err
		}
		// Return freed pages first, so RSS shows what is live rather than
		// where the garbage collector's cycle happens to be.
		if status, out, err := send(http.MethodPost, pprofURL+"/debug/free-os-memory", "", nil); err != nil || status != http.StatusNoContent {
			return fmt.Errorf("free-os-memory: %d %s %v", status, firstLine(out), err)
		}
		rss, anon, err := residentMiB(pid)
		if err != nil {
			return err
		}
		fmt.Printf("%9d %9.1f %10.1f %9.1f %9.1f %9.1f\n", done, time.Since(start).Seconds(), float64(batch)/time.Since(t0).Seconds(), rss, anon, heap)
		if done < min(warmup, n) {
			continue // still warming up
		}
		if baseRSS == 0 {
			baseRSS, baseHeap, baseAt = anon, heap, done
			continue
		}
		worstRSS, worstHeap = max(worstRSS, anon/baseRSS-1), max(worstHeap, heap/baseHeap-1)
	}
	fmt.Printf("after warm-up (%d invoices): anonymous RSS grew at most %+.1f %%, live heap at most %+.1f %% (limit %.0f %%)\n",
		baseAt, worstRSS*100, worstHeap*100, maxGrowth*100)
	if worstRSS > maxGrowth || worstHeap > maxGrowth {
		return fmt.Errorf("memory grows with the invoices issued")
	}
	return nil
}

// soakBatch issues count invoices from conc goroutines; each one orders a
// ticket, assigns its billable item to the customer, invoices it and
// downloads the three files (the XML ones answer 202 until the job is done).
func soakBatch(base, key, product, customer string, count, conc int) error {
	var left atomic.Int64
	left.Store(int64(count))
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := soakInvoice(base, key, product, customer); err != nil {
					once.Do(func() { first = err })
					left.Store(0)
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func soakInvoice(base, key, product, customer string) error {
	out, err := do("POST", base+"/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{product}}, 201)
	if err != nil {
		return err
	}
	var o struct {
		Coupons []struct {
			BillableItemID *string `json:"billable_item_id"`
		} `json:"coupons"`
	}
	if err := json.Unmarshal(out, &o); err != nil || len(o.Coupons) == 0 || o.Coupons[0].BillableItemID == nil {
		return fmt.Errorf("order without billable item: %s", firstLine(out))
	}
	item := *o.Coupons[0].BillableItemID
	if _, err := do("PUT", base+"/v5/ticketing/billable_item/"+item+".json", key, map[string]any{"customer_id": customer}, 200); err != nil {
		return err
	}
	out, err = do("POST", base+"/v5/ticketing/billable_item/"+item+"/invoice/"+customer+".json", key,
		map[string]any{"subject": "Rechnung {{invoice_number}}", "notes": "Vielen Dank für Ihren Einkauf."}, 201)
	if err != nil {
		return err
	}
	var inv struct {
		PDF string `json:"invoice_pdf_url"`
		UBL string `json:"invoice_xrechnung_url"`
		CII string `json:"invoice_cii_url"`
	}
	if err := json.Unmarshal(out, &inv); err != nil {
		return err
	}
	for _, u := range []string{inv.PDF, inv.UBL, inv.CII} {
		if !strings.HasPrefix(u, "http") {
			u = base + u
		}
		if err := download(u); err != nil {
			return err
		}
	}
	return nil
}

// download fetches a file, waiting while it answers 202 (not rendered yet).
func download(u string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		status, out, err := send(http.MethodGet, u, "", nil)
		switch {
		case err != nil:
			return err
		case status == 200 && len(out) > 0:
			return nil
		case status == 202 && time.Now().Before(deadline):
			time.Sleep(20 * time.Millisecond)
		default:
			return fmt.Errorf("GET %s: %d %s", pathOf(u), status, firstLine(out))
		}
	}
}

// residentMiB reads the resident set of process pid: all of it (VmRSS) and
// its anonymous part (RssAnon: heap, stacks, the runtime's arenas), without
// file pages such as the binary and memory-mapped ledger segments, which
// the kernel drops under memory pressure.
func residentMiB(pid int) (rss, anon float64, err error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "RssAnon:":
			anon = kb / 1024
		}
	}
	if rss == 0 || anon == 0 {
		return 0, 0, fmt.Errorf("no VmRSS/RssAnon for pid %d", pid)
	}
	return rss, anon, s.Err()
}

var heapAllocLine = regexp.MustCompile(`(?m)^# HeapAlloc = (\d+)$`)

// liveHeapMiB is the server's heap in use right after a forced GC, from the
// text form of its pprof heap profile.
func liveHeapMiB(pprofURL string) (float64, error) {
	status, out, err := send(http.MethodGet, pprofURL+"/debug/pprof/heap?gc=1&debug=1", "", nil)
	if err != nil {
		return 0, err
	}
	m := heapAllocLine.FindSubmatch(out)
	if status != 200 || m == nil {
		return 0, fmt.Errorf("pprof heap: %d %s", status, firstLine(out))
	}
	b, err := strconv.ParseFloat(string(m[1]), 64)
	return b / (1 << 20), err
}
