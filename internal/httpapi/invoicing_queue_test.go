package httpapi_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/invoicing"
)

// TestPDFQueueFull: the process renders one PDF at a time and lets
// --pdf-queue renders wait. With a queue of one, one download holds the
// renderer (its render blocks until the test releases it), and of two more
// downloads of other documents one waits and the other is refused at once
// with 503 renderer_busy and Retry-After; nothing is stored for it. Once
// the renderer is released, the waiting one and the held one get their PDFs
// and the refused one gets its PDF on a retry. Deterministic: the first
// answer of the two can only be the refusal (the waiting one cannot answer
// before the release, its deadline being an hour away). The renderer is
// the process's, but the queue and its limits are the server's
// (apitest.Options.PDF): the renders of servers of other tests wait their
// turn (up to pdf.DefaultLimits.Deadline) without counting here.
func TestPDFQueueFull(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{PDF: pdf.Limits{Queue: 1, Deadline: time.Hour}}, func(t *testing.T, e *apitest.Env) {
		key := e.LiveKey
		cust := newCustomer(t, e, key, []string{"Firma"}, nil)
		var urls []string
		for _, id := range orderSingles(t, e, key, 3) {
			put(t, e, key, id, map[string]any{"customer_id": cust})
			urls = append(urls, issue(t, e, key, id, cust, nil).PDFURL)
		}
		entered, release := make(chan string, 3), make(chan struct{})
		var once sync.Once
		releaseOnce := func() { once.Do(func() { close(release) }) }
		t.Cleanup(releaseOnce) // a failure before the release frees the renderer for the other tests
		e.Invoices.PDFRenderer = func(d *invoicedoc.Document, electronic bool) (invoicing.File, error) {
			if err := e.PDF.Exclusive(func() error { entered <- d.Number; <-release; return nil }); err != nil {
				return invoicing.File{}, err
			}
			return invoices.RenderPDF(e.PDF, d, electronic)
		}
		t.Cleanup(func() { e.Invoices.PDFRenderer = nil })
		download := func(url string, out chan<- *apitest.Resp) {
			out <- e.Do(apitest.Req{Method: "GET", Path: strings.TrimPrefix(url, e.URL)})
		}
		held := make(chan *apitest.Resp, 1)
		go download(urls[0], held)
		<-entered // the first download holds the renderer
		rest := make(chan *apitest.Resp, 2)
		go download(urls[1], rest)
		go download(urls[2], rest)
		refused := <-rest
		if refused.Status != 503 || refused.Header.Get("Retry-After") == "" {
			t.Fatalf("with the renderer held and one waiting: %d %q %s", refused.Status, refused.Header.Get("Retry-After"), refused.Body)
		}
		if m := refused.Map(t); m["code"] != pdf.CodeRendererBusy {
			t.Errorf("refusal: %v", m)
		}
		if n := e.PDF.Length(); n != 2 {
			t.Errorf("admitted while one is held and one waits: %d, want 2", n)
		}
		releaseOnce()
		for _, r := range []*apitest.Resp{<-held, <-rest} {
			if r.Status != 200 || !bytes.HasPrefix(r.Body, []byte("%PDF-")) {
				t.Errorf("after the release: %d %.40q", r.Status, r.Body)
			}
		}
		e.Invoices.PDFRenderer = nil
		for _, u := range urls {
			get(t, e, u, 200)
		}
		if n := e.PDF.Length(); n != 0 {
			t.Errorf("admitted after every download: %d", n)
		}
	})
}
