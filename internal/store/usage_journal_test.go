package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/usage"
)

// TestUsageJournalRollup: batches journaled to the file log reach the
// database exactly once, across a simulated crash (segments left behind,
// a commit whose file was not removed, a torn last frame).
func TestUsageJournalRollup(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		dir := t.TempDir()
		ev := func(id string, counted bool) usage.Event {
			return usage.Event{RequestID: id, AccountID: "a", Environment: account.Live, Endpoint: "GET /x", Status: 200,
				Counted: counted, Reason: usage.ReasonCounted, At: t0}
		}
		// A first process journals two batches and dies without rolling up.
		first, err := usage.OpenFileLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		refused := usage.Event{RequestID: "r6", AccountID: "a", Environment: account.Live, Endpoint: "GET /x", Status: 429,
			Reason: usage.ReasonRateLimited, At: t0}
		first.Write(ctx, []usage.Event{ev("r1", true), ev("r2", false), refused})
		first.Write(ctx, []usage.Event{ev("r3", true)})
		segs, _ := filepath.Glob(filepath.Join(dir, "usage-*.log"))
		if len(segs) != 1 {
			t.Fatalf("%d segments", len(segs))
		}
		// It dies in the middle of copying its next frame (the in-process
		// crash is simulated by closing, which cuts the file to its frames,
		// and appending the torn frame).
		first.Close()
		first.Release()
		f, _ := os.OpenFile(segs[0], os.O_APPEND|os.O_WRONLY, 0)
		f.Write([]byte{42, 0, 0, 0, 1, 2})
		f.Close()

		// The next process rolls the leftovers up before serving, then journals more.
		second, err := usage.OpenFileLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := second.Rollup(ctx, s.RollupSegment); err != nil {
			t.Fatal(err)
		}
		second.Write(ctx, []usage.Event{ev("r4", true)})
		// A rollup that committed but died before removing the file: the
		// segment is recorded, so rolling it again changes nothing.
		segs, _ = filepath.Glob(filepath.Join(dir, "usage-*.log"))
		second.Close()
		batches, err := usage.ReadSegment(segs[0])
		if evs, derr := usage.DecodeBatch(batches); err != nil || derr != nil || len(evs) != 1 || evs[0].RequestID != "r4" {
			t.Fatalf("segment: %v %v %v", evs, err, derr)
		}
		name := filepath.Base(segs[0])
		name = name[:len(name)-len(".log")]
		if err := s.RollupSegment(ctx, name, batches); err != nil {
			t.Fatal(err)
		}
		if err := second.Rollup(ctx, s.RollupSegment); err != nil {
			t.Fatal(err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "usage-*.log")); len(left) != 0 {
			t.Errorf("segments left: %v", left)
		}
		all, err := s.Read().UsageEvents(ctx, t0.Add(-time.Hour), t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, e := range all {
			seen[e.RequestID]++
		}
		for _, id := range []string{"r1", "r2", "r3", "r4", "r6"} {
			if seen[id] != 1 {
				t.Errorf("%s recorded %d times", id, seen[id])
			}
		}
		rows, _ := s.Read().UsageSummary(ctx, "a", t0.Format(time.DateOnly), t0.Format(time.DateOnly))
		if len(rows) != 1 || rows[0].Counted != 3 || rows[0].Uncounted != 2 || rows[0].Refused != 1 {
			t.Errorf("summary %+v, want 3 counted and 2 uncounted, 1 of them refused", rows)
		}
		if err := second.Write(ctx, []usage.Event{ev("r5", true)}); err != usage.ErrClosed {
			t.Errorf("write after close: %v", err)
		}
	})
}

// BenchmarkJournalRecord is BenchmarkLedgerRecord with the embedded file journal.
func BenchmarkJournalRecord(b *testing.B) {
	j, err := usage.OpenFileLog(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	l := usage.NewLedger(j.Write, nil)
	defer l.Close()
	recordInParallel(b, l)
}

// TestRollupStampsWithStoreClock: the segment record is stamped by the
// store's injected clock, not the machine's.
func TestRollupStampsWithStoreClock(t *testing.T) {
	storetest.ForEachEngineOptions(t, func(t *testing.T, engine store.Engine) {
		at := time.Date(2031, 3, 9, 8, 7, 6, 123456789, time.UTC)
		s := storetest.OpenWith(t, engine, func(o *store.Options) { o.Clock = clocktest.NewFixed(at) })
		if err := s.RollupSegment(context.Background(), "usage-clock", nil); err != nil {
			t.Fatal(err)
		}
		var got time.Time
		if err := s.ReaderDB().QueryRow(`SELECT rolled_at FROM usage_segments WHERE name = $1`, "usage-clock").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := at.Truncate(time.Microsecond); !got.Equal(want) {
			t.Errorf("rolled_at = %v, want the store clock's %v", got, want)
		}
	})
}
