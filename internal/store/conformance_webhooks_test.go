package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/webhook"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceWebhooks(t *testing.T) { webhooksConformance.run(t) }

// webhooksConformance: webhooks.go (endpoints, deliveries in per-object
// chains, attempts and the delivery log).
var webhooksConformance = conformanceCases{
	"InsertEndpoint": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		exp, failing := fxAt.Add(time.Hour), fxAt.Add(-time.Hour)
		e := webhook.Endpoint{ID: "we-1", AccountID: fxAccount, Environment: account.Live, URL: "https://example.com/hook", Description: "Ä",
			EventTypes: []string{"order.created", "ticket.issued"}, Secret: "whsec_new", OldSecret: "whsec_old", OldSecretExpires: &exp,
			FailingSince: &failing, CreatedAt: fxAt, UpdatedAt: fxAt.Add(time.Minute)}
		checkInsert(t, f, e, func(q store.Q) error { return q.InsertEndpoint(f.ctx, e) },
			func(q store.Q) (webhook.Endpoint, error) {
				return q.Endpoint(f.ctx, fxAccount, account.Live, e.ID, false)
			})
	},
	"UpdateEndpoint": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		e, other := hookEndpoint(f, "we-1", account.Live), hookEndpoint(f, "we-2", account.Live)
		disabled := fxAt.Add(time.Hour)
		e.URL, e.Description, e.EventTypes, e.Secret, e.OldSecret = "https://example.org/new", "new", []string{"order.created"}, "s2", "s1"
		e.OldSecretExpires, e.DisabledAt, e.DisabledReason, e.UpdatedAt = &disabled, &disabled, "manual", disabled
		e.CreatedAt, e.AccountID = fxAt.Add(time.Hour), fxOther // not updatable
		f.write(func(q store.Q) error { return q.UpdateEndpoint(f.ctx, e) })
		e.CreatedAt, e.AccountID = fxAt, fxAccount
		if got, err := f.read().Endpoint(f.ctx, fxAccount, account.Live, e.ID, false); err != nil || !cmp.Equal(got, e) {
			t.Errorf("Endpoint after UpdateEndpoint (%v): %s", err, cmp.Diff(e, got))
		}
		if got, err := f.read().Endpoint(f.ctx, fxAccount, account.Live, other.ID, false); err != nil || !cmp.Equal(got, other) {
			t.Errorf("another endpoint changed: %+v, %v", got, err)
		}
	},
	"Endpoint": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		e := hookEndpoint(f, "we-1", account.Test)
		f.write(func(q store.Q) error {
			got, err := q.Endpoint(f.ctx, fxAccount, account.Test, e.ID, true) // locked, in a transaction
			if err != nil || !cmp.Equal(got, e) {
				t.Errorf("Endpoint(lock) = %+v, %v; want %+v", got, err, e)
			}
			return nil
		})
		wantOwnOnly(t, account.Test, e.ID, store.CodeWebhookEndpointNotFound, func(acct string, env account.Environment, id string) error {
			_, err := f.read().Endpoint(f.ctx, acct, env, id, false)
			return err
		})
	},
	"Endpoints": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		hookEndpointAt(f, "we-b", account.Live, fxAt.Add(time.Minute))
		hookEndpointAt(f, "we-a", account.Live, fxAt.Add(time.Minute))
		hookEndpointAt(f, "we-first", account.Live, fxAt)
		hookEndpoint(f, "we-test", account.Test)
		f.write(func(q store.Q) error { return q.DisableEndpoint(f.ctx, "we-a", fxAt, "off") })
		for _, c := range []struct {
			enabled bool
			want    []string
		}{{false, []string{"we-first", "we-a", "we-b"}}, {true, []string{"we-first", "we-b"}}} {
			got, err := f.read().Endpoints(f.ctx, fxAccount, account.Live, c.enabled)
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			if err != nil || !cmp.Equal(ids, c.want) {
				t.Errorf("Endpoints(enabled %v) = %v, %v; want %v, oldest first", c.enabled, ids, err, c.want)
			}
		}
	},
	"DeleteEndpoint": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		hookEndpoint(f, "we-1", account.Live)
		hookEndpoint(f, "we-2", account.Live)
		ev := writeEvents(f, fxAccount, account.Live, 1, fxAt)[0]
		addDeliveries(f, delivery("d-1", "we-1", ev, false), delivery("d-2", "we-2", ev, false))
		recordAttempt(f, "d-1", "we-1", ev, 1, webhook.StateFailed)
		f.write(func(q store.Q) error { return q.DeleteEndpoint(f.ctx, "we-1") })
		_, err := f.read().Endpoint(f.ctx, fxAccount, account.Live, "we-1", false)
		wantCode(t, "the deleted endpoint", err, apperr.NotFound, store.CodeWebhookEndpointNotFound)
		for table, want := range map[string]int{"webhook_endpoints": 1, "webhook_deliveries": 1, "webhook_attempts": 0} {
			if n, err := f.read().CountRows(f.ctx, table); err != nil || n != want {
				t.Errorf("%s after DeleteEndpoint: %d, %v; want %d (the other endpoint's)", table, n, err, want)
			}
		}
	},
	"AddDeliveries": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		hookEndpoint(f, "we-1", account.Live)
		evs := writeEvents(f, fxAccount, account.Live, 3, fxAt)
		evs[2].ObjectID = evs[0].ObjectID // the third is about the first's object
		var pending []bool
		f.write(func(q store.Q) (err error) {
			pending, err = q.AddDeliveries(f.ctx, []webhook.Delivery{delivery("d-1", "we-1", evs[0], false), delivery("d-2", "we-1", evs[1], false),
				delivery("d-3", "we-1", evs[2], false), delivery("d-4", "we-1", evs[0], true)})
			return err
		})
		// One pending delivery per object at a time; a manual redelivery is outside the chains.
		if !cmp.Equal(pending, []bool{true, true, false, true}) {
			t.Errorf("AddDeliveries pending = %v", pending)
		}
		evs[1].ObjectID = evs[0].ObjectID
		f.write(func(q store.Q) (err error) {
			pending, err = q.AddDeliveries(f.ctx, []webhook.Delivery{delivery("d-5", "we-1", evs[1], false)}) // behind d-3, stored
			return err
		})
		if !cmp.Equal(pending, []bool{false}) {
			t.Errorf("AddDeliveries behind a stored chain: pending %v", pending)
		}
		work, err := f.read().DeliveriesWork(f.ctx, []string{"d-1", "d-2", "d-3", "d-4", "d-5"})
		states := map[string]string{}
		for id, w := range work {
			states[id] = w.Delivery.State
		}
		want := map[string]string{"d-1": "pending", "d-2": "pending", "d-3": "waiting", "d-4": "pending", "d-5": "waiting"}
		if err != nil || !cmp.Equal(states, want) {
			t.Errorf("delivery states = %v, %v; want %v", states, err, want)
		}
		// The chain's links: d-1 → d-3 → d-5 (has_next as each attempt reports it).
		for id, wantNext := range map[string]bool{"d-1": true, "d-2": false} {
			_, next := recordAttempt(f, id, "we-1", evs[0], 1, webhook.StateSucceeded)
			if next != wantNext {
				t.Errorf("%s has_next %v, want %v", id, next, wantNext)
			}
		}
	},
	"RecordAttempts": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		hookEndpoint(f, "we-1", account.Live)
		ev := writeEvents(f, fxAccount, account.Live, 1, fxAt)[0]
		addDeliveries(f, delivery("d-1", "we-1", ev, false))
		if applied, _ := recordAttempt(f, "d-1", "we-1", ev, 1, webhook.StatePending); !applied { // failed, tried again later
			t.Error("first attempt not applied")
		}
		if applied, _ := recordAttempt(f, "d-1", "we-1", ev, 1, webhook.StateSucceeded); applied { // a duplicate of attempt 1
			t.Error("a second record of attempt 1 applied")
		}
		if applied, _ := recordAttempt(f, "d-1", "we-1", ev, 2, webhook.StateSucceeded); !applied {
			t.Error("second attempt not applied")
		}
		if applied, _ := recordAttempt(f, "d-1", "we-1", ev, 3, webhook.StateFailed); applied { // finished: nothing more
			t.Error("an attempt after the delivery finished applied")
		}
		work, err := f.read().DeliveriesWork(f.ctx, []string{"d-1"})
		if d := work["d-1"].Delivery; err != nil || d.State != webhook.StateSucceeded || d.Attempts != 2 {
			t.Errorf("delivery after its attempts = %+v, %v; want succeeded after 2", d, err)
		}
		log, err := f.read().Attempts(f.ctx, "we-1", 0, 10)
		if err != nil || len(log) != 2 || log[0].Attempt != 2 || log[1].Attempt != 1 {
			t.Errorf("delivery log = %+v, %v; want the two applied attempts, newest first", log, err)
		}
		f.write(func(q store.Q) error {
			applied, next, err := q.RecordAttempts(f.ctx, nil)
			if applied != nil || next != nil || err != nil {
				t.Errorf("RecordAttempts(none) = %v, %v, %v", applied, next, err)
			}
			return nil
		})
	},
	"DeliveriesWork": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		e := hookEndpoint(f, "we-1", account.Live)
		evs := writeEvents(f, fxAccount, account.Live, 2, fxAt)
		d1, d2 := delivery("d-1", "we-1", evs[0], false), delivery("d-2", "we-1", evs[1], false)
		d2.EventID = "ev-pruned"
		addDeliveries(f, d1, d2)
		recordAttempt(f, "d-1", "we-1", evs[0], 1, webhook.StatePending)
		work, err := f.read().DeliveriesWork(f.ctx, []string{"d-1", "d-2", "d-x"})
		if err != nil {
			t.Fatal(err)
		}
		ev := evs[0]
		ev.Seq, _, _ = f.read().EventSeq(f.ctx, fxAccount, account.Live, ev.ID)
		d1.State, d1.Attempts, d1.CreatedAt = webhook.StatePending, 1, fxAt.Add(time.Hour) // the retry window runs from the first attempt
		d2.State = webhook.StatePending
		want := map[string]webhook.Work{"d-1": {Delivery: d1, Endpoint: e, Event: ev, EventFound: true}, "d-2": {Delivery: d2, Endpoint: e}}
		if d := cmp.Diff(want, work); d != "" {
			t.Errorf("DeliveriesWork (-want +got):\n%s", d)
		}
		if work, err := f.read().DeliveriesWork(f.ctx, nil); err != nil || len(work) != 0 {
			t.Errorf("DeliveriesWork(none) = %v, %v", work, err)
		}
	},
	"NextInChain": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		hookEndpoint(f, "we-1", account.Live)
		evs := writeEvents(f, fxAccount, account.Live, 3, fxAt)
		for i := range evs {
			evs[i].ObjectID = "obj"
		}
		addDeliveries(f, delivery("d-1", "we-1", evs[0], false), delivery("d-2", "we-1", evs[1], false), delivery("d-3", "we-1", evs[2], false))
		for _, want := range []string{"d-2", "d-3", ""} { // the oldest waiting one becomes pending, one at a time
			var id string
			f.write(func(q store.Q) (err error) { id, err = q.NextInChain(f.ctx, "we-1", "obj"); return err })
			if id != want {
				t.Errorf("NextInChain = %q, want %q", id, want)
			}
		}
		work, _ := f.read().DeliveriesWork(f.ctx, []string{"d-2", "d-3"})
		if work["d-2"].Delivery.State != webhook.StatePending || work["d-3"].Delivery.State != webhook.StatePending {
			t.Errorf("states after NextInChain: %+v", work)
		}
	},
	"EndpointOutcome": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		hookEndpoint(f, "we-1", account.Live)
		outcome := func(ok bool, at time.Time) *time.Time {
			var since *time.Time
			f.write(func(q store.Q) (err error) { since, err = q.EndpointOutcome(f.ctx, "we-1", ok, at); return err })
			return since
		}
		first := fxAt.Add(time.Minute)
		for i, at := range []time.Time{first, first.Add(time.Hour)} { // failing since the first failure
			if since := outcome(false, at); since == nil || !since.Equal(first) {
				t.Errorf("failure %d: failing since %v, want %v", i+1, since, first)
			}
		}
		if since := outcome(true, first.Add(2*time.Hour)); since != nil {
			t.Errorf("a success answered failing since %v", since)
		}
		if e, err := f.read().Endpoint(f.ctx, fxAccount, account.Live, "we-1", false); err != nil || e.FailingSince != nil {
			t.Errorf("endpoint after a success: %+v, %v; want not failing", e, err)
		}
		f.write(func(q store.Q) error {
			if since, err := q.EndpointOutcome(f.ctx, "we-x", false, fxAt); since != nil || err != nil {
				t.Errorf("EndpointOutcome of an unknown endpoint = %v, %v", since, err)
			}
			return nil
		})
	},
	"DisableEndpoint": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		e := hookEndpoint(f, "we-1", account.Live)
		at := fxAt.Add(time.Hour)
		f.write(func(q store.Q) error {
			if err := q.DisableEndpoint(f.ctx, e.ID, at, "failing"); err != nil {
				return err
			}
			return q.DisableEndpoint(f.ctx, e.ID, at.Add(time.Hour), "again") // once disabled, kept as it was
		})
		e.DisabledAt, e.DisabledReason, e.UpdatedAt = &at, "failing", at
		if got, err := f.read().Endpoint(f.ctx, fxAccount, account.Live, e.ID, false); err != nil || !cmp.Equal(got, e) {
			t.Errorf("Endpoint after DisableEndpoint (%v): %s", err, cmp.Diff(e, got))
		}
	},
	"Attempts": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		hookEndpoint(f, "we-1", account.Live)
		hookEndpoint(f, "we-2", account.Live)
		evs := writeEvents(f, fxAccount, account.Live, 4, fxAt)
		for i, ev := range evs {
			id := fmt.Sprintf("d-%d", i)
			addDeliveries(f, delivery(id, "we-1", ev, false))
			recordAttempt(f, id, "we-1", ev, 1, webhook.StateFailed)
		}
		addDeliveries(f, delivery("d-other", "we-2", evs[0], true))
		recordAttempt(f, "d-other", "we-2", evs[0], 1, webhook.StateFailed)
		page := func(before int64, limit int) ([]string, []int64) {
			log, err := f.read().Attempts(f.ctx, "we-1", before, limit)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			var ns []int64
			for _, a := range log {
				ids, ns = append(ids, a.DeliveryID), append(ns, a.N)
			}
			return ids, ns
		}
		// Newest first, one more than the limit (the caller's has_more).
		ids, ns := page(0, 2)
		if !cmp.Equal(ids, []string{"d-3", "d-2", "d-1"}) {
			t.Errorf("Attempts(limit 2) = %v, want d-3, d-2, d-1", ids)
		}
		if ids, _ := page(ns[1], 10); !cmp.Equal(ids, []string{"d-1", "d-0"}) {
			t.Errorf("Attempts before d-2's = %v, want d-1, d-0", ids)
		}
		log, _ := f.read().Attempts(f.ctx, "we-1", 0, 1)
		a := log[0]
		if a.ID != "at-d-3-1" || a.EventID != evs[3].ID || a.EventType != string(event.OrderCreated) || a.StatusCode != 500 ||
			a.Latency != 120*time.Millisecond || a.Excerpt != "oops" || a.Error != "HTTP 500" || a.Succeeded || a.NextAttemptAt != nil {
			t.Errorf("attempt as read = %+v", a)
		}
	},
	"AttemptPosition": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		hookEndpoint(f, "we-1", account.Live)
		ev := writeEvents(f, fxAccount, account.Live, 1, fxAt)[0]
		addDeliveries(f, delivery("d-1", "we-1", ev, false))
		recordAttempt(f, "d-1", "we-1", ev, 1, webhook.StateFailed)
		log, _ := f.read().Attempts(f.ctx, "we-1", 0, 1)
		if n, ok, err := f.read().AttemptPosition(f.ctx, "we-1", "at-d-1-1"); err != nil || !ok || len(log) != 1 || n != log[0].N {
			t.Errorf("AttemptPosition = %d, %v, %v; want %+v's", n, ok, err, log)
		}
		for _, c := range [][2]string{{"we-2", "at-d-1-1"}, {"we-1", "at-x"}} {
			if n, ok, err := f.read().AttemptPosition(f.ctx, c[0], c[1]); ok || err != nil || n != 0 {
				t.Errorf("AttemptPosition(%s, %s) = %d, %v, %v; want none", c[0], c[1], n, ok, err)
			}
		}
	},
	"Event": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		ev := writeEvents(f, fxAccount, account.Live, 1, fxAt)[0]
		ev.Seq, _, _ = f.read().EventSeq(f.ctx, fxAccount, account.Live, ev.ID)
		if got, ok, err := f.read().Event(f.ctx, fxAccount, account.Live, ev.ID); err != nil || !ok || !cmp.Equal(got, ev) {
			t.Errorf("Event = %+v, %v, %v; want %+v", got, ok, err, ev)
		}
		for _, c := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Live, ev.ID}, {fxAccount, account.Test, ev.ID}, {fxAccount, account.Live, "ev-x"}} {
			if _, ok, err := f.read().Event(f.ctx, c.acct, c.env, c.id); ok || err != nil {
				t.Errorf("Event(%s, %s, %s) = %v, %v; want none", c.acct, c.env, c.id, ok, err)
			}
		}
	},
}

// hookEndpoint writes an enabled endpoint of fxAccount in env created at
// fxAt for every event type.
func hookEndpoint(f *fixture, id string, env account.Environment) webhook.Endpoint {
	return hookEndpointAt(f, id, env, fxAt)
}

func hookEndpointAt(f *fixture, id string, env account.Environment, at time.Time) webhook.Endpoint {
	f.t.Helper()
	e := webhook.Endpoint{ID: id, AccountID: fxAccount, Environment: env, URL: "https://example.com/" + id, EventTypes: []string{webhook.Wildcard},
		Secret: "whsec_" + id, CreatedAt: at, UpdatedAt: at}
	f.write(func(q store.Q) error { return q.InsertEndpoint(f.ctx, e) })
	return e
}

// delivery is delivery id of ev to endpoint ep.
func delivery(id, ep string, ev event.Event, manual bool) webhook.Delivery {
	return webhook.Delivery{ID: id, EndpointID: ep, AccountID: ev.AccountID, Environment: ev.Environment, EventID: ev.ID, ObjectID: ev.ObjectID,
		Manual: manual, CreatedAt: fxAt}
}

// addDeliveries adds ds in one transaction.
func addDeliveries(f *fixture, ds ...webhook.Delivery) {
	f.t.Helper()
	f.write(func(q store.Q) error { _, err := q.AddDeliveries(f.ctx, ds); return err })
}

// recordAttempt records attempt n of delivery id (an HTTP 500 unless the
// delivery succeeded) at fxAt+n hours, leaving it in state; it says
// whether the record applied and whether a delivery waits behind it.
func recordAttempt(f *fixture, id, ep string, ev event.Event, n int, state string) (applied, hasNext bool) {
	f.t.Helper()
	a := webhook.Attempt{ID: fmt.Sprintf("at-%s-%d", id, n), EndpointID: ep, DeliveryID: id, EventID: ev.ID, EventType: string(ev.Type),
		Attempt: n, At: fxAt.Add(time.Duration(n) * time.Hour), StatusCode: 500, Latency: 120 * time.Millisecond, Excerpt: "oops", Error: "HTTP 500"}
	if state == webhook.StateSucceeded {
		a.StatusCode, a.Error, a.Succeeded = 200, "", true
	}
	f.write(func(q store.Q) error {
		ap, hn, err := q.RecordAttempts(f.ctx, []webhook.AttemptRecord{{Attempt: a, State: state}})
		if err == nil {
			applied, hasNext = ap[0], hn[0]
		}
		return err
	})
	return applied, hasNext
}
