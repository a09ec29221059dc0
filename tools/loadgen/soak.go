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
// the server's resident set (from /proc/pid), its live heap after a forced
// GC (pprof heap?gc=1 on the --pprof-addr listener) and where the rest of
// the resident set is (readMemory). The first reading at or after warmup
// invoices is the baseline; it fails when a later anonymous RSS or live
// heap exceeds the baseline by more than maxGrowth. The warm-up is there
// for memory that fills up to a bound and then stays: on SQLite the page
// caches (3 MiB of pages for all connections, about 6 MiB resident; see
// internal/store's pageCacheBudgetKiB) fill within the first 1,000 invoices,
// outside the Go heap.
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
	fmt.Printf("%9s %9s %10s %9s %9s %9s %9s %9s %9s %9s %7s %6s\n", "invoices", "seconds", "invoices/s", "RSS MiB", "anon MiB", "heap MiB",
		"spans MiB", "Go MiB", "stack MiB", "other MiB", "db fds", "load")
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
		m, err := readMemory(pid, pprofURL)
		if err != nil {
			return err
		}
		fmt.Printf("%9d %9.1f %10.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %7d %6s\n", done, time.Since(start).Seconds(), float64(batch)/time.Since(t0).Seconds(),
			m.rss, m.anon, m.heap, m.spans, m.goResident, m.stacks, m.anon-m.goResident, m.dbFiles, loadAverage())
		if done < min(warmup, n) {
			continue // still warming up
		}
		if baseRSS == 0 {
			baseRSS, baseHeap, baseAt = m.anon, m.heap, done
			continue
		}
		worstRSS, worstHeap = max(worstRSS, m.anon/baseRSS-1), max(worstHeap, m.heap/baseHeap-1)
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

// memory is one reading of the server's memory, with the server idle.
type memory struct {
	rss, anon float64 // resident set, all and anonymous (/proc/pid/status)
	heap      float64 // live heap after a forced GC (HeapAlloc)
	spans     float64 // the heap's spans in use (HeapInuse): the live heap and the free space between its objects
	// goResident is what the Go runtime holds from the operating system
	// once its free pages are returned (Sys - HeapIdle): the live heap, the free space inside its spans, goroutine
	// stacks (stacks) and the runtime's own structures. Anonymous RSS
	// beyond it is memory the Go runtime does not manage: in farebox that
	// is SQLite's (modernc.org/libc allocates it with mmap). Sys counts some
	// pages the runtime reserved and never touched, so the difference is a
	// lower bound (near 0 on PostgreSQL); what matters is whether it grows.
	goResident, stacks float64
	dbFiles            int // open descriptors of SQLite database files: one per connection
}

// readMemory takes a reading: the live heap after a forced GC and the
// runtime's statistics, then the freed pages returned to the OS (so RSS
// shows what is held rather than where the GC's cycle happens to be), then
// the resident set at once. Nothing is asked of the server between the
// return and the resident set: the text heap profile allocates in
// proportion to the profile's call stacks, and read after the return it
// put that garbage into RSS (a reading that grew by 2 MiB per 1,000
// invoices on both engines while the idle server did not).
func readMemory(pid int, pprofURL string) (memory, error) {
	var m memory
	stats, err := memStats(pprofURL, true)
	if err != nil {
		return m, err
	}
	m.heap, m.spans, m.stacks = stats["HeapAlloc"]/(1<<20), stats["HeapInuse"]/(1<<20), stats["Stack"]/(1<<20)
	// What the runtime holds once its free pages are returned: all it
	// obtained but the heap's free spans (Sys - HeapIdle).
	m.goResident = (stats["Sys"] - stats["HeapIdle"]) / (1 << 20)
	if status, out, err := send(http.MethodPost, pprofURL+"/debug/free-os-memory", "", nil); err != nil || status != http.StatusNoContent {
		return m, fmt.Errorf("free-os-memory: %d %s %v", status, firstLine(out), err)
	}
	if m.rss, m.anon, err = residentMiB(pid); err != nil {
		return m, err
	}
	m.dbFiles, err = dbFiles(pid)
	return m, err
}

// loadAverage is the machine's load average over the last minute (the
// figures are only comparable beside it), or "-" where there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "-"
}

// dbFiles counts the descriptors process pid holds open on files ending
// in .db: SQLite opens the database file once per connection, so this is
// the number of connections (0 on PostgreSQL).
func dbFiles(pid int) (int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(dir + "/" + fd.Name()); err == nil && strings.HasSuffix(target, ".db") {
			n++
		}
	}
	return n, nil
}

// memStatLine is a line of runtime.MemStats at the end of the text form of
// the pprof heap profile: "# Name = value" (Stack and the other runtime
// structures: "# Stack = inuse / sys").
var memStatLine = regexp.MustCompile(`(?m)^# (\w+) = (\d+)`)

// memStats reads the server's runtime.MemStats from its pprof heap profile
// (after a forced GC when gc is set).
func memStats(pprofURL string, gc bool) (map[string]float64, error) {
	u := pprofURL + "/debug/pprof/heap?debug=1"
	if gc {
		u += "&gc=1"
	}
	status, out, err := send(http.MethodGet, u, "", nil)
	if err != nil {
		return nil, err
	}
	stats := map[string]float64{}
	for _, m := range memStatLine.FindAllSubmatch(out, -1) {
		stats[string(m[1])], _ = strconv.ParseFloat(string(m[2]), 64)
	}
	if status != 200 || stats["HeapAlloc"] == 0 || stats["Sys"] == 0 || stats["HeapIdle"] == 0 {
		return nil, fmt.Errorf("pprof heap: %d %s", status, firstLine(out))
	}
	return stats, nil
}
