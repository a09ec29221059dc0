package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/records"
)

// PreviousDay is the export day before the one now falls on: the default
// of `farebox records export --day` and the day serve's scheduled export
// writes (a calendar day in Europe/Berlin).
func PreviousDay(now time.Time) string {
	return dayOf(now.In(clock.Berlin).AddDate(0, 0, -1))
}

// ExportFile writes the export to path through a temporary file in the
// same directory renamed into place: a failed export leaves no partial
// file, and a reader never sees a half-written one.
func (s *Service) ExportFile(ctx context.Context, req ExportRequest, path string) (ExportSummary, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".records-*")
	if err != nil {
		return ExportSummary{}, err
	}
	defer os.Remove(f.Name())
	sum, err := s.Export(ctx, req, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return sum, err
	}
	return sum, os.Rename(f.Name(), path)
}

// ExportFileName is the scheduled export's file of day in its directory.
func ExportFileName(day string) string { return "records-" + day + ".age" }

// The scheduled export's claim on a day: an Idempotency-Key of its own
// scope (no API caller's scope starts with "records-export:"), the key the
// day. The completed claim is the record that the day was written.
const (
	dailyScope = "records-export:daily"
	dailyHash  = "farebox-records/1"
)

// Daily is the scheduled export's setting (serve's --records-export-dir).
type Daily struct {
	Dir        string // the directory of the day files
	Recipients string // as ExportRequest.Recipients
	Pseudonyms *records.Pseudonymizer
	// Lease is how long a claim on a day holds while its instance writes
	// it; a crashed instance's claim is taken over after it.
	Lease time.Duration
	// CatchUp is how many days back a run writes the days no instance
	// wrote (every instance down over a weekend): 1 writes the previous
	// day only.
	CatchUp int
}

// DailyResult says what the scheduled export did with one day.
type DailyResult struct {
	Day     string
	Path    string
	Written bool   // this run wrote the file
	Skipped string // why not: "exists" (the file is in the directory), "claimed" (another instance writes it)
	Summary ExportSummary
}

// Due is what one run of the scheduled export did.
type Due struct {
	// Days are the days the run looked at, oldest first.
	Days []DailyResult
	// MissedFrom and MissedTo, when set, are the first and last day that
	// no instance wrote and that lie before the catch-up window: they are
	// left to `farebox records export --day`.
	MissedFrom, MissedTo string
}

// ExportDue writes the days the scheduled export owes to d.Dir, each as
// ExportFileName and once across instances and restarts: the days after
// the newest day any instance wrote, up to the previous day (PreviousDay
// of the service clock), at most d.CatchUp days back. Before the first
// day was ever written it owes the previous day alone. Days go oldest
// first, and the run stops at a day that fails (the next run tries it
// again) or that another instance holds (it goes on from there), so a day
// is never written before the one before it.
//
// A day is skipped when its file is in the directory, and not written
// when it is claimed in the database, by another instance now or by any
// instance before. The claims of this scope outlive --idempotency-ttl
// (store.PurgeIdempotencyKeys keeps them): they are the record of what
// was written.
func (s *Service) ExportDue(ctx context.Context, d Daily) (Due, error) {
	var due Due
	now := s.Clock.Now()
	// Days are stepped in Berlin, where a day is 23 or 25 hours twice a year.
	last, _, err := ParseDay(PreviousDay(now))
	if err != nil {
		return due, err
	}
	last = last.In(clock.Berlin)
	newest, err := s.DB.Read().NewestIdempotencyKey(ctx, dailyScope)
	if err != nil {
		return due, err
	}
	first := last
	if newest != "" {
		prev, _, err := ParseDay(newest)
		if err != nil {
			return due, fmt.Errorf("records export: the newest claim %q is not a day: %w", newest, err)
		}
		first = prev.In(clock.Berlin).AddDate(0, 0, 1)
		if oldest := last.AddDate(0, 0, 1-max(d.CatchUp, 1)); first.Before(oldest) {
			due.MissedFrom, due.MissedTo = dayOf(first), dayOf(oldest.AddDate(0, 0, -1))
			first = oldest
		}
	}
	for day := first; !day.After(last); day = day.AddDate(0, 0, 1) {
		r, err := s.exportDay(ctx, d, dayOf(day))
		due.Days = append(due.Days, r)
		if err != nil || r.Skipped == "claimed" {
			return due, err
		}
	}
	return due, nil
}

// dayOf is the calendar day of t's start in Berlin (ParseDay's inverse).
func dayOf(t time.Time) string { return t.In(clock.Berlin).Format("2006-01-02") }

// exportDay writes day to d.Dir once (ExportDue). A failed write gives the
// claim up, so the next run tries again.
func (s *Service) exportDay(ctx context.Context, d Daily, day string) (DailyResult, error) {
	now := s.Clock.Now()
	r := DailyResult{Day: day, Path: filepath.Join(d.Dir, ExportFileName(day))}
	if _, err := os.Stat(r.Path); err == nil {
		r.Skipped = "exists"
		return r, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	var claimed bool
	err := s.DB.Write(ctx, func(q Queries) (err error) {
		claimed, _, err = q.ClaimIdempotencyKey(ctx, dailyScope, day, dailyHash, now, d.Lease)
		return err
	})
	if err != nil || !claimed {
		r.Skipped = "claimed"
		return r, err
	}
	r.Summary, err = s.ExportFile(ctx, ExportRequest{Day: day, Kind: KindAll, Recipients: d.Recipients, Pseudonyms: d.Pseudonyms}, r.Path)
	// The claim is given up or completed even when ctx ended meanwhile
	// (a shutdown during the write).
	done := context.WithoutCancel(ctx)
	if err != nil {
		// Written nothing: the next run (here or elsewhere) may try again.
		rerr := s.DB.Write(done, func(q Queries) error { return q.ReleaseIdempotencyKey(done, dailyScope, day) })
		return r, errors.Join(fmt.Errorf("records export %s: %w", day, err), rerr)
	}
	r.Written = true
	body, _ := json.Marshal(map[string]any{"day": day, "file": ExportFileName(day), "issuance": r.Summary.Issuance, "inspections": r.Summary.Inspections})
	return r, s.DB.Write(done, func(q Queries) error {
		return q.CompleteIdempotencyKey(done, dailyScope, day, 200, "application/json", body)
	})
}
