package store_test

import (
	"context"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/webhook"
)

// TestInsertEventsEndpointCheck: the event insert says whether the
// account and environment has an enabled webhook endpoint, reading the
// table each time, so an endpoint another instance on the same database
// creates, disables or enables is seen by the next change; and the events
// of a change are stored in order whatever the answer (on SQLite the first
// event's insert is conditional on there being none). Instance A prepares
// SQLite's hot statements (as farebox serve does), B does not.
func TestInsertEventsEndpointCheck(t *testing.T) {
	storetest.ForEachEngineOptions(t, func(t *testing.T, engine store.Engine) {
		ctx := context.Background()
		var opts store.Options
		a := storetest.OpenWith(t, engine, func(o *store.Options) { opts = *o })
		a.NewLedger(store.LedgerCommitted, nil)
		b, err := store.Open(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })

		at := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
		n := 0
		write := func(s *store.Store, env account.Environment, count int) (bool, []string) {
			t.Helper()
			var evs []event.Event
			var ids []string
			for range count {
				n++
				id := fmt.Sprintf("event-%d", n)
				ids = append(ids, id)
				evs = append(evs, event.Event{ID: id, AccountID: "acc-1", Environment: env, Type: event.OrderCreated,
					ObjectID: fmt.Sprintf("order-%d", n), APIVersion: event.APIVersion, CreatedAt: at,
					Object: []byte(fmt.Sprintf(`{"order_id":"order-%d"}`, n))})
			}
			var hooks bool
			if err := s.Write(ctx, func(q store.Q) error {
				var err error
				hooks, err = q.InsertEvents(ctx, evs)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return hooks, ids
		}
		var all []string
		check := func(s *store.Store, env account.Environment, count int, want bool) {
			t.Helper()
			hooks, ids := write(s, env, count)
			if hooks != want {
				t.Fatalf("%d events in %s: endpoint check %v, want %v", count, env, hooks, want)
			}
			if env == account.Live {
				all = append(all, ids...)
			}
		}

		check(a, account.Live, 1, false)
		check(a, account.Live, 3, false)
		check(b, account.Live, 2, false)

		ep := webhook.Endpoint{ID: "endpoint-1", AccountID: "acc-1", Environment: account.Live, URL: "https://example.com/hook",
			EventTypes: []string{webhook.Wildcard}, Secret: "whsec_x", CreatedAt: at, UpdatedAt: at}
		if err := b.Write(ctx, func(q store.Q) error { return q.InsertEndpoint(ctx, ep) }); err != nil {
			t.Fatal(err)
		}
		check(a, account.Live, 1, true)
		check(a, account.Live, 3, true)
		check(b, account.Live, 2, true)
		check(a, account.Test, 2, false) // another environment's endpoint does not count

		ep.DisabledAt = &at
		if err := b.Write(ctx, func(q store.Q) error { return q.UpdateEndpoint(ctx, ep) }); err != nil {
			t.Fatal(err)
		}
		check(a, account.Live, 2, false)
		ep.DisabledAt = nil
		if err := b.Write(ctx, func(q store.Q) error { return q.UpdateEndpoint(ctx, ep) }); err != nil {
			t.Fatal(err)
		}
		check(a, account.Live, 1, true)

		// Every event once, numbered in the order written.
		page, err := a.Read().Events(ctx, event.Query{AccountID: "acc-1", Environment: account.Live, Limit: 100}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Events) != len(all) {
			t.Fatalf("%d events stored, want %d", len(page.Events), len(all))
		}
		for i, e := range page.Events { // newest first
			if want := all[len(all)-1-i]; e.ID != want {
				t.Fatalf("event %d of the list is %s, want %s", i, e.ID, want)
			}
			if i > 0 && e.Seq >= page.Events[i-1].Seq {
				t.Fatalf("sequence numbers not increasing with the order written: %d after %d", page.Events[i-1].Seq, e.Seq)
			}
		}
	})
}

// TestInsertOrderRowsRefusesForeignEvents: the events written with an
// order's rows belong to the order's account and environment (the endpoint
// check and the numbering are the order's); an event of another
// environment is refused before anything is written.
func TestInsertOrderRowsRefusesForeignEvents(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
		o := ticketing.Order{ID: "order-1", AccountID: "acc-1", Environment: account.Live, RestoreSecret: "secret", CreatedAt: at}
		ev := event.Event{ID: "event-1", AccountID: "acc-1", Environment: account.Test, Type: event.OrderCreated, ObjectID: o.ID,
			APIVersion: event.APIVersion, CreatedAt: at, Object: []byte(`{}`)}
		err := s.Write(ctx, func(q store.Q) error {
			_, err := q.InsertOrderRows(ctx, o, nil, nil, []event.Event{ev})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "account and environment") {
			t.Fatalf("an event of another environment written with an order: %v", err)
		}
		for _, table := range []string{"orders", "events"} {
			if n, err := s.Read().CountRows(ctx, table); err != nil || n != 0 {
				t.Fatalf("%s: %d rows (%v), want none", table, n, err)
			}
		}
	})
}

// TestEventObjectsLZ4: on PostgreSQL built with lz4 (this project's test
// servers are) the events' objects are compressed with it, as migration
// 00030 says, and an order.created-sized object is stored compressed.
func TestEventObjectsLZ4(t *testing.T) {
	s := storetest.Open(t, store.Postgres)
	ctx := context.Background()
	var method string
	if err := s.DB().QueryRowContext(ctx, `SELECT attcompression::text FROM pg_attribute
		WHERE attrelid = 'events'::regclass AND attname = 'object'`).Scan(&method); err != nil {
		t.Fatal(err)
	}
	if method != "l" {
		t.Fatalf("events.object compression %q, want lz4 (l)", method)
	}
	at := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	obj := `{"order_id":"order-1","coupons":[` + strings.Repeat(`{"id":"coupon","activated":false,"tariff_settings":null},`, 40) + `{}]}`
	ev := event.Event{ID: "event-lz4", AccountID: "acc-1", Environment: account.Live, Type: event.OrderCreated, ObjectID: "order-1",
		APIVersion: event.APIVersion, CreatedAt: at, Object: []byte(obj)}
	if err := s.Write(ctx, func(q store.Q) error { _, err := q.InsertEvents(ctx, []event.Event{ev}); return err }); err != nil {
		t.Fatal(err)
	}
	var stored, length int
	var used string
	if err := s.DB().QueryRowContext(ctx, `SELECT pg_column_size(object), length(object), COALESCE(pg_column_compression(object), '')
		FROM events WHERE id = 'event-lz4'`).Scan(&stored, &length, &used); err != nil {
		t.Fatal(err)
	}
	if used != "lz4" || stored >= length {
		t.Fatalf("object of %d characters stored in %d bytes with %q, want lz4 and smaller", length, stored, used)
	}
}

// aloneFixture is the account acc-1 on a store, orders with their
// order.created event (of acc-1 or another account id) and webhook
// endpoints, for the InsertOrderAlone tests.
type aloneFixture struct {
	t   *testing.T
	s   *store.Store
	ctx context.Context
	at  time.Time
	n   int
}

func newAloneFixture(t *testing.T, s *store.Store) *aloneFixture {
	f := &aloneFixture{t: t, s: s, ctx: context.Background(), at: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	f.write(func(q store.Q) error {
		return q.CreateAccount(f.ctx, account.Account{ID: "acc-1", Name: "a", CreatedAt: f.at})
	})
	return f
}

func (f *aloneFixture) write(fn func(q store.Q) error) {
	f.t.Helper()
	if err := f.s.Write(f.ctx, fn); err != nil {
		f.t.Fatal(err)
	}
}

// order is a new order of acc in the live environment with its event.
func (f *aloneFixture) order(acc string) (ticketing.Order, []event.Event) {
	f.n++
	o := ticketing.Order{ID: fmt.Sprintf("order-%d", f.n), AccountID: acc, Environment: account.Live, RestoreSecret: "secret", CreatedAt: f.at}
	return o, []event.Event{{ID: fmt.Sprintf("event-%d", f.n), AccountID: acc, Environment: account.Live, Type: event.OrderCreated,
		ObjectID: o.ID, APIVersion: event.APIVersion, CreatedAt: f.at, Object: []byte(`{"order_id":"` + o.ID + `"}`)}}
}

// endpoint adds an enabled webhook endpoint of acc-1 in env.
func (f *aloneFixture) endpoint(id string, env account.Environment) webhook.Endpoint {
	f.t.Helper()
	ep := webhook.Endpoint{ID: id, AccountID: "acc-1", Environment: env, URL: "https://example.com/" + id,
		EventTypes: []string{webhook.Wildcard}, Secret: "whsec_" + id, CreatedAt: f.at, UpdatedAt: f.at}
	f.write(func(q store.Q) error { return q.InsertEndpoint(f.ctx, ep) })
	return ep
}

// TestInsertOrderAlone: on PostgreSQL an order's rows and events are one
// autocommitted statement while the account and environment has no
// enabled webhook endpoint; with one the statement writes nothing (no row,
// no event number) and says so, for the caller's transaction with the
// deliveries; a disabled endpoint or one of the other environment does
// not count; a row the database refuses leaves nothing behind; concurrent
// orders all land with distinct event numbers. SQLite always answers
// "not written" (its orders go through a transaction, which costs no round
// trip in the process).
func TestInsertOrderAlone(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newAloneFixture(t, s)
		ctx := f.ctx
		counts := func() (orders, events int) {
			t.Helper()
			orders, err := s.Read().CountRows(ctx, "orders")
			if err != nil {
				t.Fatal(err)
			}
			events, err = s.Read().CountRows(ctx, "events")
			if err != nil {
				t.Fatal(err)
			}
			return orders, events
		}
		alone := func(acc string, want bool) {
			t.Helper()
			o, evs := f.order(acc)
			o0, e0 := counts()
			written, err := s.InsertOrderAlone(ctx, idempotency.Claim{}, o, nil, nil, evs)
			if err != nil {
				t.Fatal(err)
			}
			if s.Engine() == store.SQLite {
				want = false
			}
			o1, e1 := counts()
			if written != want || (written && (o1 != o0+1 || e1 != e0+1)) || (!written && (o1 != o0 || e1 != e0)) {
				t.Fatalf("%s: written %v (want %v), orders %d → %d, events %d → %d", o.ID, written, want, o0, o1, e0, e1)
			}
		}
		alone("acc-1", true)
		ep := f.endpoint("endpoint-1", account.Live)
		alone("acc-1", false)
		ep.DisabledAt = &f.at
		f.write(func(q store.Q) error { return q.UpdateEndpoint(ctx, ep) })
		alone("acc-1", true)
		f.endpoint("endpoint-2", account.Test)
		alone("acc-1", true)

		// An account that does not exist: the foreign key refuses the order
		// at the statement's end, after the event was inserted: nothing stays.
		if s.Engine() == store.Postgres {
			o, evs := f.order("acc-unknown")
			o0, e0 := counts()
			if _, err := s.InsertOrderAlone(ctx, idempotency.Claim{}, o, nil, nil, evs); err == nil {
				t.Fatal("an order of an unknown account was written")
			}
			if o1, e1 := counts(); o1 != o0 || e1 != e0 {
				t.Fatalf("a refused statement left rows: orders %d → %d, events %d → %d", o0, o1, e0, e1)
			}
		}

		// Concurrent orders: all written, numbered apart.
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := 0; i < 20; i++ {
			o, evs := f.order("acc-1")
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.InsertOrderAlone(ctx, idempotency.Claim{}, o, nil, nil, evs); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if s.Engine() == store.Postgres {
			page, err := s.Read().Events(ctx, event.Query{AccountID: "acc-1", Environment: account.Live, Limit: 100}, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			seqs := map[int64]bool{}
			for _, e := range page.Events {
				seqs[e.Seq] = true
			}
			if len(page.Events) != 23 || len(seqs) != 23 {
				t.Fatalf("%d events with %d distinct numbers, want 23", len(page.Events), len(seqs))
			}
		}
	})
}

// TestInsertOrderAloneMarksIdempotencyClaim: under an Idempotency-Key
// claim (its parameter) the autocommitted order marks the claim committed
// in its own statement, as WriteClaimed does (markClaim), so a take-over after the
// lease (the first instance died after the commit, before storing its
// answer) finds it committed and does not run the order again; a statement
// that wrote nothing (an enabled webhook endpoint) leaves the claim free,
// and so does an order written without the claim, whatever its context
// carries: only the parameter marks.
// A regression test: TestKillDuringLoad found duplicate orders when the
// mark was missing.
func TestInsertOrderAloneMarksIdempotencyClaim(t *testing.T) {
	f := newAloneFixture(t, storetest.Open(t, store.Postgres))
	claim := func(key string, at time.Time) (claimed, committed bool) {
		t.Helper()
		f.write(func(q store.Q) error {
			ok, rec, err := q.ClaimIdempotencyKey(f.ctx, "account:acc-1:live", key, "hash", at, time.Minute)
			claimed, committed = ok, rec.Committed
			return err
		})
		return claimed, committed
	}
	alone := func(key string, want bool) {
		t.Helper()
		if ok, _ := claim(key, f.at); !ok {
			t.Fatalf("%s: not claimed", key)
		}
		o, evs := f.order("acc-1")
		c := idempotency.Claim{Scope: "account:acc-1:live", Key: key}
		written, err := f.s.InsertOrderAlone(f.ctx, c, o, nil, nil, evs)
		if err != nil || written != want {
			t.Fatalf("%s: written %v (%v), want %v", key, written, err, want)
		}
	}
	// Written without the claim: the claim stays free.
	if ok, _ := claim("k0", f.at); !ok {
		t.Fatal("k0: not claimed")
	}
	o, evs := f.order("acc-1")
	if written, err := f.s.InsertOrderAlone(f.ctx, idempotency.Claim{}, o, nil, nil, evs); err != nil || !written {
		t.Fatalf("k0: written %v (%v)", written, err)
	}
	if claimed, committed := claim("k0", f.at.Add(2*time.Minute)); !claimed || committed {
		t.Fatalf("k0 after the lease: claimed %v, committed %v; an order written without the claim marked it", claimed, committed)
	}
	alone("k1", true)
	// The lease ran out without a stored answer: a retry must not run again.
	if claimed, committed := claim("k1", f.at.Add(2*time.Minute)); claimed || !committed {
		t.Fatalf("k1 after the lease: claimed %v, committed %v; want the committed claim kept", claimed, committed)
	}
	f.endpoint("endpoint-1", account.Live)
	alone("k2", false)
	if claimed, committed := claim("k2", f.at.Add(2*time.Minute)); !claimed || committed {
		t.Fatalf("k2 after the lease: claimed %v, committed %v; nothing was written, so a retry runs it", claimed, committed)
	}
}
