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
	return now.In(clock.Berlin).AddDate(0, 0, -1).Format("2006-01-02")
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
	// Kept is how long the claim stays in the database (the Idempotency-Key
	// TTL: --idempotency-ttl purges it). A day is attempted only within
	// Kept of its end, so a purged claim is never the reason for a
	// second file.
	Kept time.Duration
}

// DailyResult says what one run of the scheduled export did.
type DailyResult struct {
	Day     string
	Path    string
	Written bool   // this run wrote the file
	Skipped string // why not: "exists", "claimed" (another instance has or had it), "late"
	Summary ExportSummary
}

// ExportPreviousDay writes the previous day's export (PreviousDay of the
// service clock) to d.Dir as ExportFileName, once: not when the file is
// there, and not when the day is claimed in the database, by another
// instance now or by any instance before (a restart, a second instance
// with a directory of its own). A failed write gives the claim up, so the
// next run tries again.
func (s *Service) ExportPreviousDay(ctx context.Context, d Daily) (DailyResult, error) {
	now := s.Clock.Now()
	day := PreviousDay(now)
	r := DailyResult{Day: day, Path: filepath.Join(d.Dir, ExportFileName(day))}
	_, end, err := ParseDay(day)
	if err != nil {
		return r, err
	}
	if d.Kept > 0 && now.Sub(end) >= d.Kept {
		r.Skipped = "late"
		return r, nil
	}
	if _, err := os.Stat(r.Path); err == nil {
		r.Skipped = "exists"
		return r, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	var claimed bool
	err = s.DB.Write(ctx, func(q Queries) (err error) {
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
