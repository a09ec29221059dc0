package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// BenchmarkInvoiceToXMLReady measures, under load, the time from an invoice
// creation's 201 to the first 200 of its .ubl.xml: 8 partner clients create
// invoices for customers with electronic invoicing as fast as they can
// while two job workers render the documents; each client then polls its
// UBL URL every 5 ms. Reported: invoices/s created and the mean and p95
// latency to XML ready.
//
//	go test ./internal/httpapi -run x -bench InvoiceToXMLReady -benchtime 200x
func BenchmarkInvoiceToXMLReady(b *testing.B) {
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		e := apitest.New(b, engine, apitest.Options{Workers: 2, NoLedger: true})
		cust := newCustomerB(b, e)
		var items []string
		for len(items) < b.N {
			n := min(100, b.N-len(items))
			items = append(items, orderSinglesB(b, e, n)...)
		}
		for _, id := range items {
			e.Must(200, apitest.Req{Method: "PUT", Path: "/v5/ticketing/billable_item/" + id + ".json", Key: e.LiveKey,
				Body: map[string]any{"customer_id": cust}, NoValidate: true})
		}
		const clients = 8
		lat := make([]time.Duration, len(items))
		next := make(chan int, len(items))
		for i := range items {
			next <- i
		}
		close(next)
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					var inv InvoiceJSON
					req, _ := http.NewRequest("POST", e.URL+"/v5/ticketing/billable_item/"+items[i]+"/invoice/"+cust+".json", nil)
					req.Header.Set("Authorization", "Bearer "+e.LiveKey)
					res, err := http.DefaultClient.Do(req)
					if err != nil || res.StatusCode != 201 {
						b.Errorf("create: %v %v", err, res)
						return
					}
					created := time.Now()
					_ = jsonDecode(res, &inv)
					res.Body.Close()
					for {
						r, err := http.Get(inv.UBLURL)
						if err != nil {
							b.Error(err)
							return
						}
						r.Body.Close()
						if r.StatusCode == 200 {
							break
						}
						if r.StatusCode != 202 {
							b.Errorf("download: %d", r.StatusCode)
							return
						}
						time.Sleep(5 * time.Millisecond)
					}
					lat[i] = time.Since(created)
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		var sum time.Duration
		for _, l := range lat {
			sum += l
		}
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "invoices/s")
		b.ReportMetric(float64(sum.Milliseconds())/float64(len(lat)), "ms-to-xml-mean")
		b.ReportMetric(float64(lat[len(lat)*95/100].Milliseconds()), "ms-to-xml-p95")
	})
}

func newCustomerB(b *testing.B, e *apitest.Env) string {
	r := e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/customers.json", Key: e.LiveKey, NoValidate: true,
		Body: map[string]any{"customer": map[string]any{"address_lines": []string{"Stadt Beispielstadt", "Rathausplatz 1", "04109 Leipzig"},
			"electronic_invoicing": electronic("Stadt Beispielstadt", "0204", "04011000-12345-67", "04011000-12345-67", "04109")}}})
	return r.Map(b)["id"].(string)
}

func orderSinglesB(b *testing.B, e *apitest.Env, n int) []string {
	var ids []string
	for i := 0; i < n; i++ {
		ids = append(ids, singleProduct(b, e))
	}
	var o struct {
		Coupons []struct {
			BillableItemID string `json:"billable_item_id"`
		} `json:"coupons"`
	}
	e.Must(201, apitest.Req{Method: "POST", Path: "/v6/ticketing/orders.json", Key: e.LiveKey, NoValidate: true,
		Body: map[string]any{"product_ids": ids}}).JSON(b, &o)
	var out []string
	for _, c := range o.Coupons {
		out = append(out, c.BillableItemID)
	}
	return out
}

var singleOnce sync.Map

func singleProduct(b *testing.B, e *apitest.Env) string {
	if v, ok := singleOnce.Load(e); ok {
		return v.(string)
	}
	var ps []map[string]any
	e.Must(200, apitest.Req{Method: "GET", Path: "/v2/products/search_by_city_name.json?city_name=Berlin", Key: e.LiveKey, NoValidate: true}).JSON(b, &ps)
	for _, p := range ps {
		if p["ticket_type"] == "single" && p["customer_type"] == "adult" {
			singleOnce.Store(e, p["id"].(string))
			return p["id"].(string)
		}
	}
	b.Fatal("no single adult product")
	return ""
}

// BenchmarkInvoicePDFDownloads measures invoice-PDF throughput through the
// API with 1, 4 and 16 clients downloading at once, each download the
// first of its document (rendered on the request: the process's one
// renderer, its queue at the default --pdf-queue). The invoices (of a
// customer with electronic invoicing: Factur-X embedded) are issued before
// the timer starts; no job worker runs. Reported: PDFs/s, the median and
// p99 download time, and refusals (renderer_busy; none at the default
// queue with 16 clients).
//
//	go test ./internal/httpapi -run '^$' -bench InvoicePDFDownloads -benchtime 64x
func BenchmarkInvoicePDFDownloads(b *testing.B) {
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		e := apitest.New(b, engine, apitest.Options{NoLedger: true})
		cust := newCustomerB(b, e)
		for _, clients := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
				urls := issueForDownload(b, e, cust, b.N)
				b.ResetTimer()
				lat, refused, elapsed := downloadAll(b, urls, clients)
				b.StopTimer()
				if len(lat) == 0 {
					b.Fatalf("every one of %d downloads was refused", refused)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(len(urls))/elapsed.Seconds(), "pdfs/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "ms-p99")
				b.ReportMetric(float64(refused), "refused")
			})
		}
	})
}

// issueForDownload issues n invoices to cust and returns their PDF URLs.
func issueForDownload(b *testing.B, e *apitest.Env, cust string, n int) []string {
	var items, urls []string
	for len(items) < n {
		items = append(items, orderSinglesB(b, e, min(100, n-len(items)))...)
	}
	for _, id := range items {
		e.Must(200, apitest.Req{Method: "PUT", Path: "/v5/ticketing/billable_item/" + id + ".json", Key: e.LiveKey,
			Body: map[string]any{"customer_id": cust}, NoValidate: true})
		var inv InvoiceJSON
		e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_item/" + id + "/invoice/" + cust + ".json",
			Key: e.LiveKey, NoValidate: true}).JSON(b, &inv)
		urls = append(urls, inv.PDFURL)
	}
	return urls
}

// downloadAll downloads every URL once with clients at a time and returns
// the time of each 200, how many were refused with 503 and the wall time.
func downloadAll(b *testing.B, urls []string, clients int) (lat []time.Duration, refused int, elapsed time.Duration) {
	next := make(chan string, len(urls))
	for _, u := range urls {
		next <- u
	}
	close(next)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for u := range next {
				t0 := time.Now()
				res, err := http.Get(u)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				d := time.Since(t0)
				mu.Lock()
				switch res.StatusCode {
				case 200:
					lat = append(lat, d)
				case 503:
					refused++
				default:
					b.Errorf("download: %d", res.StatusCode)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return lat, refused, time.Since(start)
}
