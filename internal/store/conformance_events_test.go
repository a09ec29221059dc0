package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestConformanceEvents(t *testing.T) { eventsConformance.run(t) }

// eventsConformance: events.go (the account's event stream, ended
// subscriptions, shared event parts; InsertEvents is tested by
// TestInsertEventsEndpointCheck).
var eventsConformance = conformanceCases{
	"Store.SettledEventSeq": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		writeEvents(f, fxAccount, account.Live, 3, fxAt)
		writeEvents(f, fxAccount, account.Test, 1, fxAt)
		seq, settled, err := s.SettledEventSeq(f.ctx, fxAccount, account.Live)
		if err != nil {
			t.Fatal(err)
		}
		if s.Engine() == store.SQLite { // the single writer numbers in commit order: everything committed is settled
			if settled || seq != 0 {
				t.Errorf("SettledEventSeq on SQLite = %d, %v; want 0, false", seq, settled)
			}
			return
		}
		last, _, _ := f.read().EventSeq(f.ctx, fxAccount, account.Live, "ev-acct-1-live-2")
		if !settled || seq != last {
			t.Errorf("SettledEventSeq = %d, %v; want the stream's newest number %d", seq, settled, last)
		}
		if seq, settled, err := s.SettledEventSeq(f.ctx, fxOther, account.Live); err != nil || !settled || seq != 0 {
			t.Errorf("SettledEventSeq of an empty stream = %d, %v, %v", seq, settled, err)
		}
	},
	"EventsAbout": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		evs := writeEvents(f, fxAccount, account.Live, 4, fxAt) // about order-0 … order-3
		writeEvents(f, fxOther, account.Live, 2, fxAt)          // the same object ids, another tenant
		writeEvents(f, fxAccount, account.Test, 2, fxAt)        // and the other environment
		f.write(func(q store.Q) error {
			_, err := q.InsertEvents(f.ctx, []event.Event{{ID: "ev-again", AccountID: fxAccount, Environment: account.Live,
				Type: event.SubscriptionEnded, ObjectID: "order-1", APIVersion: event.APIVersion, CreatedAt: fxAt.Add(time.Hour), Object: []byte(`{"big":true}`)}})
			return err
		})
		strip := func(e event.Event) event.Event { e.Object, e.APIVersion = nil, ""; return e }
		again := event.Event{ID: "ev-again", AccountID: fxAccount, Environment: account.Live, Type: event.SubscriptionEnded, ObjectID: "order-1", CreatedAt: fxAt.Add(time.Hour)}
		for _, c := range []struct {
			name  string
			ids   []string
			limit int
			want  []event.Event
		}{
			{"two objects, oldest first, without their objects", []string{"order-3", "order-1"}, 10, []event.Event{strip(evs[1]), strip(evs[3]), again}},
			{"the limit keeps the oldest", []string{"order-3", "order-1"}, 2, []event.Event{strip(evs[1]), strip(evs[3])}},
			{"an unknown object", []string{"order-9"}, 10, nil},
			{"no ids", nil, 10, nil},
		} {
			got, err := f.read().EventsAbout(f.ctx, fxAccount, account.Live, c.ids, c.limit)
			if d := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); err != nil || d != "" {
				t.Errorf("%s: %v (-want +got):\n%s", c.name, err, d)
			}
		}
		if got, err := f.read().EventsAbout(f.ctx, fxOther, account.Test, []string{"order-0"}, 10); err != nil || len(got) != 0 {
			t.Errorf("another tenant's environment without events: %+v, %v", got, err)
		}
	},
	"EventSeq": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		evs := writeEvents(f, fxAccount, account.Live, 2, fxAt)
		first, ok1, err1 := f.read().EventSeq(f.ctx, fxAccount, account.Live, evs[0].ID)
		second, ok2, err2 := f.read().EventSeq(f.ctx, fxAccount, account.Live, evs[1].ID)
		if err1 != nil || err2 != nil || !ok1 || !ok2 || first <= 0 || second <= first {
			t.Errorf("EventSeq = %d %v %v, %d %v %v; want increasing numbers in the order written", first, ok1, err1, second, ok2, err2)
		}
		for _, c := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Live, evs[0].ID}, {fxAccount, account.Test, evs[0].ID}, {fxAccount, account.Live, "ev-x"}} {
			if seq, ok, err := f.read().EventSeq(f.ctx, c.acct, c.env, c.id); ok || err != nil || seq != 0 {
				t.Errorf("EventSeq(%s, %s, %s) = %d, %v, %v; want none", c.acct, c.env, c.id, seq, ok, err)
			}
		}
	},
	"Events": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		evs := writeEvents(f, fxAccount, account.Live, 5, fxAt) // created a minute apart
		writeEvents(f, fxOther, account.Live, 1, fxAt)
		writeEvents(f, fxAccount, account.Test, 1, fxAt)
		f.write(func(q store.Q) error {
			_, err := q.InsertEvents(f.ctx, []event.Event{{ID: "ev-typed", AccountID: fxAccount, Environment: account.Live,
				Type: event.SubscriptionEnded, ObjectID: "sub-1", APIVersion: event.APIVersion, CreatedAt: fxAt.Add(time.Hour), Object: []byte(`{}`)}})
			return err
		})
		seqs := map[string]int64{}
		for _, e := range append(evs, event.Event{ID: "ev-typed"}) {
			seqs[e.ID], _, _ = f.read().EventSeq(f.ctx, fxAccount, account.Live, e.ID)
		}
		ids := func(p event.Page) []string {
			out := []string{}
			for _, e := range p.Events {
				out = append(out, e.ID)
			}
			return out
		}
		gte, lt := fxAt.Add(time.Minute), fxAt.Add(3*time.Minute)
		settled := seqs[evs[2].ID]
		q := event.Query{AccountID: fxAccount, Environment: account.Live, Limit: 2}
		for _, c := range []struct {
			name          string
			q             event.Query
			after, before int64
			want          []string
			more          bool
		}{
			{"first page", q, 0, 0, []string{"ev-typed", evs[4].ID}, true},
			{"after", q, seqs[evs[4].ID], 0, []string{evs[3].ID, evs[2].ID}, true},
			{"after the oldest", q, seqs[evs[0].ID], 0, []string{}, false},
			{"before", q, 0, seqs[evs[1].ID], []string{evs[3].ID, evs[2].ID}, true},
			{"before the newest", q, 0, seqs["ev-typed"], []string{}, false},
			{"type", event.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10, Type: event.SubscriptionEnded}, 0, 0, []string{"ev-typed"}, false},
			{"created range", event.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10, CreatedGTE: &gte, CreatedLT: &lt}, 0, 0,
				[]string{evs[2].ID, evs[1].ID}, false},
			{"settled", event.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10, Settled: &settled}, 0, 0,
				[]string{evs[2].ID, evs[1].ID, evs[0].ID}, false},
		} {
			p, err := f.read().Events(f.ctx, c.q, c.after, c.before)
			if got := ids(p); err != nil || !cmp.Equal(got, c.want) || p.HasMore != c.more {
				t.Errorf("Events %s = %v has_more %v (%v); want %v has_more %v", c.name, got, p.HasMore, err, c.want, c.more)
			}
		}
		p, err := f.read().Events(f.ctx, event.Query{AccountID: fxAccount, Environment: account.Live, Limit: 1}, seqs["ev-typed"], 0)
		want := evs[4]
		want.Seq = seqs[want.ID]
		if err != nil || len(p.Events) != 1 || !cmp.Equal(p.Events[0], want) {
			t.Errorf("Events returns %+v (%v), want %+v as written", p.Events, err, want)
		}
	},
	"EventsOf": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		mk := func(acct string, env account.Environment, id, object string) event.Event {
			return event.Event{ID: id, AccountID: acct, Environment: env, Type: event.OrderCreated, ObjectID: object,
				APIVersion: event.APIVersion, CreatedAt: fxAt, Object: []byte(`{}`)}
		}
		f.write(func(q store.Q) error {
			for _, e := range []event.Event{mk(fxOther, account.Live, "e1", "obj"), mk(fxAccount, account.Test, "e2", "obj"),
				mk(fxAccount, account.Live, "e3", "obj"), mk(fxAccount, account.Live, "e4", "other"), mk(fxAccount, account.Live, "e5", "obj")} {
				if _, err := q.InsertEvents(f.ctx, []event.Event{e}); err != nil {
					return err
				}
			}
			return nil
		})
		got, err := f.read().EventsOf(f.ctx, "obj")
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		// By stream (account, environment), then in the order written.
		if err != nil || !cmp.Equal(ids, []string{"e3", "e5", "e2", "e1"}) {
			t.Errorf("EventsOf = %v, %v; want e3, e5, e2, e1", ids, err)
		}
	},
	"EventStreams": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		got, err := f.read().EventStreams(f.ctx)
		want := [][2]string{{fxAccount, "live"}, {fxAccount, "test"}, {fxOther, "live"}, {fxOther, "test"}}
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("EventStreams = %v, %v; want every account's two environments", got, err)
		}
	},
	"PruneEvents": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		evs := writeEvents(f, fxAccount, account.Live, 5, fxAt) // fxAt, +1m, … +4m
		writeEvents(f, fxAccount, account.Test, 2, fxAt)
		prune := func(cutoff time.Time, limit int) int64 {
			var n int64
			f.write(func(q store.Q) (err error) {
				n, err = q.PruneEvents(f.ctx, fxAccount, account.Live, cutoff, limit)
				return err
			})
			return n
		}
		if n := prune(fxAt.Add(150*time.Second), 1); n != 1 { // the limit bounds a call
			t.Errorf("PruneEvents(limit 1) = %d", n)
		}
		if n := prune(fxAt.Add(150*time.Second), 10); n != 2 {
			t.Errorf("PruneEvents = %d, want the other two older than the cutoff", n)
		}
		if n := prune(fxAt.Add(time.Hour), 10); n != 1 { // never the newest
			t.Errorf("PruneEvents past every event = %d, want all but the newest", n)
		}
		p, err := f.read().Events(f.ctx, event.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}, 0, 0)
		if err != nil || len(p.Events) != 1 || p.Events[0].ID != evs[4].ID {
			t.Errorf("events left = %+v, %v; want the newest", p.Events, err)
		}
		if p, err := f.read().Events(f.ctx, event.Query{AccountID: fxAccount, Environment: account.Test, Limit: 10}, 0, 0); err != nil || len(p.Events) != 2 {
			t.Errorf("another stream pruned: %+v, %v", p.Events, err)
		}
	},
	"EndedSubscriptions": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		clock := "clock-1"
		f.write(func(q store.Q) error { return q.InsertTestClock(f.ctx, clockRecord(clock, account.Test, fxAt)) })
		end := func(id string, ends time.Time, edit func(*ticketing.Subscription)) {
			sub := ticketing.Subscription{ID: id, AccountID: fxAccount, Environment: account.Test, ProductID: fxProduct, EndsAt: &ends, CreatedAt: fxAt}
			if edit != nil {
				edit(&sub)
			}
			f.write(func(q store.Q) error { return q.InsertSubscription(f.ctx, sub) })
		}
		end("s-late", fxAt.Add(2*time.Hour), nil)
		end("s-b", fxAt.Add(time.Hour), nil)
		end("s-a", fxAt.Add(time.Hour), nil)
		end("s-first", fxAt, nil)
		end("s-future", fxAt.Add(48*time.Hour), nil)
		end("s-restored", fxAt, func(s *ticketing.Subscription) { r := "s-a"; s.RestoredSubscriptionID = &r })
		end("s-marked", fxAt, nil)
		end("s-clock", fxAt, func(s *ticketing.Subscription) { s.TestClockID = &clock })
		f.write(func(q store.Q) error { _, err := q.MarkSubscriptionEnded(f.ctx, "s-marked", fxAt); return err })
		at := fxAt.Add(3 * time.Hour)
		for _, c := range []struct {
			clock string
			limit int
			want  []string
		}{{"", 10, []string{"s-first", "s-a", "s-b", "s-late"}}, {"", 2, []string{"s-first", "s-a"}}, {clock, 10, []string{"s-clock"}}} {
			got, err := f.read().EndedSubscriptions(f.ctx, c.clock, at, c.limit)
			if err != nil || !cmp.Equal(got, c.want) {
				t.Errorf("EndedSubscriptions(%q, limit %d) = %v, %v; want %v (by end, then id)", c.clock, c.limit, got, err, c.want)
			}
		}
	},
	"MarkSubscriptionEnded": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		for i, want := range []bool{true, false} { // another instance did it first
			var ok bool
			f.write(func(q store.Q) (err error) { ok, err = q.MarkSubscriptionEnded(f.ctx, "sub-1", fxAt); return err })
			if ok != want {
				t.Errorf("MarkSubscriptionEnded #%d = %v, want %v", i+1, ok, want)
			}
		}
		f.write(func(q store.Q) error {
			if ok, err := q.MarkSubscriptionEnded(f.ctx, "sub-x", fxAt); ok || err != nil {
				t.Errorf("MarkSubscriptionEnded of an unknown subscription = %v, %v", ok, err)
			}
			return nil
		})
	},
	"PutEventParts": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			return q.PutEventParts(f.ctx, map[string][]byte{"h1": []byte(`{"a":1}`), "h2": []byte(`{"b":2}`)})
		})
		f.write(func(q store.Q) error {
			return q.PutEventParts(f.ctx, map[string][]byte{"h1": []byte(`{"changed":true}`)})
		}) // kept as it was
		got, err := f.read().EventParts(f.ctx, []string{"h1", "h2"})
		if err != nil || !cmp.Equal(got, map[string][]byte{"h1": []byte(`{"a":1}`), "h2": []byte(`{"b":2}`)}) {
			t.Errorf("parts after PutEventParts = %s, %v", got, err)
		}
	},
	"EventParts": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error { return q.PutEventParts(f.ctx, map[string][]byte{"h1": []byte(`{"a":"Ä"}`)}) })
		for _, c := range []struct {
			hashes []string
			want   map[string][]byte
		}{{[]string{"h1", "h-x"}, map[string][]byte{"h1": []byte(`{"a":"Ä"}`)}}, {nil, map[string][]byte{}}} {
			if got, err := f.read().EventParts(f.ctx, c.hashes); err != nil || !cmp.Equal(got, c.want) {
				t.Errorf("EventParts(%v) = %s, %v; want %s (the stored ones among them)", c.hashes, got, err, c.want)
			}
		}
	},
}

// writeEvents writes n events of acct in env, one change each, created a
// minute apart from at (ids ev-<acct>-<env>-<i>), and returns them.
func writeEvents(f *fixture, acct string, env account.Environment, n int, at time.Time) []event.Event {
	f.t.Helper()
	var evs []event.Event
	for i := range n {
		e := event.Event{ID: fmt.Sprintf("ev-%s-%s-%d", acct, env, i), AccountID: acct, Environment: env, Type: event.OrderCreated,
			ObjectID: fmt.Sprintf("order-%d", i), APIVersion: event.APIVersion, CreatedAt: at.Add(time.Duration(i) * time.Minute),
			Object: []byte(fmt.Sprintf(`{"n":%d}`, i))}
		f.write(func(q store.Q) error { _, err := q.InsertEvents(f.ctx, []event.Event{e}); return err })
		evs = append(evs, e)
	}
	return evs
}
