package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/usage"
	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 3, 29, 0, 30, 0, 123456789, time.UTC)

// mustWrite runs fn in a write transaction of s and fails the test at once
// if it does not commit.
func mustWrite(t *testing.T, s *store.Store, fn func(q store.Q) error) {
	t.Helper()
	if err := s.Write(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func TestAccountsAndKeys(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := account.Account{ID: "farebox-account-1", Name: "Partner Ä", CreatedAt: t0}
		mustWrite(t, s, func(q store.Q) error { return q.CreateAccount(ctx, a) })
		err := s.Write(ctx, func(q store.Q) error { return q.CreateAccount(ctx, a) })
		if apperr.KindOf(err) != apperr.Conflict {
			t.Fatalf("duplicate account: kind %v (%v), want Conflict", apperr.KindOf(err), err)
		}
		got, err := s.Read().Account(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != a.Name || !got.CreatedAt.Equal(t0.Truncate(time.Microsecond)) {
			t.Errorf("Account = %+v", got)
		}
		if _, err := s.Read().Account(ctx, "nope"); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("unknown account: %v", err)
		}

		secret, prefix, hash := account.NewKey(account.Test)
		k := account.Key{ID: "k1", AccountID: a.ID, Prefix: prefix, Environment: account.Test, CreatedAt: t0}
		mustWrite(t, s, func(q store.Q) error { return q.CreateKey(ctx, k, hash) })
		p, err := s.Read().PrincipalByKeyHash(ctx, account.Hash(secret))
		if err != nil {
			t.Fatal(err)
		}
		want := account.Principal{AccountID: a.ID, AccountName: a.Name, KeyID: "k1", Environment: account.Test}
		if d := cmp.Diff(want, p); d != "" {
			t.Errorf("principal (-want +got):\n%s", d)
		}
		var n int64
		if err := s.Write(ctx, func(q store.Q) (err error) { n, err = q.RevokeKeysByPrefix(ctx, prefix, t0); return }); err != nil || n != 1 {
			t.Fatalf("revoke: n=%d err=%v", n, err)
		}
		if _, err := s.Read().PrincipalByKeyHash(ctx, account.Hash(secret)); apperr.KindOf(err) != apperr.Unauthenticated {
			t.Errorf("revoked key still resolves: %v", err)
		}
		keys, err := s.Read().Keys(ctx, a.ID)
		if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil || keys[0].Prefix != prefix {
			t.Errorf("Keys = %+v, %v", keys, err)
		}
	})
}

func TestIdempotencyClaims(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		claim := func(at time.Time, hash string) (bool, idempotency.Record) {
			var ok bool
			var rec idempotency.Record
			if err := s.Write(ctx, func(q store.Q) (err error) {
				ok, rec, err = q.ClaimIdempotencyKey(ctx, "acct", "k", hash, at, time.Minute)
				return
			}); err != nil {
				t.Fatal(err)
			}
			return ok, rec
		}
		if ok, _ := claim(t0, "h1"); !ok {
			t.Fatal("first claim refused")
		}
		if ok, rec := claim(t0.Add(time.Second), "h1"); ok || rec.Status != 0 {
			t.Fatalf("second claim while running: ok=%v rec=%+v", ok, rec)
		}
		// The owner died: after the lease, the same request may run again.
		if ok, _ := claim(t0.Add(2*time.Minute), "h1"); !ok {
			t.Fatal("expired claim not taken over")
		}
		if err := s.Write(ctx, func(q store.Q) error {
			return q.CompleteIdempotencyKey(ctx, "acct", "k", 201, "application/json", []byte(`{"a":1}`))
		}); err != nil {
			t.Fatal(err)
		}
		ok, rec := claim(t0.Add(time.Hour), "h1")
		if ok || rec.Status != 201 || string(rec.Body) != `{"a":1}` || rec.ContentType != "application/json" {
			t.Fatalf("replay: ok=%v rec=%+v", ok, rec)
		}
		if ok, rec := claim(t0.Add(time.Hour), "h2"); ok || rec.RequestHash != "h1" {
			t.Fatalf("different body: ok=%v rec=%+v", ok, rec)
		}
	})
}

func TestIdempotencyConcurrentClaim(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var winners atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.Write(ctx, func(q store.Q) error {
					ok, _, err := q.ClaimIdempotencyKey(ctx, "acct", "same", "h", t0, time.Minute)
					if ok {
						winners.Add(1)
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if winners.Load() != 1 {
			t.Fatalf("%d claims won, want exactly 1", winners.Load())
		}
	})
}

func TestUsageLedger(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		l := s.NewLedger(store.LedgerCommitted, nil)
		var wg sync.WaitGroup
		for i := 0; i < 250; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				ev := usage.Event{RequestID: "r", AccountID: "a", Environment: account.Live, Endpoint: "GET /x",
					Status: 200, Counted: i%5 != 0, Reason: usage.ReasonCounted, At: t0.Add(time.Duration(i%2) * 24 * time.Hour)}
				if !ev.Counted {
					ev.Reason = usage.ReasonSession
				}
				if err := l.Record(ctx, ev); err != nil {
					t.Error(err)
				}
			}(i)
		}
		wg.Wait()
		l.Close()
		rows, err := s.Read().UsageSummary(ctx, "a", "2026-03-29", "2026-03-30")
		if err != nil {
			t.Fatal(err)
		}
		want := []usage.Row{
			{AccountID: "a", Day: "2026-03-29", Endpoint: "GET /x", Counted: 100, Uncounted: 25},
			{AccountID: "a", Day: "2026-03-30", Endpoint: "GET /x", Counted: 100, Uncounted: 25},
		}
		if d := cmp.Diff(want, rows); d != "" {
			t.Errorf("summary (-want +got):\n%s", d)
		}
		if rows, _ := s.Read().UsageSummary(ctx, "other", "2026-01-01", "2026-12-31"); len(rows) != 0 {
			t.Errorf("other account sees %v", rows)
		}
		if err := l.Record(ctx, usage.Event{}); err != usage.ErrClosed {
			t.Errorf("Record after Close = %v", err)
		}
	})
}

// The PostgreSQL ledger's own connection dying (server restart, terminated
// backend) fails the batch in flight as unavailable and is replaced for the
// next one.
func TestUsageLedgerReconnects(t *testing.T) {
	opts := storetest.Options(t, store.Postgres)
	ctx := context.Background()
	s, err := store.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	write := s.UsageWriter(store.LedgerCommitted)
	ev := func(id string) []usage.Event {
		return []usage.Event{{RequestID: id, AccountID: "a", Environment: account.Live, Endpoint: "GET /x",
			Status: 200, Counted: true, Reason: usage.ReasonCounted, At: t0}}
	}
	if err := write(ctx, ev("before")); err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var killed int
	if err := admin.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`,
		store.LedgerApplicationName+" "+opts.Schema).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d ledger backends (%v), want 1", killed, err)
	}
	err = write(ctx, ev("during"))
	if apperr.KindOf(err) != apperr.Unavailable {
		t.Fatalf("write on a terminated connection: %v, want kind Unavailable", err)
	}
	if err := write(ctx, ev("after")); err != nil {
		t.Fatalf("write after reconnecting: %v", err)
	}
	got, err := s.Read().UsageEvents(ctx, t0.Add(-time.Hour), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.RequestID)
	}
	if fmt.Sprint(ids) != "[before after]" {
		t.Fatalf("ledger holds %v, want [before after]", ids)
	}
}

// Both durabilities commit a batch as one row with its counters; an empty
// batch writes nothing.
func TestUsageWriterDurabilities(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for i, d := range []store.LedgerDurability{store.LedgerCommitted, store.LedgerFlushed} {
			write := s.UsageWriter(d)
			if err := write(ctx, nil); err != nil {
				t.Fatalf("empty batch: %v", err)
			}
			id := fmt.Sprintf("d%d", i)
			batch := []usage.Event{
				{RequestID: id + "a", AccountID: id, Environment: account.Live, Endpoint: "GET /x", Status: 200, Counted: true, Reason: usage.ReasonCounted, At: t0},
				{RequestID: id + "b", AccountID: id, Environment: account.Live, Endpoint: "GET /x", Status: 200, Reason: usage.ReasonSession, At: t0},
			}
			if err := write(ctx, batch); err != nil {
				t.Fatalf("durability %d: %v", d, err)
			}
			rows, err := s.Read().UsageSummary(ctx, id, "2026-03-29", "2026-03-29")
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0].Counted != 1 || rows[0].Uncounted != 1 {
				t.Fatalf("durability %d: summary %+v, want one row 1 counted 1 uncounted", d, rows)
			}
		}
		events, err := s.Read().UsageEvents(ctx, t0.Add(-time.Hour), t0.Add(time.Hour))
		if err != nil || len(events) != 4 {
			t.Fatalf("ledger holds %d events (%v), want 4", len(events), err)
		}
	})
}

// The PostgreSQL ledger stages each batch's counters in usage_pending and
// RollupUsageCounts folds them into usage_daily: with batches written and
// roll-ups run concurrently (two instances' roll-ups at once), every report
// counts each request exactly once, before, during and after the roll-ups,
// and a final roll-up leaves nothing staged. On SQLite the ledger writes
// usage_daily itself and the roll-up changes nothing.
func TestUsageCountersRollup(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		write := s.UsageWriter(store.LedgerCommitted)
		const writers, batches = 4, 30
		day2 := t0.Add(24 * time.Hour)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var rollers sync.WaitGroup
		for r := 0; r < 2; r++ {
			rollers.Add(1)
			go func() {
				defer rollers.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := s.RollupUsageCounts(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < batches; i++ {
					id := fmt.Sprintf("w%d-%d", w, i)
					batch := []usage.Event{
						{RequestID: id + "a", AccountID: "a", Environment: account.Live, Endpoint: "GET /x", Status: 200, Counted: true, Reason: usage.ReasonCounted, At: t0},
						{RequestID: id + "b", AccountID: "a", Environment: account.Test, Endpoint: "GET /x", Status: 200, Reason: usage.ReasonSession, At: t0},
						{RequestID: id + "c", AccountID: "a", Environment: account.Live, Endpoint: "GET /y", Status: 429, Reason: usage.ReasonRateLimited, At: day2},
						{RequestID: id + "d", AccountID: "b", Environment: account.Live, Endpoint: "GET /x", Status: 200, Counted: true, Reason: usage.ReasonCounted, At: t0},
					}
					if err := write(ctx, batch); err != nil {
						t.Error(err)
						return
					}
				}
			}(w)
		}
		n := int64(writers * batches)
		want := []usage.Row{
			{AccountID: "a", Day: "2026-03-29", Endpoint: "GET /x", Counted: n, Uncounted: n},
			{AccountID: "a", Day: "2026-03-30", Endpoint: "GET /y", Uncounted: n, Refused: n},
			{AccountID: "b", Day: "2026-03-29", Endpoint: "GET /x", Counted: n},
		}
		check := func(when string) {
			t.Helper()
			rows, err := s.Read().UsageSummary(ctx, "", "2026-03-29", "2026-03-30")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, rows); d != "" {
				t.Errorf("%s: summary (-want +got):\n%s", when, d)
			}
			live, err := s.Read().UsageOfEnvironment(ctx, "a", account.Live, "2026-03-29", "2026-03-30")
			if err != nil {
				t.Fatal(err)
			}
			wantLive := []usage.Row{{Day: "2026-03-29", Endpoint: "GET /x", Counted: n}, {Day: "2026-03-30", Endpoint: "GET /y", Uncounted: n, Refused: n}}
			if d := cmp.Diff(wantLive, live); d != "" {
				t.Errorf("%s: live usage of a (-want +got):\n%s", when, d)
			}
		}
		// While the roll-ups run, a report sees each count once: the
		// writers are done, the roll-ups are still moving rows.
		wg.Wait()
		check("during the roll-ups")
		close(stop)
		rollers.Wait()
		check("after the concurrent roll-ups")
		if err := s.RollupUsageCounts(ctx); err != nil {
			t.Fatal(err)
		}
		check("after the last roll-up")
		var staged int
		if err := s.ReaderDB().QueryRow(`SELECT COUNT(*) FROM usage_pending`).Scan(&staged); err != nil || staged != 0 {
			t.Errorf("usage_pending holds %d rows after the last roll-up (%v), want 0", staged, err)
		}
		var daily int
		if err := s.ReaderDB().QueryRow(`SELECT COUNT(*) FROM usage_daily`).Scan(&daily); err != nil || daily != 4 {
			t.Errorf("usage_daily holds %d rows (%v), want 4 (a live and test on day 1, a on day 2, b)", daily, err)
		}
	})
}
