package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

var start = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// fixture is an events service on a fresh store with a fixed clock.
type fixture struct {
	ctx   context.Context
	s     *store.Store
	clock *clocktest.Fixed
	ev    *events.Service
	// ended counts the calls of the end function handed to New.
	ended []time.Time
}

// newFixture builds the fixture with the accounts acc_1 and acc_2 (the
// maintenance prunes the streams of the accounts there are).
func newFixture(t *testing.T, s *store.Store) *fixture {
	f := &fixture{ctx: context.Background(), s: s, clock: clocktest.NewFixed(start)}
	f.ev = f.service()
	storetest.Accounts(t, s, start, "acc_1", "acc_2")
	return f
}

// service is another events service on the same store (another instance:
// its part cache is empty).
func (f *fixture) service() *events.Service {
	return events.New(store.NewView[events.Queries](f.s), f.clock, f.s.SettledEventSeq, func(_ context.Context, now time.Time) (int, error) {
		f.ended = append(f.ended, now)
		return 1, nil
	})
}

// write commits one change with one event of p about objectID showing obj
// (marshalled, with its part references turned into placeholders), at the
// clock's time, and returns the event's id.
func (f *fixture) write(t *testing.T, p account.Principal, typ event.Type, objectID string, obj any) string {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	e := event.Event{ID: ident.Prefix("farebox").New("event"), AccountID: p.AccountID, Environment: p.Environment, Type: typ,
		ObjectID: objectID, APIVersion: event.APIVersion, CreatedAt: f.clock.Now(), Object: products.WithMarkers(raw)}
	if err := f.s.Write(f.ctx, func(q store.Q) error { _, err := q.InsertEvents(f.ctx, []event.Event{e}); return err }); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

func (f *fixture) list(t *testing.T, p account.Principal, req events.Request) events.ListJSON {
	t.Helper()
	pg, err := f.ev.List(f.ctx, p, req)
	if err != nil {
		t.Fatal(err)
	}
	return events.Response(pg)
}

// wantParam fails unless err is a 400 invalid_parameter naming field.
func wantParam(t *testing.T, err error, field string) {
	t.Helper()
	e := apperr.As(err)
	if e == nil || e.Kind != apperr.Invalid || e.Code != apperr.CodeInvalidParameter || len(e.Details) != 1 || e.Details[0].Field != field {
		t.Errorf("want invalid_parameter %s, got %v", field, err)
	}
}

// TestEventList: pages in both directions over 25 events, filters, stable
// order, every parameter problem, and the cursor of another account or
// environment.
func TestEventList(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		p := account.Principal{AccountID: "acc_1", Environment: account.Test}
		var objs []string
		for i := range 25 {
			if i == 20 {
				f.clock.Advance(time.Hour)
			}
			id := fmt.Sprintf("farebox-order-%02d", i)
			f.write(t, p, event.OrderCreated, id, map[string]any{"id": id, "name": "Ω 東京 🚆"})
			objs = append(objs, id)
		}
		ids := func(l events.ListJSON) (out []string) {
			for _, e := range l.Data {
				out = append(out, e.Data.ObjectID)
			}
			return out
		}
		// objs[24] is the newest: pages of 10 are 24..15, 14..5, 4..0.
		want := func(from, to int) (out []string) {
			for i := from; i >= to; i-- {
				out = append(out, objs[i])
			}
			return out
		}
		check := func(name string, l events.ListJSON, hasMore bool, from, to int) {
			t.Helper()
			if fmt.Sprint(ids(l)) != fmt.Sprint(want(from, to)) || l.HasMore != hasMore || l.Object != "list" {
				t.Errorf("%s: %v has_more %v, want %d..%d has_more %v", name, ids(l), l.HasMore, from, to, hasMore)
			}
		}
		p1 := f.list(t, p, events.Request{})
		check("first page (default limit 10)", p1, true, 24, 15)
		if e := p1.Data[0]; e.Object != "event" || e.Type != "order.created" || e.APIVersion != event.APIVersion ||
			e.Environment != "test" || e.Sequence != 25 || string(e.Data.Object) != `{"id":"farebox-order-24","name":"Ω 東京 🚆"}` {
			t.Errorf("newest event %+v %s", e, e.Data.Object)
		}
		p2 := f.list(t, p, events.Request{StartingAfter: p1.Data[9].ID})
		check("second", p2, true, 14, 5)
		p3 := f.list(t, p, events.Request{StartingAfter: p2.Data[9].ID})
		check("third", p3, false, 4, 0)
		back := f.list(t, p, events.Request{EndingBefore: p3.Data[0].ID})
		check("back to the second", back, true, 14, 5)
		back = f.list(t, p, events.Request{EndingBefore: back.Data[0].ID})
		check("back to the first", back, false, 24, 15)
		check("limit 100", f.list(t, p, events.Request{Limit: "100"}), false, 24, 0)
		check("limit 1", f.list(t, p, events.Request{Limit: "1"}), true, 24, 24)
		check("type", f.list(t, p, events.Request{Type: "order.created", Limit: "3"}), true, 24, 22)
		if l := f.list(t, p, events.Request{Type: "ticket.issued"}); len(l.Data) != 0 || l.HasMore {
			t.Errorf("no ticket was issued: %+v", l)
		}
		later := f.clock.Now().Format(time.RFC3339)
		check("created[gte]", f.list(t, p, events.Request{CreatedGTE: later}), false, 24, 20)
		check("created[lt]", f.list(t, p, events.Request{CreatedLT: later, Limit: "100"}), false, 19, 0)
		check("created[lt] from a cursor", f.list(t, p, events.Request{CreatedLT: later, StartingAfter: p1.Data[0].ID}), true, 19, 10)

		// Another environment of the same account, another account: their
		// event ids are no cursor here, and they see none of these events.
		live := account.Principal{AccountID: "acc_1", Environment: account.Live}
		other := account.Principal{AccountID: "acc_2", Environment: account.Test}
		liveEv := f.write(t, live, event.OrderCreated, "farebox-order-live", map[string]any{})
		otherEv := f.write(t, other, event.OrderCreated, "farebox-order-other", map[string]any{})
		for _, q := range []account.Principal{live, other} {
			if l := f.list(t, q, events.Request{}); len(l.Data) != 1 || l.Data[0].Data.ObjectID == "" || l.HasMore {
				t.Errorf("%+v sees %+v", q, l)
			}
		}
		for _, c := range []struct {
			req   events.Request
			field string
		}{
			{events.Request{StartingAfter: liveEv}, "starting_after"},
			{events.Request{EndingBefore: otherEv}, "ending_before"},
			{events.Request{StartingAfter: "farebox-event-nope"}, "starting_after"},
			{events.Request{StartingAfter: p1.Data[0].ID, EndingBefore: p1.Data[1].ID}, "ending_before"},
			{events.Request{Limit: "0"}, "limit"},
			{events.Request{Limit: "101"}, "limit"},
			{events.Request{Limit: "10x"}, "limit"},
			{events.Request{Limit: "+5"}, "limit"},
			{events.Request{Limit: "99999999999999999999"}, "limit"},
			{events.Request{Type: "order.deleted"}, "type"},
			{events.Request{CreatedGTE: "yesterday"}, "created[gte]"},
			{events.Request{CreatedLT: "2026-06-15"}, "created[lt]"},
		} {
			_, err := f.ev.List(f.ctx, p, c.req)
			wantParam(t, err, c.field)
		}
	})
}

// TestEventMaintain: the maintenance first ends the subscriptions due at
// the service's time (the function it was given) and reports their count;
// events older than event.Retention are pruned, newer ones stay, and the
// sequence never restarts.
func TestEventMaintain(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		p := account.Principal{AccountID: "acc_1", Environment: account.Live}
		f.write(t, p, event.OrderCreated, "farebox-order-1", map[string]any{})
		f.clock.Advance(time.Hour)
		f.write(t, p, event.OrderCreated, "farebox-order-2", map[string]any{})
		f.clock.Advance(event.Retention - time.Hour)
		if ended, n, err := f.ev.Maintain(f.ctx); err != nil || ended != 1 || n != 0 {
			t.Fatalf("at exactly the retention period: ended %d, pruned %d, %v", ended, n, err)
		}
		f.clock.Advance(time.Microsecond)
		if _, n, err := f.ev.Maintain(f.ctx); err != nil || n != 1 {
			t.Fatalf("after it: pruned %d, %v", n, err)
		}
		if len(f.ended) != 2 || !f.ended[1].Equal(f.clock.Now()) {
			t.Errorf("subscriptions ended at %v, want twice, last at %v", f.ended, f.clock.Now())
		}
		f.write(t, p, event.OrderCreated, "farebox-order-3", map[string]any{})
		l := f.list(t, p, events.Request{})
		if len(l.Data) != 2 || l.Data[0].Sequence != 3 || l.Data[1].Sequence != 2 {
			t.Errorf("after pruning: %+v", l.Data)
		}
	})
}

// product and area stand for the catalog views whose JSON events share.
type coupon struct {
	ID      string `json:"id"`
	Product any    `json:"product"`
	Holder  string `json:"holder"`
}

// TestEventParts: the parts of the catalog (stored by the products
// service when it loads a catalog version) stand in an event's stored
// object for the product (its object is a fraction of the object); listing
// and Bodies put them back byte for byte, also on a service that has not
// seen them (another instance); a holder's name that spells a placeholder
// is not expanded; a stored event naming a part that is not stored is an
// internal error.
func TestEventParts(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		p := account.Principal{AccountID: "acc_1", Environment: account.Live}
		prods := products.New(store.NewView[products.Queries](s), f.clock, "farebox")
		if err := prods.Load(f.ctx); err != nil {
			t.Fatal(err)
		}
		first := prods.Catalog().File().Products[0]
		pr, err := prods.Product(first.ID)
		if err != nil {
			t.Fatal(err)
		}
		view := products.ProductView(pr)
		ref := prods.Parts().ReferProduct(view)
		if _, same := ref.(products.ProductJSON); same {
			t.Fatal("the loaded catalog has no part for its first product")
		}
		full, _ := json.Marshal(coupon{ID: "farebox-coupon-1", Product: view, Holder: "Anna"})
		id := f.write(t, p, event.CouponActivated, "farebox-coupon-1", coupon{ID: "farebox-coupon-1", Product: ref, Holder: "Anna"})
		stored, err := s.Read().EventsOf(f.ctx, "farebox-coupon-1")
		if err != nil || len(stored) != 1 || len(stored[0].Object)*2 > len(full) || !strings.Contains(string(stored[0].Object), products.PartMarker) {
			t.Fatalf("stored %d bytes for %d: %v", len(stored[0].Object), len(full), err)
		}
		for _, ev := range []*events.Service{f.ev, f.service()} {
			if l := f.list(t, p, events.Request{}); len(l.Data) != 1 || string(l.Data[0].Data.Object) != string(full) {
				t.Errorf("listed object differs:\n got %s\nwant %s", l.Data[0].Data.Object, full)
			}
			got, err := ev.Bodies(f.ctx, stored)
			if err != nil || len(got) != 1 {
				t.Fatal(len(got), err)
			}
			var body struct {
				ID, Object, Created string
				Data                struct{ Object json.RawMessage }
			}
			if err := json.Unmarshal(got[0], &body); err != nil || body.ID != id || body.Object != "event" ||
				body.Created != "2026-06-15T10:00:00Z" || string(body.Data.Object) != string(full) {
				t.Errorf("body %s: %v", got[0], err)
			}
		}

		// A holder's name spelling the placeholder of the real part.
		obj := string(stored[0].Object)
		i := strings.Index(obj, products.PartMarker)
		forged := obj[i : i+len(products.PartMarker)+products.PartHashLen+2]
		f.write(t, p, event.CouponActivated, "farebox-coupon-2", coupon{ID: "farebox-coupon-2", Holder: forged})
		want, _ := json.Marshal(coupon{ID: "farebox-coupon-2", Holder: forged})
		if l := f.list(t, p, events.Request{Limit: "1"}); len(l.Data) != 1 || string(l.Data[0].Data.Object) != string(want) {
			t.Errorf("forged placeholder:\n got %s\nwant %s", l.Data[0].Data.Object, want)
		}

		// An event whose stored object names a part that was never stored.
		missing := products.PartMarker + strings.Repeat("0", products.PartHashLen) + `"}`
		e := event.Event{ID: ident.Prefix("farebox").New("event"), AccountID: p.AccountID, Environment: p.Environment, Type: event.CouponActivated,
			ObjectID: "farebox-coupon-3", APIVersion: event.APIVersion, CreatedAt: f.clock.Now(),
			Object: []byte(`{"id":"farebox-coupon-3","product":` + missing + `,"holder":""}`)}
		if err := s.Write(f.ctx, func(q store.Q) error { _, err := q.InsertEvents(f.ctx, []event.Event{e}); return err }); err != nil {
			t.Fatal(err)
		}
		_, err = f.service().List(f.ctx, p, events.Request{})
		if e := apperr.As(err); e == nil || e.Kind != apperr.Internal || e.Code != events.CodeEventPartMissing {
			t.Errorf("missing part: %v", err)
		}
	})
}
