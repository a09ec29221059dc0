package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// TestInvoiceNumbersConcurrent creates 100 invoices at once through two
// server processes' worth of stacks (two apitest servers, one PostgreSQL
// database) and expects 100 distinct, consecutive numbers; then both
// servers' job workers render every document exactly once. Load-shaped
// (two servers, 100 concurrent writers): full suite only, and not parallel,
// so that no other test's server competes for the machine while its
// requests wait on the numbering lock within the request timeout (next to
// three other tests under -short they ran past it: 503).
func TestInvoiceNumbersConcurrent(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Load)
	s := storetest.Open(t, store.Postgres)
	e1 := apitest.NewOnStore(t, s, apitest.Options{})
	e2 := apitest.NewOnStore(t, s, apitest.Options{})
	items := orderSingles(t, e1, e1.LiveKey, 100)
	var wg sync.WaitGroup
	numbers := make([]string, len(items))
	errs := make(chan error, len(items))
	for i, id := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := e1.URL
			if i%2 == 1 {
				url = e2.URL
			}
			req, _ := http.NewRequest("POST", url+"/v5/ticketing/billable_item/"+id+"/invoice.json", nil)
			req.Header.Set("Authorization", "Bearer "+e1.LiveKey)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer res.Body.Close()
			var inv InvoiceJSON
			if res.StatusCode != 201 {
				errs <- fmt.Errorf("item %d: status %d", i, res.StatusCode)
				return
			}
			if err := jsonDecode(res, &inv); err != nil {
				errs <- err
				return
			}
			numbers[i] = inv.InvoiceNumber
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sort.Strings(numbers)
	for i, n := range numbers {
		if want := fmt.Sprintf("2026-%06d", i+1); n != want {
			t.Fatalf("numbers not consecutive: position %d is %q, want %q (all: %s)", i, n, want, strings.Join(numbers, " "))
		}
	}
	stored, err := s.Read().InvoiceNumbers(context.Background(), account.Live)
	if err != nil || len(stored) != 100 {
		t.Fatalf("stored numbers: %d %v", len(stored), err)
	}
	// Both instances' workers drain the queue concurrently; each job once.
	var wg2 sync.WaitGroup
	ran := make([]int, 2)
	for i, e := range []*apitest.Env{e1, e2} {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			n, err := e.App.Jobs.RunOnce(context.Background())
			if err != nil {
				t.Error(err)
			}
			ran[i] = n
		}()
	}
	wg2.Wait()
	jobs, err := s.Read().Jobs(context.Background(), "invoice.files")
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.State != "done" || j.Attempts != 1 {
			t.Errorf("job %d: state %s after %d attempts", j.ID, j.State, j.Attempts)
		}
	}
	if ran[0]+ran[1] != 100 || len(jobs) != 100 {
		t.Errorf("jobs run %v, stored %d; want 100 in total", ran, len(jobs))
	}
	if n := count(t, e1, "invoice_files"); n != 100 {
		t.Errorf("files: %d, want 100 PDFs", n)
	}
}

// TestInvoiceJobSurvivesRestart: an instance creates an invoice and dies
// while rendering it (its claim is never completed); a new instance on the
// same database re-claims the job after the lease and the files appear.
func TestInvoiceJobSurvivesRestart(t *testing.T) {
	t.Parallel()
	forEachEngineStore(t, func(t *testing.T, s *store.Store) {
		e1 := apitest.NewOnStore(t, s, apitest.Options{})
		cust := newCustomer(t, e1, e1.LiveKey, []string{"Firma"}, electronic("Firma", "EM", "re@firma.example", "R-1", "01234"))
		id := orderSingles(t, e1, e1.LiveKey, 1)[0]
		put(t, e1, e1.LiveKey, id, map[string]any{"customer_id": cust})
		inv := issue(t, e1, e1.LiveKey, id, cust, nil)
		claimed, err := s.Jobs().Claim(context.Background(), "crashed-instance", e1.Clock.Now(), 2*time.Minute, 10)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		e2 := apitest.NewOnStore(t, s, apitest.Options{Now: e1.Clock.Now()})
		if n := runJobs(t, e2); n != 0 {
			t.Errorf("job taken during the lease: %d", n)
		}
		get(t, e2, strings.Replace(inv.UBLURL, e1.URL, e2.URL, 1), 202)
		e2.Clock.Advance(2 * time.Minute)
		if n := runJobs(t, e2); n != 1 {
			t.Errorf("job not re-claimed after the lease: %d", n)
		}
		xsdValid(t, "restart.ubl.xml", get(t, e2, strings.Replace(inv.UBLURL, e1.URL, e2.URL, 1), 200).Body)
		jobs, _ := s.Read().Jobs(context.Background(), "invoice.files")
		if len(jobs) != 1 || jobs[0].State != "done" || jobs[0].Attempts != 2 {
			t.Errorf("job after restart: %+v", jobs)
		}
	})
}

// TestInvoiceJobDead: a document whose generation keeps failing ends in the
// dead state after its attempts, and the download then answers 503
// generation_failed instead of 202 forever; metrics count the failures.
func TestInvoiceJobDead(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	cust := newCustomer(t, e, e.LiveKey, []string{"Firma"}, electronic("Firma", "EM", "re@firma.example", "R-1", "01234"))
	id := orderSingles(t, e, e.LiveKey, 1)[0]
	put(t, e, e.LiveKey, id, map[string]any{"customer_id": cust})
	inv := issue(t, e, e.LiveKey, id, cust, nil)
	e.App.Jobs.Handle("invoice.files", func(context.Context, jobs.Job) error { return errors.New("renderer broken") })
	for i := 0; i < jobs.DefaultMaxAttempts; i++ {
		get(t, e, inv.UBLURL, 202)
		if n := runJobs(t, e); n != 1 {
			t.Fatalf("attempt %d: ran %d", i+1, n)
		}
		e.Clock.Advance(15 * time.Minute)
	}
	js, _ := e.Store.Read().Jobs(context.Background(), "invoice.files")
	if js[0].State != jobs.StateDead || js[0].Attempts != jobs.DefaultMaxAttempts || *js[0].LastError != "renderer broken" {
		t.Errorf("job: %+v", js[0])
	}
	for _, u := range []string{inv.UBLURL, inv.CIIURL} {
		r := get(t, e, u, 503)
		if m := r.Map(t); m["code"] != "generation_failed" {
			t.Errorf("dead job download: %v", m)
		}
	}
	// The PDF does not wait for the job: it is rendered on download.
	if b := get(t, e, inv.PDFURL, 200).Body; !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Errorf("pdf of a dead job: %.20q", b)
	}
}
