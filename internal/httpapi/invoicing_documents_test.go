package httpapi_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestInvoicePDFWithInvoice: the PDF answers 200 as soon as the invoice
// response is there (only the XML files are asynchronous), on both engines.
// Concurrent first downloads through one instance render the PDF once;
// through two instances on one database they may each render but the store
// keeps one file and every download gets the same bytes; the job that runs
// afterwards keeps that file.
func TestInvoicePDFWithInvoice(t *testing.T) {
	for _, engine := range storetest.Engines {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			s := storetest.Open(t, engine)
			e1 := apitest.NewOnStore(t, s, apitest.Options{})
			e2 := apitest.NewOnStore(t, s, apitest.Options{Now: e1.Clock.Now()})
			key := e1.LiveKey
			cust := newCustomer(t, e1, key, []string{"Firma GmbH", "Weg 1", "01234 Dresden"}, electronic("Firma GmbH", "EM", "re@firma.example", "R-1", "01234"))
			items := orderSingles(t, e1, key, 3)
			var invs []invoiceJSON
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
			before := e1.App.PDFsRendered()
			bodies := downloadConcurrently(t, []*apitest.Env{e1}, invs[1].PDFURL, 8)
			if n := e1.App.PDFsRendered() - before; n != 1 {
				t.Errorf("one instance rendered the PDF %d times for 8 concurrent downloads, want 1", n)
			}
			sameBodies(t, bodies)

			// 3. Through two instances: at most one rendering each, one stored
			// file, identical bytes.
			b1, b2 := e1.App.PDFsRendered(), e2.App.PDFsRendered()
			bodies = downloadConcurrently(t, []*apitest.Env{e1, e2}, invs[2].PDFURL, 8)
			if n1, n2 := e1.App.PDFsRendered()-b1, e2.App.PDFsRendered()-b2; n1 > 1 || n2 > 1 || n1+n2 == 0 {
				t.Errorf("renderings per instance: %d and %d, want at most one each", n1, n2)
			}
			sameBodies(t, bodies)
			if n := count(t, e1, "invoice_files"); n != 3 {
				t.Errorf("stored files before the jobs ran: %d, want the 3 PDFs", n)
			}

			// 4. The jobs add the XML and keep the PDFs already served.
			rendered := e1.App.PDFsRendered()
			if n := runJobs(t, e1); n != 3 {
				t.Errorf("jobs run: %d, want 3", n)
			}
			if n := e1.App.PDFsRendered() - rendered; n != 0 {
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
