package app_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
)

// allEvents lists every event of p, paging backwards with starting_after
// (limit 7, so several pages), oldest first.
func (b *testBundle) allEvents(t *testing.T, p account.Principal) []app.EventJSON {
	t.Helper()
	var out []app.EventJSON
	req := app.EventsRequest{Limit: "7"}
	for {
		page, err := b.app.Events(b.ctx, p, req)
		if err != nil {
			t.Fatal(err)
		}
		l := app.EventsResponse(page)
		older := slices.Clone(l.Data)
		slices.Reverse(older)
		out = append(older, out...)
		if !l.HasMore {
			break
		}
		req.StartingAfter = l.Data[len(l.Data)-1].ID
	}
	// Numbers increase; on SQLite (one writer) they are also gap-free.
	for i := 1; i < len(out); i++ {
		if out[i].Sequence <= out[i-1].Sequence || b.store.Engine() == store.SQLite && out[i].Sequence != out[i-1].Sequence+1 {
			t.Fatalf("sequence %d after %d", out[i].Sequence, out[i-1].Sequence)
		}
	}
	return out
}

// eventLog follows an account's events: next returns those written since
// the last call (by sequence: pruning may have removed older ones).
type eventLog struct {
	b    *testBundle
	p    account.Principal
	seen int64
}

func (l *eventLog) next(t *testing.T) []app.EventJSON {
	t.Helper()
	var out []app.EventJSON
	for _, e := range l.b.allEvents(t, l.p) {
		if e.Sequence > l.seen {
			out = append(out, e)
			l.seen = e.Sequence
		}
	}
	return out
}

// expect fails unless the new events are exactly wants, in order: each of
// the type with the object id, showing the JSON of the object's GET.
func (l *eventLog) expect(t *testing.T, wants ...wantEvent) {
	t.Helper()
	got := l.next(t)
	if len(got) != len(wants) {
		var types []string
		for _, e := range got {
			types = append(types, e.Type)
		}
		t.Fatalf("%d new events %v, want %d", len(got), types, len(wants))
	}
	for i, w := range wants {
		e := got[i]
		if e.Type != string(w.typ) || e.Data.ObjectID != w.id || e.Object != "event" || e.APIVersion != "v9" ||
			e.Environment != string(l.p.Environment) || time.Time(e.Created) != l.b.clock.Now() {
			t.Errorf("event %d: %s %s %s %s %v, want %s about %s", i, e.Type, e.Data.ObjectID, e.APIVersion, e.Environment,
				time.Time(e.Created), w.typ, w.id)
		}
		want, err := json.Marshal(w.object)
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Data.Object) != string(want) {
			t.Errorf("%s object\n got %s\nwant %s", w.typ, e.Data.Object, want)
		}
	}
}

type wantEvent struct {
	typ    event.Type
	id     string
	object any
}

// TestEventsOfEveryChange drives every state change and checks that each
// writes its event exactly once, with the object its GET shows, and that
// repeats which change nothing write nothing.
func TestEventsOfEveryChange(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		log := &eventLog{b: b, p: b.live}
		coupon := func(id string) any {
			d, err := b.app.Coupon(b.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return app.CouponResponse(d, 9, &b.live)
		}
		sub := func(id string) any {
			d, err := b.app.SubscriptionDetails(b.ctx, b.live, id)
			if err != nil {
				t.Fatal(err)
			}
			return app.SubscriptionResponse(d)
		}
		ticket := func(id string) any {
			v, err := (*app.Wallets)(nil).TicketResponse(b.ticket(t, id))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		// order.created, without the restore secret.
		o := b.order(t, b.live, b.product(t, singleBerlin).ID, b.product(t, monthly).ID)
		ov, err := b.app.OrderResponse(b.ctx, o, 9, false)
		if err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.OrderCreated, o.ID, ov})
		single, month := o.Coupons[0], o.Coupons[1]
		subID := *month.SubscriptionID

		// coupon.tariff_settings_updated
		if _, err := b.app.SetTariffSettings(b.ctx, month.ID, json.RawMessage(berlinTariff)); err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.CouponTariffSettingsUpdated, month.ID, coupon(month.ID)})

		// coupon.activated + ticket.issued; the idempotent repeat writes nothing.
		tk := b.activate(t, single.ID, activation(""))
		log.expect(t, wantEvent{event.CouponActivated, single.ID, coupon(single.ID)}, wantEvent{event.TicketIssued, tk.ID, ticket(tk.ID)})
		b.activate(t, single.ID, activation(""))
		log.expect(t)
		june := b.activate(t, month.ID, activation(berlinTariff))
		log.expect(t, wantEvent{event.CouponActivated, month.ID, coupon(month.ID)}, wantEvent{event.TicketIssued, june.ID, ticket(june.ID)})

		// subscription.cycle_ordered, subscription.reactivated + ticket.issued.
		b.clock.Set(berlin(2026, 6, 20, 9, 0, 0))
		if err := b.app.Reorder(b.ctx, b.live, subID, ""); err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.SubscriptionCycleOrdered, subID, sub(subID)})
		b.clock.Set(berlin(2026, 6, 24, 9, 0, 0)) // July is ordered: its ticket can be obtained at any time
		act, err := b.app.ActivateCoupon(b.ctx, month.ID, app.ActivationRequest{ReactivationKey: *june.ReactivationKey, Version: 9})
		if err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.SubscriptionReactivated, subID, sub(subID)}, wantEvent{event.TicketIssued, act.TicketID, ticket(act.TicketID)})
		if _, err := b.app.ActivateCoupon(b.ctx, month.ID, app.ActivationRequest{ReactivationKey: *june.ReactivationKey, Version: 9}); err != nil {
			t.Fatal(err)
		}
		log.expect(t)

		// coupon.restored (the original coupon, now naming its replacement);
		// activating the replacement is coupon.activated + ticket.issued.
		_, restored, err := b.app.Restore(b.ctx, b.live, o.ID, app.RestoreRequest{RestoreSecret: o.RestoreSecret, CouponIDs: []string{single.ID}})
		if err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.CouponRestored, single.ID, coupon(single.ID)})
		act, err = b.app.ActivateCoupon(b.ctx, restored[0].ID, app.ActivationRequest{Version: 9})
		if err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.CouponActivated, restored[0].ID, coupon(restored[0].ID)}, wantEvent{event.TicketIssued, act.TicketID, ticket(act.TicketID)})

		// subscription.cancelled once; subscription.ended once, when the
		// maintenance job sees the end has passed.
		b.clock.Set(berlin(2026, 7, 5, 9, 0, 0))
		if ok, err := b.app.CancelSubscription(b.ctx, b.live, subID); err != nil || !ok {
			t.Fatal(ok, err)
		}
		// Its object is the DELETE's answer: the Subscription and its receipt.
		cancelled, err := b.app.CancelledSubscription(b.ctx, b.live, subID)
		if err != nil || cancelled.CancellationReceipt == nil {
			t.Fatal(cancelled, err)
		}
		log.expect(t, wantEvent{event.SubscriptionCancelled, subID, cancelled})
		if _, err := b.app.CancelSubscription(b.ctx, b.live, subID); err != nil {
			t.Fatal(err)
		}
		if n, _, err := b.app.EventMaintenance(b.ctx); err != nil || n != 0 {
			t.Fatalf("before the end: %d ended, %v", n, err)
		}
		log.expect(t)
		b.clock.Set(berlin(2026, 8, 1, 0, 0, 0))
		if n, _, err := b.app.EventMaintenance(b.ctx); err != nil || n != 1 {
			t.Fatalf("at the end: %d ended, %v", n, err)
		}
		log.expect(t, wantEvent{event.SubscriptionEnded, subID, sub(subID)})
		if n, _, err := b.app.EventMaintenance(b.ctx); err != nil || n != 0 {
			t.Fatalf("again: %d ended, %v", n, err)
		}
		log.expect(t)

		// Nothing of this reached the test environment.
		if evs := b.allEvents(t, b.test); len(evs) != 0 {
			t.Errorf("test environment has %d events", len(evs))
		}
	})
}

// TestFailedChangeWritesNoEvent: refused changes write no event, and an
// event that cannot be written undoes its change (one transaction).
func TestFailedChangeWritesNoEvent(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		log := &eventLog{b: b, p: b.live}
		_, err := b.app.PlaceOrder(b.ctx, b.live, app.OrderRequest{ProductIDs: []string{"farebox-product-nope"}})
		wantErr(t, err, apperr.Unprocessable, "invalid_product_ids")
		c := b.order(t, b.live, b.product(t, singleBerlin).ID).Coupons[0]
		log.next(t)
		_, err = b.app.ActivateCoupon(b.ctx, c.ID, app.ActivationRequest{IdentificationMedium: json.RawMessage(`{"photo_id_lite":{}}`), Version: 9})
		if apperr.KindOf(err) != apperr.Unprocessable {
			t.Fatalf("bad medium: %v", err)
		}
		_, err = b.app.CancelSubscription(b.ctx, b.live, "farebox-subscription-nope")
		wantErr(t, err, apperr.NotFound, "subscription_not_found")
		log.expect(t)

		// A trigger refuses every event row: the change that writes it fails
		// and leaves nothing behind.
		before := b.counts(t)
		refuse := []string{`CREATE TRIGGER events_refuse BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`}
		if b.store.Engine() == store.Postgres {
			refuse = []string{`CREATE FUNCTION events_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
				`CREATE TRIGGER events_refuse BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION events_refuse()`}
		}
		// The PostgreSQL schema returns to a pool of test schemas: drop the
		// trigger before it goes back.
		t.Cleanup(func() {
			drop := []string{`DROP TRIGGER IF EXISTS events_refuse`}
			if b.store.Engine() == store.Postgres {
				drop = []string{`DROP TRIGGER IF EXISTS events_refuse ON events`, `DROP FUNCTION IF EXISTS events_refuse()`}
			}
			for _, stmt := range drop {
				if _, err := b.store.DB().ExecContext(b.ctx, stmt); err != nil {
					t.Error(err)
				}
			}
		})
		for _, stmt := range refuse {
			if _, err := b.store.DB().ExecContext(b.ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.app.PlaceOrder(b.ctx, b.live, app.OrderRequest{ProductIDs: []string{b.product(t, monthly).ID}}); err == nil {
			t.Fatal("an order whose event cannot be written succeeded")
		}
		if after := b.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the failed order left rows: %v, before %v", after, before)
		}
		if _, err := b.app.ActivateCoupon(b.ctx, c.ID, activation("")); err == nil {
			t.Fatal("an activation whose event cannot be written succeeded")
		}
		if d, err := b.app.Coupon(b.ctx, c.ID); err != nil || d.Coupon.Activated || b.count(t, "tickets") != 0 {
			t.Errorf("the failed activation changed the coupon: %+v %v", d.Coupon, err)
		}
	})
}

// TestEventPagination: pages in both directions over 25 events, filters,
// stable order, and the cursor of another account or environment.
func TestEventPagination(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		p := b.test
		var orders []string
		for i := range 25 {
			if i == 20 {
				b.clock.Advance(time.Hour)
			}
			orders = append(orders, b.order(t, p, b.product(t, singleBerlin).ID).ID)
		}
		page := func(req app.EventsRequest) app.EventListJSON {
			t.Helper()
			pg, err := b.app.Events(b.ctx, p, req)
			if err != nil {
				t.Fatal(err)
			}
			return app.EventsResponse(pg)
		}
		ids := func(l app.EventListJSON) (out []string) {
			for _, e := range l.Data {
				out = append(out, e.Data.ObjectID)
			}
			return out
		}
		// orders[24] is the newest: pages of 10 are 24..15, 14..5, 4..0.
		want := func(from, to int) (out []string) {
			for i := from; i >= to; i-- {
				out = append(out, orders[i])
			}
			return out
		}
		check := func(name string, l app.EventListJSON, hasMore bool, from, to int) {
			t.Helper()
			if fmt.Sprint(ids(l)) != fmt.Sprint(want(from, to)) || l.HasMore != hasMore {
				t.Errorf("%s: %v has_more %v, want orders %d..%d has_more %v", name, ids(l), l.HasMore, from, to, hasMore)
			}
		}
		p1 := page(app.EventsRequest{})
		check("first page (default limit 10)", p1, true, 24, 15)
		p2 := page(app.EventsRequest{StartingAfter: p1.Data[9].ID})
		check("second", p2, true, 14, 5)
		p3 := page(app.EventsRequest{StartingAfter: p2.Data[9].ID})
		check("third", p3, false, 4, 0)
		back := page(app.EventsRequest{EndingBefore: p3.Data[0].ID})
		check("back to the second", back, true, 14, 5)
		back = page(app.EventsRequest{EndingBefore: back.Data[0].ID})
		check("back to the first", back, false, 24, 15)
		check("limit 100", page(app.EventsRequest{Limit: "100"}), false, 24, 0)
		check("limit 1", page(app.EventsRequest{Limit: "1"}), true, 24, 24)
		check("type", page(app.EventsRequest{Type: "order.created", Limit: "3"}), true, 24, 22)
		if l := page(app.EventsRequest{Type: "ticket.issued"}); len(l.Data) != 0 || l.HasMore {
			t.Errorf("no ticket was issued: %+v", l)
		}
		later := b.clock.Now().Format(time.RFC3339)
		check("created[gte]", page(app.EventsRequest{CreatedGTE: later}), false, 24, 20)
		check("created[lt]", page(app.EventsRequest{CreatedLT: later, Limit: "100"}), false, 19, 0)
		check("created[lt] from a cursor", page(app.EventsRequest{CreatedLT: later, StartingAfter: p1.Data[0].ID}), true, 19, 10)

		// Another environment of the same account, another account: their
		// event ids are no cursor here, and they see none of these events.
		b.order(t, b.live, b.product(t, singleBerlin).ID)
		liveEv := b.allEvents(t, b.live)
		other, _ := b.newAccount(t, "Other AG", account.Test)
		b.order(t, other, b.product(t, singleBerlin).ID)
		otherEv := b.allEvents(t, other)
		if len(liveEv) != 1 || len(otherEv) != 1 {
			t.Fatalf("live %d, other %d events", len(liveEv), len(otherEv))
		}
		for _, c := range []struct {
			req   app.EventsRequest
			field string
		}{
			{app.EventsRequest{StartingAfter: liveEv[0].ID}, "starting_after"},
			{app.EventsRequest{EndingBefore: otherEv[0].ID}, "ending_before"},
			{app.EventsRequest{StartingAfter: "farebox-event-nope"}, "starting_after"},
			{app.EventsRequest{StartingAfter: p1.Data[0].ID, EndingBefore: p1.Data[1].ID}, "ending_before"},
			{app.EventsRequest{Limit: "0"}, "limit"},
			{app.EventsRequest{Limit: "101"}, "limit"},
			{app.EventsRequest{Limit: "10x"}, "limit"},
			{app.EventsRequest{Limit: "+5"}, "limit"},
			{app.EventsRequest{Limit: "99999999999999999999"}, "limit"},
			{app.EventsRequest{Type: "order.deleted"}, "type"},
			{app.EventsRequest{CreatedGTE: "yesterday"}, "created[gte]"},
			{app.EventsRequest{CreatedLT: "2026-06-15"}, "created[lt]"},
		} {
			_, err := b.app.Events(b.ctx, p, c.req)
			wantFields(t, wantErr(t, err, apperr.Invalid, "invalid_parameter"), c.field)
		}
	})
}

// TestEventRetention: events older than event.Retention are pruned by the
// maintenance job, newer ones stay, and the sequence never restarts.
func TestEventRetention(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		b.order(t, b.live, b.product(t, singleBerlin).ID)
		b.clock.Advance(time.Hour)
		b.order(t, b.live, b.product(t, singleBerlin).ID)
		b.clock.Advance(event.Retention - time.Hour)
		if _, n, err := b.app.EventMaintenance(b.ctx); err != nil || n != 0 {
			t.Fatalf("at exactly the retention period: pruned %d, %v", n, err)
		}
		b.clock.Advance(time.Microsecond)
		if _, n, err := b.app.EventMaintenance(b.ctx); err != nil || n != 1 {
			t.Fatalf("after it: pruned %d, %v", n, err)
		}
		b.order(t, b.live, b.product(t, singleBerlin).ID)
		evs := b.allEvents(t, b.live)
		if len(evs) != 2 || evs[0].Sequence != 2 || evs[1].Sequence != 3 {
			t.Errorf("after pruning: %+v", evs)
		}
	})
}

// TestEventPartsStoredOnce: the products and areas an event object shows
// are stored once as parts (the stored order.created is a fraction of the
// Order), and the list puts them back byte for byte, also on an App that
// has not seen them yet (another instance).
func TestEventPartsStoredOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		o := b.order(t, b.live, b.product(t, singleBerlin).ID, b.product(t, monthly).ID)
		full, err := b.app.OrderResponse(b.ctx, o, 9, false)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(full)
		stored, err := b.store.Read().EventsOf(b.ctx, o.ID)
		if err != nil || len(stored) != 1 {
			t.Fatalf("stored events of the order: %d %v", len(stored), err)
		}
		if n := len(stored[0].Object); n*3 > len(want) || !strings.Contains(string(stored[0].Object), `{"<part>":"`) {
			t.Errorf("stored object has %d bytes for an Order of %d: %s", n, len(want), stored[0].Object)
		}
		fresh := app.New(app.Options{Store: b.store, Clock: b.clock, IDPrefix: "farebox"})
		for _, a := range []*app.App{b.app, fresh} {
			pg, err := a.Events(b.ctx, b.live, app.EventsRequest{})
			if err != nil || len(pg.Events) != 1 || string(pg.Events[0].Object) != string(want) {
				t.Errorf("listed object differs: %v\n got %s\nwant %s", err, pg.Events[0].Object, want)
			}
		}
	})
}

// TestEventPartMarkerCannotBeForged: a traveller's name that spells a part
// placeholder (with the hash of a real part) comes back as sent, not
// expanded. (Raw JSON a partner sends, such as tariff settings, is safe for
// the same reason: json.Marshal writes its "<" as \u003c.)
func TestEventPartMarkerCannotBeForged(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		o := b.order(t, b.live, b.product(t, singleBerlin).ID)
		stored, err := b.store.Read().EventsOf(b.ctx, o.ID)
		if err != nil || len(stored) != 1 {
			t.Fatal(len(stored), err)
		}
		obj := string(stored[0].Object)
		i := strings.Index(obj, `{"<part>":"`)
		if i < 0 {
			t.Fatalf("no part in %s", obj)
		}
		forged := obj[i : i+len(`{"<part>":"`)+32+2]
		name, _ := json.Marshal(forged)
		medium := `{"photo_id_lite":{"first_name":` + string(name) + `,"last_name":"Mustermann","birth_date":"1990-01-01"}}`
		tk := b.activate(t, o.Coupons[0].ID, app.ActivationRequest{IdentificationMedium: json.RawMessage(medium), Version: 9})
		want, err := (*app.Wallets)(nil).TicketResponse(b.ticket(t, tk.ID))
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		pg, err := b.app.Events(b.ctx, b.live, app.EventsRequest{Type: "ticket.issued"})
		if err != nil || len(pg.Events) != 1 || string(pg.Events[0].Object) != string(wantJSON) {
			t.Errorf("ticket.issued %v\n got %s\nwant %s", err, pg.Events[0].Object, wantJSON)
		}
	})
}
