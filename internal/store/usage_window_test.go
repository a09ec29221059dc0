package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/usage"
)

// The deferred ledger's windows (migration 00039): a window written twice
// under its key (a retry after a lost answer) is stored and counted once,
// in both durabilities; the deferred ledger commits what Flush and Close
// wait for; LastUsageBatch is the newest batch with its window key, and
// reports none in an empty ledger.
func TestDeferredLedgerWindows(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, found, err := s.Read().LastUsageBatch(ctx); err != nil || found {
			t.Fatalf("LastUsageBatch of an empty ledger: found %v, %v", found, err)
		}
		for i, d := range []store.LedgerDurability{store.LedgerCommitted, store.LedgerFlushed} {
			write := s.WindowWriter(d)
			if err := write(ctx, "empty", nil); err != nil {
				t.Fatalf("empty window: %v", err)
			}
			id := fmt.Sprintf("w%d", i)
			batch := []usage.Event{
				{RequestID: id + "a", AccountID: id, Environment: account.Live, Endpoint: "GET /x", Status: 200, Counted: true, Reason: usage.ReasonCounted, At: t0},
				{RequestID: id + "b", AccountID: id, Environment: account.Test, Endpoint: "GET /x", Status: 429, Reason: usage.ReasonRateLimited, At: t0},
			}
			key := "run-" + id
			for range 3 { // the first write and two retries under its key
				if err := write(ctx, key, batch); err != nil {
					t.Fatalf("durability %d: %v", d, err)
				}
			}
			rows, err := s.Read().UsageSummary(ctx, id, "2026-03-29", "2026-03-29")
			if err != nil || len(rows) != 1 || rows[0].Counted != 1 || rows[0].Uncounted != 1 || rows[0].Refused != 1 {
				t.Fatalf("durability %d: summary %+v, %v; want 1 counted, 1 uncounted (refused)", d, rows, err)
			}
			for _, r := range []string{id + "a", id + "b"} {
				if got, err := s.Read().UsageByRequest(ctx, r); err != nil || len(got) != 1 {
					t.Errorf("request %s: %d ledger rows (%v), want 1", r, len(got), err)
				}
			}
			pos, found, err := s.Read().LastUsageBatch(ctx)
			if err != nil || !found || pos.Key != key || pos.Rows != 2 || !pos.At.Equal(t0.Truncate(time.Microsecond)) {
				t.Errorf("LastUsageBatch = %+v, %v, %v; want window %s of 2 rows at %s", pos, found, err, key, t0)
			}
		}
		l, err := s.NewDeferredLedger(store.LedgerCommitted, usage.DeferredOptions{Window: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := l.Record(ctx, usage.Event{RequestID: fmt.Sprint("d", i), AccountID: "d", Environment: account.Live,
				Endpoint: "GET /y", Status: 200, Counted: true, Reason: usage.ReasonCounted, At: t0}); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if rows, err := s.Read().UsageSummary(ctx, "d", "2026-03-29", "2026-03-29"); err != nil || len(rows) != 1 || rows[0].Counted != 3 {
			t.Errorf("after Flush: %+v, %v; want 3 counted", rows, err)
		}
		if err := l.Record(ctx, usage.Event{RequestID: "d-last", AccountID: "d", Environment: account.Live,
			Endpoint: "GET /y", Status: 200, Counted: true, Reason: usage.ReasonCounted, At: t0}); err != nil {
			t.Fatal(err)
		}
		l.Close()
		if got, err := s.Read().UsageByRequest(ctx, "d-last"); err != nil || len(got) != 1 {
			t.Errorf("row recorded before Close: %d ledger rows (%v), want 1", len(got), err)
		}
		if pos, _, _ := s.Read().LastUsageBatch(ctx); pos.Key != l.Run()+"-2" {
			t.Errorf("last window key %q, want %s-2", pos.Key, l.Run())
		}
	})
}
