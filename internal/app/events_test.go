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
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
)

// allEvents lists every event of p, paging backwards with starting_after
// (limit 7, so several pages), oldest first.
func (b *testBundle) allEvents(t *testing.T, p account.Principal) []events.EventJSON {
	t.Helper()
	var out []events.EventJSON
	req := events.Request{Limit: "7"}
	for {
		page, err := b.events.List(b.ctx, p, req)
		if err != nil {
			t.Fatal(err)
		}
		l := events.Response(page)
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

func (l *eventLog) next(t *testing.T) []events.EventJSON {
	t.Helper()
	var out []events.EventJSON
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
			v, err := app.TicketResponse(b.ticket(t, id), (*wallets.Service)(nil).Offer)
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
		if _, err := b.app.SetTariffSettings(b.ctx, idempotency.Claim{}, month.ID, json.RawMessage(berlinTariff)); err != nil {
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
		if err := b.app.Reorder(b.ctx, idempotency.Claim{}, b.live, subID, ""); err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.SubscriptionCycleOrdered, subID, sub(subID)})
		b.clock.Set(berlin(2026, 6, 24, 9, 0, 0)) // July is ordered: its ticket can be obtained at any time
		act, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, month.ID, app.ActivationRequest{ReactivationKey: *june.ReactivationKey, Version: 9})
		if err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.SubscriptionReactivated, subID, sub(subID)}, wantEvent{event.TicketIssued, act.TicketID, ticket(act.TicketID)})
		if _, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, month.ID, app.ActivationRequest{ReactivationKey: *june.ReactivationKey, Version: 9}); err != nil {
			t.Fatal(err)
		}
		log.expect(t)

		// coupon.restored (the original coupon, now naming its replacement);
		// activating the replacement is coupon.activated + ticket.issued.
		_, restored, err := b.app.Restore(b.ctx, idempotency.Claim{}, b.live, o.ID, app.RestoreRequest{RestoreSecret: o.RestoreSecret, CouponIDs: []string{single.ID}})
		if err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.CouponRestored, single.ID, coupon(single.ID)})
		act, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, restored[0].ID, app.ActivationRequest{Version: 9})
		if err != nil {
			t.Fatal(err)
		}
		log.expect(t, wantEvent{event.CouponActivated, restored[0].ID, coupon(restored[0].ID)}, wantEvent{event.TicketIssued, act.TicketID, ticket(act.TicketID)})

		// subscription.cancelled once; subscription.ended once, when the
		// maintenance job sees the end has passed.
		b.clock.Set(berlin(2026, 7, 5, 9, 0, 0))
		if ok, err := b.app.CancelSubscription(b.ctx, idempotency.Claim{}, b.live, subID); err != nil || !ok {
			t.Fatal(ok, err)
		}
		// Its object is the DELETE's answer: the Subscription and its receipt.
		cancelled, err := b.app.CancelledSubscription(b.ctx, b.live, subID)
		if err != nil || cancelled.CancellationReceipt == nil {
			t.Fatal(cancelled, err)
		}
		log.expect(t, wantEvent{event.SubscriptionCancelled, subID, cancelled})
		if _, err := b.app.CancelSubscription(b.ctx, idempotency.Claim{}, b.live, subID); err != nil {
			t.Fatal(err)
		}
		if n, _, err := b.events.Maintain(b.ctx); err != nil || n != 0 {
			t.Fatalf("before the end: %d ended, %v", n, err)
		}
		log.expect(t)
		b.clock.Set(berlin(2026, 8, 1, 0, 0, 0))
		if n, _, err := b.events.Maintain(b.ctx); err != nil || n != 1 {
			t.Fatalf("at the end: %d ended, %v", n, err)
		}
		log.expect(t, wantEvent{event.SubscriptionEnded, subID, sub(subID)})
		if n, _, err := b.events.Maintain(b.ctx); err != nil || n != 0 {
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
		_, err := b.app.PlaceOrder(b.ctx, idempotency.Claim{}, b.live, app.OrderRequest{ProductIDs: []string{"farebox-product-nope"}})
		wantErr(t, err, apperr.Unprocessable, "invalid_product_ids")
		c := b.order(t, b.live, b.product(t, singleBerlin).ID).Coupons[0]
		log.next(t)
		_, err = b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c.ID, app.ActivationRequest{IdentificationMedium: json.RawMessage(`{"photo_id_lite":{}}`), Version: 9})
		if apperr.KindOf(err) != apperr.Unprocessable {
			t.Fatalf("bad medium: %v", err)
		}
		_, err = b.app.CancelSubscription(b.ctx, idempotency.Claim{}, b.live, "farebox-subscription-nope")
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
		if _, err := b.app.PlaceOrder(b.ctx, idempotency.Claim{}, b.live, app.OrderRequest{ProductIDs: []string{b.product(t, monthly).ID}}); err == nil {
			t.Fatal("an order whose event cannot be written succeeded")
		}
		if after := b.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the failed order left rows: %v, before %v", after, before)
		}
		if _, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, c.ID, activation("")); err == nil {
			t.Fatal("an activation whose event cannot be written succeeded")
		}
		if d, err := b.app.Coupon(b.ctx, c.ID); err != nil || d.Coupon.Activated || b.count(t, "tickets") != 0 {
			t.Errorf("the failed activation changed the coupon: %+v %v", d.Coupon, err)
		}
	})
}

// TestEventPartsStoredOnce: the products and areas an event object shows
// are stored once as parts (the stored order.created is a fraction of the
// Order), and the list puts them back byte for byte, also on an events
// service that has not seen them yet (another instance).
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
		fresh := events.New(store.NewView[events.Queries](b.store), b.clock, b.store.SettledEventSeq, b.app.EndSubscriptions)
		for _, ev := range []*events.Service{b.events, fresh} {
			pg, err := ev.List(b.ctx, b.live, events.Request{})
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
		want, err := app.TicketResponse(b.ticket(t, tk.ID), (*wallets.Service)(nil).Offer)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		pg, err := b.events.List(b.ctx, b.live, events.Request{Type: "ticket.issued"})
		if err != nil || len(pg.Events) != 1 || string(pg.Events[0].Object) != string(wantJSON) {
			t.Errorf("ticket.issued %v\n got %s\nwant %s", err, pg.Events[0].Object, wantJSON)
		}
	})
}
