package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	recordsapp "github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/store"
)

// TestRecordsDailyExport drives serve's scheduled export (ExportDue,
// what each run of the loop calls) with the service clock on both
// engines: after midnight in Berlin the previous day's file is written
// once, holds that day's ticket and check and decrypts with the
// recipient's identity; a second run, a second instance with a directory
// of its own and a restarted instance (the file gone) write it no more;
// two instances racing for the next day write one file; a failed write
// gives the day up to the next run; days every instance missed are
// written oldest first within the catch-up window (across the October
// clock change), and those before it are named, not written.
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
			return recordsapp.Daily{Dir: t.TempDir(), Recipients: id.Recipient().String(), Pseudonyms: p, Lease: 10 * time.Minute, CatchUp: 7}
		}
		a, b := daily(), daily()
		run := func(s *recordsapp.Service, d recordsapp.Daily) recordsapp.Due {
			t.Helper()
			due, err := s.ExportDue(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			return due
		}
		// written lists the days a run wrote, in its order.
		written := func(due recordsapp.Due) []string {
			var days []string
			for _, r := range due.Days {
				if r.Written {
					days = append(days, r.Day)
				}
			}
			return days
		}
		e.Clock.Set(time.Date(2026, 6, 15, 22, 30, 0, 0, time.UTC)) // 00:30 on 16 June in Berlin
		due := run(e.Records, a)
		if len(due.Days) != 1 {
			t.Fatalf("first run %+v", due)
		}
		first := due.Days[0]
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
		// Nothing is owed any more: not to this instance, a second one or a
		// restarted one that lost the file.
		if due := run(e.Records, a); len(due.Days) != 0 {
			t.Fatalf("second run %+v", due)
		}
		if due := run(instance(), b); len(due.Days) != 0 {
			t.Fatalf("second instance %+v", due)
		}
		if err := os.Remove(first.Path); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(20 * time.Hour) // still 16 June in Berlin, after the lease
		if due := run(instance(), a); len(due.Days) != 0 {
			t.Fatalf("restarted instance %+v", due)
		}
		if files(t, a.Dir)+files(t, b.Dir) != 0 {
			t.Fatal("a day was written twice")
		}

		// The next day: two instances at once, one file.
		e.Clock.Advance(4 * time.Hour)
		var wg sync.WaitGroup
		results := make([]recordsapp.Due, 2)
		for i, d := range []recordsapp.Daily{a, b} {
			wg.Go(func() { results[i] = run(instance(), d) })
		}
		wg.Wait()
		if got := append(written(results[0]), written(results[1])...); len(got) != 1 || got[0] != "2026-06-16" || files(t, a.Dir)+files(t, b.Dir) != 1 {
			t.Fatalf("racing instances %+v", results)
		}

		// A failed write gives the day up; the next run writes it.
		e.Clock.Advance(24 * time.Hour)
		broken := daily()
		broken.Dir = filepath.Join(broken.Dir, "missing")
		if due, err := instance().ExportDue(ctx, broken); err == nil || len(written(due)) != 0 {
			t.Fatalf("a write into a missing directory: %+v %v", due, err)
		}
		if got := written(run(instance(), b)); len(got) != 1 || got[0] != "2026-06-17" {
			t.Fatalf("after a failed write %v", got)
		}

		// Every instance down for three days: the next run writes them,
		// oldest first.
		e.Clock.Advance(3 * 24 * time.Hour) // 21 June, 00:30 in Berlin
		if due := run(instance(), a); !slices.Equal(written(due), []string{"2026-06-18", "2026-06-19", "2026-06-20"}) || due.MissedFrom != "" {
			t.Fatalf("catch-up %+v", due)
		}
		// Down for five days with a window of two: the last two are
		// written, the three before them named.
		e.Clock.Advance(5 * 24 * time.Hour)
		short := daily()
		short.CatchUp = 2
		if due := run(instance(), short); !slices.Equal(written(due), []string{"2026-06-24", "2026-06-25"}) ||
			due.MissedFrom != "2026-06-21" || due.MissedTo != "2026-06-23" || files(t, short.Dir) != 2 {
			t.Fatalf("catch-up past the window %+v", due)
		}
		// Over the end of summer time (25 October 2026 has 25 hours): each
		// day once.
		e.Clock.Set(time.Date(2026, 10, 26, 23, 30, 0, 0, time.UTC)) // 00:30 on 27 October in Berlin
		short.CatchUp = 3
		if due := run(instance(), short); !slices.Equal(written(due), []string{"2026-10-24", "2026-10-25", "2026-10-26"}) ||
			due.MissedFrom != "2026-06-26" || due.MissedTo != "2026-10-23" {
			t.Fatalf("catch-up over the clock change %+v", due)
		}
		// Purging the Idempotency-Keys (--idempotency-ttl) keeps the days
		// written: nothing is owed again.
		if err := e.Store.Write(ctx, func(q store.Q) error {
			_, err := q.PurgeIdempotencyKeys(ctx, e.Clock.Now().Add(time.Hour))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if due := run(instance(), daily()); len(due.Days) != 0 {
			t.Fatalf("after the purge %+v", due)
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
