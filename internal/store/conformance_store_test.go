package store_test

import (
	"bytes"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceStore(t *testing.T) { storeConformance.run(t) }

// storeConformance: store.go and migrate.go (the Store's pools,
// transactions and migrations), lists.go (list cursors and plans) and
// gtfs.go (feeds with their chunked snapshots).
var storeConformance = conformanceCases{
	"Store.Engine": func(t *testing.T, s *store.Store) {
		// ForEachEngine names the subtest after the engine it opened.
		if e := s.Engine(); !strings.HasSuffix(t.Name(), "/"+string(e)) {
			t.Errorf("Engine = %s in %s", e, t.Name())
		}
	},
	"Store.DB": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var n int
		if err := s.DB().QueryRowContext(f.ctx, `SELECT COUNT(*) FROM accounts`).Scan(&n); err != nil || n != 2 {
			t.Errorf("the writer pool reads %d accounts, %v", n, err)
		}
		if _, err := s.DB().ExecContext(f.ctx, `UPDATE accounts SET name = 'x' WHERE id = 'acct-x'`); err != nil {
			t.Errorf("the writer pool refuses a write: %v", err)
		}
	},
	"Store.ReaderDB": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var n int
		if err := s.ReaderDB().QueryRowContext(f.ctx, `SELECT COUNT(*) FROM accounts`).Scan(&n); err != nil || n != 2 {
			t.Errorf("the reader pool reads %d accounts, %v", n, err)
		}
		_, err := s.ReaderDB().ExecContext(f.ctx, `UPDATE accounts SET name = 'x' WHERE id = 'acct-x'`)
		if readOnly := err != nil; readOnly != (s.Engine() == store.SQLite) { // PostgreSQL's is the writer's pool
			t.Errorf("a write on the reader pool: %v", err)
		}
	},
	"Store.Ping": func(t *testing.T, s *store.Store) {
		if err := s.Ping(t.Context()); err != nil {
			t.Errorf("Ping of an open store: %v", err)
		}
		other := storetest.Open(t, s.Engine()) // a store of its own, closed here (and again, harmlessly, when the test ends)
		other.Close()
		wantCode(t, "Ping of a closed store", other.Ping(t.Context()), apperr.Unavailable, store.CodeDatabaseUnavailable)
	},
	"Store.Close": func(t *testing.T, s *store.Store) {
		other := storetest.Open(t, s.Engine()) // a store of its own, closed here (and again, harmlessly, when the test ends)
		if err := other.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		if err := other.Write(t.Context(), func(store.Q) error { return nil }); err == nil {
			t.Error("a closed store wrote")
		}
		if _, err := other.Read().Accounts(t.Context()); err == nil {
			t.Error("a closed store read")
		}
		if _, err := s.Read().Accounts(t.Context()); err != nil { // the database stays
			t.Errorf("another store of the database: %v", err)
		}
	},
	"Store.Read": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		// A read sees what committed, not what a running write has written.
		f.write(func(q store.Q) error {
			if err := q.CreateAccount(f.ctx, account.Account{ID: "acct-3", CreatedAt: fxAt}); err != nil {
				return err
			}
			if as, err := s.Read().Accounts(f.ctx); err != nil || len(as) != 2 {
				t.Errorf("a read during a write sees %d accounts (%v), want the 2 committed", len(as), err)
			}
			return nil
		})
		if as, err := s.Read().Accounts(f.ctx); err != nil || len(as) != 3 {
			t.Errorf("a read after the commit sees %d accounts (%v), want 3", len(as), err)
		}
	},
	"Store.Write": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		boom := errors.New("boom")
		err := s.Write(f.ctx, func(q store.Q) error {
			if err := q.CreateAccount(f.ctx, account.Account{ID: "acct-3", CreatedAt: fxAt}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("Write = %v, want fn's error", err)
		}
		if _, err := f.read().Account(f.ctx, "acct-3"); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("a failed write committed: %v", err)
		}
		// An apperr of fn passes through; a unique violation is Conflict.
		err = s.Write(f.ctx, func(q store.Q) error { return apperr.NotFoundf("test", "thing_not_found") })
		wantCode(t, "fn's apperr", err, apperr.NotFound, "thing_not_found")
		err = s.Write(f.ctx, func(q store.Q) error { return q.CreateAccount(f.ctx, account.Account{ID: fxAccount, CreatedAt: fxAt}) })
		wantCode(t, "a duplicate", err, apperr.Conflict, store.CodeConflict)
		f.write(func(q store.Q) error { return q.CreateAccount(f.ctx, account.Account{ID: "acct-3", CreatedAt: fxAt}) })
		if _, err := f.read().Account(f.ctx, "acct-3"); err != nil {
			t.Errorf("a committed write is not there: %v", err)
		}
	},
	"AfterCommit": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var ran []string
		f.write(func(q store.Q) error {
			q.AfterCommit(func() { ran = append(ran, "committed") })
			if len(ran) != 0 {
				t.Error("AfterCommit ran before the commit")
			}
			return nil
		})
		_ = s.Write(f.ctx, func(q store.Q) error {
			q.AfterCommit(func() { ran = append(ran, "rolled back") })
			return errors.New("boom")
		})
		s.Read().AfterCommit(func() { ran = append(ran, "outside") }) // at once
		if !cmp.Equal(ran, []string{"committed", "outside"}) {
			t.Errorf("AfterCommit ran %v", ran)
		}
	},
	"Store.Migrate": func(t *testing.T, s *store.Store) {
		count, _ := migrationSet(t, s.Engine())
		fresh, err := store.Open(t.Context(), storetest.Options(t, s.Engine()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fresh.Close() })
		for i, want := range []int{count, 0} { // every migration, then none is pending
			if n, err := fresh.Migrate(t.Context()); err != nil || n != want {
				t.Errorf("Migrate #%d of an empty database = %d, %v; want %d", i+1, n, err, want)
			}
		}
		if n, err := s.Migrate(t.Context()); err != nil || n != 0 { // the test store is migrated
			t.Errorf("Migrate of a migrated store = %d, %v", n, err)
		}
	},
	"Store.SchemaVersion": func(t *testing.T, s *store.Store) {
		_, newest := migrationSet(t, s.Engine())
		if v, err := s.SchemaVersion(t.Context()); err != nil || v != newest {
			t.Errorf("SchemaVersion = %d, %v; want the newest migration's, %d", v, err, newest)
		}
	},
	"ListCursor": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		o := f.order(fxAccount, account.Live, "order-1", fxAt, 0)
		b := f.item(fxAccount, account.Live, "item-1", fxAt.Add(time.Hour), nil)
		for _, c := range []struct {
			table, id string
			want      list.Cursor
		}{{"orders", o.ID, list.Cursor{CreatedAt: o.CreatedAt, ID: o.ID}}, {"billable_items", b.ID, list.Cursor{CreatedAt: b.OrderedAt, ID: b.ID}}} {
			if got, ok, err := f.read().ListCursor(f.ctx, c.table, fxAccount, account.Live, c.id); err != nil || !ok || !cmp.Equal(got, c.want) {
				t.Errorf("ListCursor(%s, %s) = %+v, %v, %v; want %+v (its list's time)", c.table, c.id, got, ok, err, c.want)
			}
		}
		for _, c := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Live, o.ID}, {fxAccount, account.Test, o.ID}, {fxAccount, account.Live, "order-x"}} {
			if _, ok, err := f.read().ListCursor(f.ctx, "orders", c.acct, c.env, c.id); ok || err != nil {
				t.Errorf("ListCursor(%s, %s, %s) = %v, %v; want none", c.acct, c.env, c.id, ok, err)
			}
		}
		if _, _, err := f.read().ListCursor(f.ctx, "accounts", fxAccount, account.Live, fxAccount); err == nil {
			t.Error("ListCursor of a table that is no list answered")
		}
	},
	"ExplainList": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		lq := list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}
		for _, filter := range []any{ticketing.OrderFilter{Query: lq}, ticketing.SubscriptionFilter{Query: lq}, ticketing.CouponFilter{Query: lq},
			ticketing.TicketFilter{Query: lq}, invoicing.CustomerFilter{Query: lq}, invoicing.InvoiceFilter{Query: lq},
			invoicing.AuditFilter{Query: lq}, invoicing.BillableItemFilter{Query: lq}, invoicing.CollectionFilter{Query: lq},
			ticketing.TestClockFilter{Query: lq}} {
			if plan, err := f.read().ExplainList(f.ctx, filter); err != nil || len(plan) == 0 {
				t.Errorf("ExplainList(%T) = %v, %v; want the engine's plan", filter, plan, err)
			}
		}
		if _, err := f.read().ExplainList(f.ctx, list.Query{}); err == nil {
			t.Error("ExplainList of a filter no list has answered")
		}
	},
	"ReplaceGTFSFeed": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		first := storeFeed(f, "feed-a", []byte("snapshot one"))
		var second gtfs.FeedRecord
		f.write(func(q store.Q) (err error) {
			second, err = q.ReplaceGTFSFeed(f.ctx, gtfs.FeedRecord{ID: "feed-a", UpdatedAt: fxAt.Add(time.Hour)}, []byte("snapshot two, longer"))
			return err
		})
		if first.Version != 1 || second.Version != 2 || second.SnapshotBytes != 20 || second.Chunks != 1 || len(second.SnapshotSHA) != 64 {
			t.Errorf("ReplaceGTFSFeed = %+v then %+v; want versions 1, 2 and the second snapshot's size, chunks and hash", first, second)
		}
		feeds, err := f.read().GTFSFeeds(f.ctx)
		if err != nil || !cmp.Equal(feeds, []gtfs.FeedRecord{second}) {
			t.Errorf("GTFSFeeds after the replace = %+v, %v; want %+v", feeds, err, second)
		}
		if snap, err := f.read().GTFSSnapshot(f.ctx, "feed-a", 2); err != nil || string(snap) != "snapshot two, longer" {
			t.Errorf("the replaced snapshot = %q, %v", snap, err)
		}
	},
	"GTFSFeeds": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if feeds, err := f.read().GTFSFeeds(f.ctx); err != nil || feeds == nil || len(feeds) != 0 {
			t.Errorf("GTFSFeeds of none = %#v, %v; want an empty list", feeds, err)
		}
		b, a := storeFeed(f, "feed-b", []byte("b")), storeFeed(f, "feed-a", []byte("a"))
		if feeds, err := f.read().GTFSFeeds(f.ctx); err != nil || !cmp.Equal(feeds, []gtfs.FeedRecord{a, b}) {
			t.Errorf("GTFSFeeds = %+v, %v; want by id", feeds, err)
		}
	},
	"GTFSSnapshot": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		big := bytes.Repeat([]byte("0123456789abcdef"), store.GTFSChunkBytes/16+1) // two chunks
		feed := storeFeed(f, "feed-a", big)
		if snap, err := f.read().GTFSSnapshot(f.ctx, "feed-a", feed.Version); err != nil || !bytes.Equal(snap, big) || feed.Chunks != 2 {
			t.Errorf("GTFSSnapshot of %d chunks: %d bytes, %v", feed.Chunks, len(snap), err)
		}
		for what, c := range map[string]struct {
			id      string
			version int64
		}{"an older version": {"feed-a", feed.Version - 1}, "an unknown feed": {"feed-x", 1}} {
			_, err := f.read().GTFSSnapshot(f.ctx, c.id, c.version)
			wantCode(t, what, err, apperr.Conflict, store.CodeFeedChanged)
		}
		if _, err := s.DB().ExecContext(f.ctx, `UPDATE gtfs_feed_chunks SET data = $1 WHERE feed_id = 'feed-a' AND seq = 1`, []byte("corrupt")); err != nil {
			t.Fatal(err)
		}
		_, err := f.read().GTFSSnapshot(f.ctx, "feed-a", feed.Version)
		wantCode(t, "a corrupt snapshot", err, apperr.Internal, store.CodeFeedCorrupt)
	},
	"RemoveGTFSFeed": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		storeFeed(f, "feed-a", []byte("a"))
		b := storeFeed(f, "feed-b", []byte("b"))
		for i, want := range []bool{true, false} {
			var removed bool
			f.write(func(q store.Q) (err error) { removed, err = q.RemoveGTFSFeed(f.ctx, "feed-a"); return err })
			if removed != want {
				t.Errorf("RemoveGTFSFeed #%d = %v, want %v", i+1, removed, want)
			}
		}
		if feeds, err := f.read().GTFSFeeds(f.ctx); err != nil || !cmp.Equal(feeds, []gtfs.FeedRecord{b}) {
			t.Errorf("feeds after RemoveGTFSFeed = %+v, %v", feeds, err)
		}
	},
}

// migrationSet counts the migration files of engine and returns the
// newest one's version.
func migrationSet(t *testing.T, e store.Engine) (count int, newest int64) {
	t.Helper()
	files, err := store.Migrations(e)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := fs.Glob(files, "*.sql")
	for _, name := range names {
		v, err := strconv.ParseInt(strings.SplitN(name, "_", 2)[0], 10, 64)
		if err != nil {
			t.Fatalf("migration %s: %v", name, err)
		}
		newest = max(newest, v)
	}
	if len(names) == 0 {
		t.Fatal("no migration files")
	}
	return len(names), newest
}

// storeFeed stores feed id with snapshot and returns its record.
func storeFeed(f *fixture, id string, snapshot []byte) gtfs.FeedRecord {
	f.t.Helper()
	var rec gtfs.FeedRecord
	f.write(func(q store.Q) (err error) {
		rec, err = q.ReplaceGTFSFeed(f.ctx, gtfs.FeedRecord{ID: id, UpdatedAt: fxAt, SourceName: id + ".zip", FeedVersion: "v1", Stops: 3,
			Trips: 2, StopTimes: 6, RealtimeSource: "https://example.com/rt", RealtimeInterval: 30 * time.Second}, snapshot)
		return err
	})
	return rec
}
