package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	recordsapp "github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/store"
)

// TestRecordsDailyExport drives serve's scheduled export
// (ExportPreviousDay, what each run of the loop calls) with the service
// clock on both engines: after midnight in Berlin the previous day's file
// is written once, holds that day's ticket and check and decrypts with
// the recipient's identity; a second run, a second instance with a
// directory of its own and a restarted instance (the file gone) write it
// no more; two instances racing for the next day write one file; a failed
// write gives the day up to the next run; a day older than the claim's
// keeping is not attempted.
func TestRecordsDailyExport(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		ids := productIDs(t, e)
		o := order(t, e, e.LiveKey, ids["single/adult"])
		ticket := mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium("Max", "Müller", "1990-01-01")})
		e.Must(200, apitest.Req{Method: "POST", Path: recordsPath, Key: inspector(t, e, "Nachtschicht"), Body: batch(withField(check("d-1", "valid"), "ticket_id", ticket))})

		id, p := exportKeys(t)
		instance := func() *recordsapp.Service {
			return recordsapp.New(store.NewView[recordsapp.Queries](e.Store), e.Clock, "farebox")
		}
		daily := func() recordsapp.Daily {
			return recordsapp.Daily{Dir: t.TempDir(), Recipients: id.Recipient().String(), Pseudonyms: p, Lease: 10 * time.Minute, Kept: 24 * time.Hour}
		}
		a, b := daily(), daily()
		run := func(s *recordsapp.Service, d recordsapp.Daily) recordsapp.DailyResult {
			t.Helper()
			r, err := s.ExportPreviousDay(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		e.Clock.Set(time.Date(2026, 6, 15, 22, 30, 0, 0, time.UTC)) // 00:30 on 16 June in Berlin
		first := run(e.Records, a)
		if !first.Written || first.Day != "2026-06-15" || first.Path != filepath.Join(a.Dir, "records-2026-06-15.age") ||
			first.Summary.Issuance != 1 || first.Summary.Inspections != 1 {
			t.Fatalf("first run %+v", first)
		}
		sealed, err := os.ReadFile(first.Path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct { // recordsapp.Export's fields read here (kit.Timestamp only encodes)
			Day            string `json:"day"`
			PseudonymKeyID string `json:"pseudonym_key_id"`
			Issuance       []struct {
				TicketID string `json:"ticket_id"`
			} `json:"issuance"`
			Inspections []struct {
				RecordID string `json:"record_id"`
			} `json:"inspections"`
		}
		if err := json.Unmarshal(decrypt(t, sealed, id), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Day != "2026-06-15" || len(doc.Issuance) != 1 || doc.Issuance[0].TicketID != ticket || len(doc.Inspections) != 1 ||
			doc.Inspections[0].RecordID != "d-1" || doc.PseudonymKeyID != p.KeyID || bytes.Contains(sealed, []byte(ticket)) {
			t.Fatalf("the day's file holds %+v", doc)
		}
		if r := run(e.Records, a); r.Written || r.Skipped != "exists" {
			t.Fatalf("second run %+v", r)
		}
		if r := run(instance(), b); r.Written || r.Skipped != "claimed" {
			t.Fatalf("second instance %+v", r)
		}
		if err := os.Remove(first.Path); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(20 * time.Hour) // still 16 June in Berlin, after the lease
		if r := run(instance(), a); r.Written || r.Skipped != "claimed" {
			t.Fatalf("restarted instance %+v", r)
		}
		if files(t, a.Dir)+files(t, b.Dir) != 0 {
			t.Fatal("a day was written twice")
		}

		// The next day: two instances at once, one file.
		e.Clock.Advance(4 * time.Hour)
		var wg sync.WaitGroup
		results := make([]recordsapp.DailyResult, 2)
		for i, d := range []recordsapp.Daily{a, b} {
			wg.Go(func() { results[i] = run(instance(), d) })
		}
		wg.Wait()
		if results[0].Day != "2026-06-16" || results[0].Written == results[1].Written || files(t, a.Dir)+files(t, b.Dir) != 1 {
			t.Fatalf("racing instances %+v", results)
		}

		// A failed write gives the day up; the next run writes it.
		e.Clock.Advance(24 * time.Hour)
		broken := daily()
		broken.Dir = filepath.Join(broken.Dir, "missing")
		if r, err := instance().ExportPreviousDay(ctx, broken); err == nil || r.Written {
			t.Fatalf("a write into a missing directory: %+v %v", r, err)
		}
		if r := run(instance(), b); !r.Written || r.Day != "2026-06-17" {
			t.Fatalf("after a failed write %+v", r)
		}
		// Past the claim's keeping (--idempotency-ttl) a day is left alone.
		short := daily()
		short.Kept = time.Hour
		e.Clock.Advance(24 * time.Hour)
		e.Clock.Advance(2 * time.Hour)
		if r := run(instance(), short); r.Written || r.Skipped != "late" || files(t, short.Dir) != 0 {
			t.Fatalf("a day past the claim's keeping %+v", r)
		}
	})
}

// files counts the files in dir.
func files(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}
