package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceOrders(t *testing.T) { ordersConformance.run(t) }

// ordersConformance: orders.go (orders, coupons, billable items).
var ordersConformance = conformanceCases{
	"InsertOrder": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		ref, clock := "ref-1", "clock-1"
		o := ticketing.Order{ID: "order-1", AccountID: fxAccount, Environment: account.Test, OptionalOrderReference: &ref,
			RestoreSecret: "secret", CreatedAt: fxAt.Add(123456789 * time.Nanosecond)}
		f.write(func(q store.Q) error { return q.InsertTestClock(f.ctx, clockRecord(clock, account.Test, fxAt)) })
		o.TestClockID = &clock
		want := o
		want.CreatedAt = o.CreatedAt.Truncate(time.Microsecond) // both engines keep microseconds
		checkInsert(t, f, want, func(q store.Q) error { return q.InsertOrder(f.ctx, o) },
			func(q store.Q) (ticketing.Order, error) { return q.Order(f.ctx, fxAccount, account.Test, o.ID) })
	},
	"Order": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		o := f.order(fxAccount, account.Live, "order-1", fxAt, 3)
		got, err := f.read().Order(f.ctx, fxAccount, account.Live, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(o, got); d != "" {
			t.Errorf("Order with its coupons in position order (-want +got):\n%s", d)
		}
		wantOwnOnly(t, account.Live, o.ID, store.CodeOrderNotFound, lookup(f.ctx, f.read().Order))
	},
	"Orders": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		for i, id := range []string{"o-a", "o-b", "o-c", "o-d", "o-e"} {
			o := f.order(fxAccount, account.Live, id, fxAt.Add(time.Duration(i)*time.Minute), 2)
			want = append(want, list.Cursor{CreatedAt: o.CreatedAt, ID: o.ID})
		}
		f.order(fxOther, account.Live, "o-other", fxAt.Add(time.Minute), 1)
		f.order(fxAccount, account.Test, "o-test", fxAt.Add(time.Minute), 1)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Orders(f.ctx, ticketing.OrderFilter{Query: lq})
			for _, o := range p.Items {
				if len(o.Coupons) != 2 || o.Coupons[0].Position != 0 || o.Coupons[1].Position != 1 {
					t.Errorf("order %s listed with coupons %+v, want its two in position order", o.ID, o.Coupons)
				}
			}
			return cursors(p.Items, orderCursor), p.HasMore, err
		})
		// The reference filter.
		ref := "ref-x"
		f.write(func(q store.Q) error {
			return q.InsertOrder(f.ctx, ticketing.Order{ID: "o-ref", AccountID: fxAccount, Environment: account.Live,
				OptionalOrderReference: &ref, RestoreSecret: "s", CreatedAt: fxAt})
		})
		p, err := f.read().Orders(f.ctx, ticketing.OrderFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10},
			OptionalOrderReference: &ref})
		if err != nil || len(p.Items) != 1 || p.Items[0].ID != "o-ref" || len(p.Items[0].Coupons) != 0 {
			t.Errorf("Orders with reference %s = %+v, %v; want o-ref alone, without coupons", ref, p.Items, err)
		}
	},
	"InsertCoupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		o := f.order(fxAccount, account.Test, "order-1", fxAt, 0)
		sub, item := f.subscription(fxAccount, account.Test, "sub-1", fxAt, 0), f.item(fxAccount, account.Test, "item-1", fxAt, nil)
		orig := f.order(fxAccount, account.Test, "order-0", fxAt, 1).Coupons[0].ID
		c := ticketing.Coupon{ID: "coupon-1", OrderID: o.ID, Position: 0, AccountID: fxAccount, Environment: account.Test, ProductID: fxProduct,
			SubscriptionID: &sub.ID, BillableItemID: &item.ID, OriginalCouponID: &orig, TariffSettings: json.RawMessage(`{"zone":"A"}`),
			Activated: true, CreatedAt: fxAt}
		checkInsert(t, f, c, func(q store.Q) error { return q.InsertCoupon(f.ctx, c) },
			func(q store.Q) (ticketing.Coupon, error) { return q.Coupon(f.ctx, c.ID) })
	},
	"Coupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		o := f.order(fxOther, account.Live, "order-1", fxAt, 2)
		checkByID(t, o.Coupons[1], o.Coupons[1].ID, store.CodeCouponNotFound, func(id string) (ticketing.Coupon, error) { return f.read().Coupon(f.ctx, id) })
	},
	"SetCouponTariffSettings": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		for _, ts := range []json.RawMessage{json.RawMessage(`{"zone":"B"}`), nil} {
			f.write(func(q store.Q) error { return q.SetCouponTariffSettings(f.ctx, c[0].ID, ts) })
			got, err := f.read().Coupon(f.ctx, c[0].ID)
			if err != nil || string(got.TariffSettings) != string(ts) {
				t.Errorf("tariff settings %s after setting %s (%v)", got.TariffSettings, ts, err)
			}
		}
		wantCouponsUnchanged(t, f, c[1])
	},
	"MarkCouponActivated": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		for range 2 { // idempotent
			f.write(func(q store.Q) error { return q.MarkCouponActivated(f.ctx, c[0].ID) })
			if got, err := f.read().Coupon(f.ctx, c[0].ID); err != nil || !got.Activated {
				t.Errorf("coupon after MarkCouponActivated: %+v, %v", got, err)
			}
		}
		wantCouponsUnchanged(t, f, c[1])
	},
	"SetCouponRestored": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		f.write(func(q store.Q) error { return q.SetCouponRestored(f.ctx, c[0].ID, "coupon-new") })
		if got, err := f.read().Coupon(f.ctx, c[0].ID); err != nil || got.RestoredCouponID == nil || *got.RestoredCouponID != "coupon-new" {
			t.Errorf("coupon after SetCouponRestored: %+v, %v", got, err)
		}
		wantCouponsUnchanged(t, f, c[1])
	},
	"InsertBillableItem": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Test, "order-1", fxAt, 1).Coupons[0]
		b := ticketing.BillableItem{ID: "item-1", AccountID: fxAccount, Environment: account.Test, ProductID: fxProduct, Description: "Ticket",
			AmountCents: 250, Currency: "EUR", VATRateBP: 700, CouponID: &c.ID, OrderedAt: fxAt}
		checkInsert(t, f, b, func(q store.Q) error { return q.InsertBillableItem(f.ctx, b) }, func(q store.Q) (ticketing.BillableItem, error) {
			got, err := q.BillableItem(f.ctx, fxAccount, account.Test, b.ID)
			return got.BillableItem, err
		})
	},
	"CountRows": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.order(fxAccount, account.Live, "order-1", fxAt, 3)
		f.order(fxOther, account.Test, "order-2", fxAt, 0)
		for table, want := range map[string]int{"orders": 2, "coupons": 3, "tickets": 0} {
			if n, err := f.read().CountRows(f.ctx, table); err != nil || n != want {
				t.Errorf("CountRows(%s) = %d, %v; want %d", table, n, err, want)
			}
		}
		if _, err := f.read().CountRows(f.ctx, "accounts; DROP TABLE orders"); err == nil {
			t.Error("CountRows of a table it does not list answered")
		}
	},
	"LockCoupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		f.write(func(q store.Q) error {
			if err := q.LockCoupon(f.ctx, c.ID); err != nil {
				return err
			}
			return q.LockCoupon(f.ctx, "coupon-x") // an unknown coupon locks nothing, and is no error
		})
		wantCouponsUnchanged(t, f, c)
	},
	"LockedCoupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		f.write(func(q store.Q) error {
			got, err := q.LockedCoupon(f.ctx, c.ID)
			if err != nil || !cmp.Equal(got, c) {
				t.Errorf("LockedCoupon = %+v, %v; want %+v", got, err, c)
			}
			_, err = q.LockedCoupon(f.ctx, "coupon-x")
			wantCode(t, "an unknown coupon", err, apperr.NotFound, store.CodeCouponNotFound)
			return nil
		})
	},
	"Coupons": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		for i, id := range []string{"o-a", "o-b", "o-c"} {
			for _, c := range f.order(fxAccount, account.Live, id, fxAt.Add(time.Duration(i)*time.Minute), 2).Coupons {
				want = append(want, couponCursor(c)) // coupons of one order share its time: the id breaks the tie
			}
		}
		f.order(fxOther, account.Live, "o-other", fxAt, 1)
		f.order(fxAccount, account.Test, "o-test", fxAt, 1)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Coupons(f.ctx, ticketing.CouponFilter{Query: lq})
			return cursors(p.Items, couponCursor), p.HasMore, err
		})
		f.write(func(q store.Q) error {
			if err := q.MarkCouponActivated(f.ctx, "o-a-c0"); err != nil {
				return err
			}
			if err := q.MarkCouponActivated(f.ctx, "o-b-c1"); err != nil {
				return err
			}
			return q.SetCouponRestored(f.ctx, "o-b-c1", "o-c-c0")
		})
		for state, ids := range map[ticketing.CouponState][]string{
			ticketing.CouponNotActivated: {"o-c-c1", "o-c-c0", "o-b-c0", "o-a-c1"},
			ticketing.CouponActivated:    {"o-a-c0"},
			ticketing.CouponRestored:     {"o-b-c1"},
		} {
			p, err := f.read().Coupons(f.ctx, ticketing.CouponFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}, State: state})
			if got := cursorIDs(cursors(p.Items, couponCursor)); err != nil || !cmp.Equal(got, ids) {
				t.Errorf("Coupons in state %s = %v, %v; want %v", state, got, err, ids)
			}
		}
	},
}

// wantCouponsUnchanged fails unless the stored coupons are as cs: a change
// of one coupon touches no other.
func wantCouponsUnchanged(t *testing.T, f *fixture, cs ...ticketing.Coupon) {
	t.Helper()
	for _, c := range cs {
		if got, err := f.read().Coupon(f.ctx, c.ID); err != nil || !cmp.Equal(got, c) {
			t.Errorf("coupon %s changed: %+v, %v; want %+v", c.ID, got, err, c)
		}
	}
}

func TestConformanceSubscriptions(t *testing.T) { subscriptionsConformance.run(t) }

// subscriptionsConformance: subscriptions.go (subscriptions and cycles).
var subscriptionsConformance = conformanceCases{
	"InsertSubscription": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		orig, clock := "sub-0", "clock-1"
		f.subscription(fxAccount, account.Test, orig, fxAt, 0)
		cancel, ends := fxAt.Add(time.Hour), fxAt.Add(30*24*time.Hour)
		sub := ticketing.Subscription{ID: "sub-1", AccountID: fxAccount, Environment: account.Test, ProductID: fxProduct,
			OriginalSubscriptionID: &orig, CancelRequestedAt: &cancel, EndsAt: &ends, CreatedAt: fxAt, TestClockID: &clock}
		f.write(func(q store.Q) error { return q.InsertTestClock(f.ctx, clockRecord(clock, account.Test, fxAt)) })
		checkInsert(t, f, sub, func(q store.Q) error { return q.InsertSubscription(f.ctx, sub) },
			func(q store.Q) (ticketing.Subscription, error) {
				return q.Subscription(f.ctx, fxAccount, account.Test, sub.ID)
			})
	},
	"Subscription": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 3)
		for _, c := range []struct {
			acct string
			env  account.Environment
		}{{fxAccount, account.Live}, {"", account.Test}} { // "" skips the tenant check
			got, err := f.read().Subscription(f.ctx, c.acct, c.env, sub.ID)
			if d := cmp.Diff(sub, got); err != nil || d != "" {
				t.Errorf("Subscription(%q, %s) with its cycles (%v; -want +got):\n%s", c.acct, c.env, err, d)
			}
		}
		wantOwnOnly(t, account.Live, sub.ID, store.CodeSubscriptionNotFound, lookup(f.ctx, f.read().Subscription))
		_, err := f.read().Subscription(f.ctx, "", account.Live, "sub-x")
		wantCode(t, "an unknown subscription without a tenant", err, apperr.NotFound, store.CodeSubscriptionNotFound)
	},
	"Subscriptions": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		for i, id := range []string{"s-a", "s-b", "s-c", "s-d", "s-e"} {
			sub := f.subscription(fxAccount, account.Live, id, fxAt.Add(time.Duration(i)*time.Minute), 1)
			want = append(want, subscriptionCursor(sub))
		}
		f.subscription(fxOther, account.Live, "s-other", fxAt, 0)
		f.subscription(fxAccount, account.Test, "s-test", fxAt, 0)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Subscriptions(f.ctx, ticketing.SubscriptionFilter{Query: lq})
			for _, sub := range p.Items {
				if len(sub.Cycles) != 1 {
					t.Errorf("subscription %s listed with cycles %+v, want its one", sub.ID, sub.Cycles)
				}
			}
			return cursors(p.Items, subscriptionCursor), p.HasMore, err
		})
		// States at a time: s-a ended, s-b cancelled (ends later), s-c restored.
		ended, later := fxAt.Add(time.Hour), fxAt.Add(48*time.Hour)
		nowAt := fxAt.Add(24 * time.Hour)
		f.write(func(q store.Q) error {
			if err := q.UpdateSubscriptionEnd(f.ctx, ticketing.Subscription{ID: "s-a", CancelRequestedAt: &fxAt, EndsAt: &ended}); err != nil {
				return err
			}
			if err := q.UpdateSubscriptionEnd(f.ctx, ticketing.Subscription{ID: "s-b", CancelRequestedAt: &fxAt, EndsAt: &later}); err != nil {
				return err
			}
			return q.SetSubscriptionRestored(f.ctx, "s-c", "s-e")
		})
		lq := list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}
		for _, c := range []struct {
			f    ticketing.SubscriptionFilter
			want []string
		}{
			{ticketing.SubscriptionFilter{Query: lq, State: ticketing.SubscriptionActive, Now: nowAt}, []string{"s-e", "s-d"}},
			{ticketing.SubscriptionFilter{Query: lq, State: ticketing.SubscriptionCancelled, Now: nowAt}, []string{"s-b"}},
			{ticketing.SubscriptionFilter{Query: lq, State: ticketing.SubscriptionEnded, Now: nowAt}, []string{"s-a"}},
			{ticketing.SubscriptionFilter{Query: lq, State: ticketing.SubscriptionRestored, Now: nowAt}, []string{"s-c"}},
			{ticketing.SubscriptionFilter{Query: lq, EndsGTE: &nowAt}, []string{"s-b"}},
			{ticketing.SubscriptionFilter{Query: lq, EndsLT: &nowAt}, []string{"s-a"}},
		} {
			p, err := f.read().Subscriptions(f.ctx, c.f)
			if got := cursorIDs(cursors(p.Items, subscriptionCursor)); err != nil || !cmp.Equal(got, c.want) {
				t.Errorf("Subscriptions %s ends [%v, %v) = %v, %v; want %v", c.f.State, c.f.EndsGTE, c.f.EndsLT, got, err, c.want)
			}
		}
	},
	"LockSubscription": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 1)
		f.write(func(q store.Q) error {
			if err := q.LockSubscription(f.ctx, sub.ID); err != nil {
				return err
			}
			return q.LockSubscription(f.ctx, "sub-x") // nothing to lock, no error
		})
		if got, err := f.read().Subscription(f.ctx, fxAccount, account.Live, sub.ID); err != nil || !cmp.Equal(got, sub) {
			t.Errorf("subscription changed by its lock: %+v, %v", got, err)
		}
	},
	"UpdateSubscriptionEnd": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		other := f.subscription(fxAccount, account.Live, "sub-2", fxAt, 0)
		cancel, ends := fxAt.Add(time.Hour), fxAt.Add(72*time.Hour)
		for _, c := range []struct{ cancel, ends *time.Time }{{&cancel, &ends}, {nil, nil}} { // set, then cleared (a revoked cancellation)
			sub.CancelRequestedAt, sub.EndsAt = c.cancel, c.ends
			f.write(func(q store.Q) error { return q.UpdateSubscriptionEnd(f.ctx, sub) })
			if got, err := f.read().Subscription(f.ctx, fxAccount, account.Live, sub.ID); err != nil || !cmp.Equal(got, sub) {
				t.Errorf("after UpdateSubscriptionEnd(%v, %v): %+v, %v", c.cancel, c.ends, got, err)
			}
		}
		if got, err := f.read().Subscription(f.ctx, fxAccount, account.Live, other.ID); err != nil || !cmp.Equal(got, other) {
			t.Errorf("another subscription changed: %+v, %v", got, err)
		}
	},
	"SetSubscriptionRestored": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		f.write(func(q store.Q) error { return q.SetSubscriptionRestored(f.ctx, sub.ID, "sub-2") })
		got, err := f.read().Subscription(f.ctx, fxAccount, account.Live, sub.ID)
		if err != nil || got.RestoredSubscriptionID == nil || *got.RestoredSubscriptionID != "sub-2" {
			t.Errorf("after SetSubscriptionRestored: %+v, %v", got, err)
		}
	},
	"InsertCycle": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		tk := f.ticket(c, "ticket-1", fxAt, nil)
		item := f.item(fxAccount, account.Live, "item-1", fxAt, nil)
		cy := ticketing.Cycle{ID: "cycle-1", SubscriptionID: sub.ID, ProductID: fxProduct, ValidFrom: fxAt,
			ValidUntil: fxAt.Add(30*24*time.Hour - time.Second), Ordered: true, CouponActivated: true, BillableItemID: &item.ID,
			TicketID: &tk.ID, CreatedAt: fxAt}
		checkInsert(t, f, []ticketing.Cycle{cy}, func(q store.Q) error { return q.InsertCycle(f.ctx, cy) },
			func(q store.Q) ([]ticketing.Cycle, error) { return q.Cycles(f.ctx, sub.ID) })
	},
	"UpdateCycle": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 2)
		item := f.item(fxAccount, account.Live, "item-1", fxAt, nil)
		cy := sub.Cycles[0]
		cy.ValidFrom, cy.ValidUntil, cy.Ordered, cy.CouponActivated, cy.BillableItemID = fxAt, fxAt.Add(time.Hour), true, true, &item.ID
		cy.ProductID, cy.CreatedAt = "ignored", fxAt.Add(time.Hour) // not mutable
		f.write(func(q store.Q) error { return q.UpdateCycle(f.ctx, cy) })
		cy.ProductID, cy.CreatedAt = sub.Cycles[0].ProductID, sub.Cycles[0].CreatedAt
		if got, err := f.read().Cycles(f.ctx, sub.ID); err != nil || !cmp.Equal(got, []ticketing.Cycle{cy, sub.Cycles[1]}) {
			t.Errorf("Cycles after UpdateCycle = %+v, %v; want %+v then the other unchanged", got, err, cy)
		}
	},
	"Cycles": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 3) // y0, y1, y2 undated
		f.subscription(fxAccount, account.Live, "sub-2", fxAt, 2)
		y1, y2 := sub.Cycles[1], sub.Cycles[2]
		y2.ValidFrom, y2.ValidUntil = fxAt, fxAt.Add(time.Hour)
		y1.ValidFrom, y1.ValidUntil = fxAt.Add(time.Hour), fxAt.Add(2*time.Hour)
		f.write(func(q store.Q) error {
			if err := q.UpdateCycle(f.ctx, y1); err != nil {
				return err
			}
			return q.UpdateCycle(f.ctx, y2)
		})
		// Dated cycles first by their start, then the undated ones.
		if got, err := f.read().Cycles(f.ctx, sub.ID); err != nil || !cmp.Equal(got, []ticketing.Cycle{y2, y1, sub.Cycles[0]}) {
			t.Errorf("Cycles = %+v, %v; want y2, y1, y0", got, err)
		}
		if got, err := f.read().Cycles(f.ctx, "sub-x"); err != nil || len(got) != 0 {
			t.Errorf("Cycles of an unknown subscription = %+v, %v", got, err)
		}
	},
	"DeleteUnorderedCycle": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 2)
		ordered := sub.Cycles[1]
		ordered.Ordered = true
		f.write(func(q store.Q) error {
			if err := q.UpdateCycle(f.ctx, ordered); err != nil {
				return err
			}
			if err := q.DeleteUnorderedCycle(f.ctx, sub.Cycles[0].ID); err != nil {
				return err
			}
			return q.DeleteUnorderedCycle(f.ctx, ordered.ID) // ordered cycles are never deleted
		})
		if got, err := f.read().Cycles(f.ctx, sub.ID); err != nil || !cmp.Equal(got, []ticketing.Cycle{ordered}) {
			t.Errorf("Cycles after DeleteUnorderedCycle = %+v, %v; want the ordered one alone", got, err)
		}
	},
}

func TestConformanceTickets(t *testing.T) { ticketsConformance.run(t) }

// ticketsConformance: tickets.go (tickets and their inspection keys).
var ticketsConformance = conformanceCases{
	"InsertTicket": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		key, used, reason, inv := "react-2", "react-1", "revoked", fxAt.Add(time.Hour)
		tk := f.ticket(c, "ticket-1", fxAt, func(tk *ticketing.Ticket) {
			tk.CycleID, tk.TariffSettings, tk.ReactivationKey, tk.UsedReactivationKey = "cycle-1", json.RawMessage(`{"zone":"A"}`), &key, &used
			tk.InvalidatedAt, tk.RevokedReason, tk.InspectionKeyID, tk.VDVNumber = &inv, &reason, 7, 4242
		})
		if got, err := f.read().Ticket(f.ctx, tk.ID); err != nil || !cmp.Equal(got, tk) {
			t.Errorf("Ticket after InsertTicket = %+v, %v; want %+v", got, err, tk)
		}
		// A second ticket for the same coupon and cycle (concurrent activations).
		dup := tk
		dup.ID, dup.ReactivationKey, dup.UsedReactivationKey = "ticket-2", nil, nil
		err := s.Write(f.ctx, func(q store.Q) error { return q.InsertTicket(f.ctx, dup) })
		wantCode(t, "a second ticket of the coupon's cycle", err, apperr.Conflict, store.CodeConflict)
	},
	"Ticket": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxOther, account.Test, "order-1", fxAt, 1).Coupons[0]
		tk := f.ticket(c, "ticket-1", fxAt, nil)
		checkByID(t, tk, tk.ID, store.CodeTicketNotFound, func(id string) (ticketing.Ticket, error) { return f.read().Ticket(f.ctx, id) })
	},
	"TicketsOfCoupon": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cs := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		late := f.ticket(cs[0], "ticket-b", fxAt.Add(time.Hour), func(tk *ticketing.Ticket) { tk.CycleID = "y1" })
		early := f.ticket(cs[0], "ticket-c", fxAt, func(tk *ticketing.Ticket) { tk.CycleID = "y0" })
		f.ticket(cs[1], "ticket-a", fxAt, nil)
		if got, err := f.read().TicketsOfCoupon(f.ctx, cs[0].ID); err != nil || !cmp.Equal(got, []ticketing.Ticket{early, late}) {
			t.Errorf("TicketsOfCoupon = %v, %v; want its two oldest first", ticketIDs(got), err)
		}
		if got, err := f.read().TicketsOfCoupon(f.ctx, "coupon-x"); err != nil || len(got) != 0 {
			t.Errorf("TicketsOfCoupon of an unknown coupon = %v, %v", ticketIDs(got), err)
		}
	},
	"RevokeTicket": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0]
		tk := f.ticket(c, "ticket-1", fxAt, nil)
		at := fxAt.Add(time.Hour)
		for i, want := range []bool{true, false} { // the second finds it invalid already
			var revoked bool
			f.write(func(q store.Q) (err error) {
				revoked, err = q.RevokeTicket(f.ctx, tk.ID, "lost", at.Add(time.Duration(i)*time.Hour))
				return err
			})
			if revoked != want {
				t.Errorf("RevokeTicket #%d = %v, want %v", i+1, revoked, want)
			}
		}
		got, err := f.read().Ticket(f.ctx, tk.ID)
		if err != nil || got.InvalidatedAt == nil || !got.InvalidatedAt.Equal(at) || got.RevokedReason == nil || *got.RevokedReason != "lost" {
			t.Errorf("ticket after RevokeTicket: %+v, %v; want invalid at %v for lost (the first revocation's)", got, err, at)
		}
		f.write(func(q store.Q) error {
			revoked, err := q.RevokeTicket(f.ctx, "ticket-x", "lost", at)
			if revoked || err != nil {
				t.Errorf("RevokeTicket of an unknown ticket = %v, %v", revoked, err)
			}
			return nil
		})
	},
	"StampTicketKeysIssuedBefore": func(t *testing.T, s *store.Store) {
		// Unstamped, live, issued before, valid at: t-old and t-old-revoked (revoked tickets are stamped too).
		checkKeyChange(t, s, 2, map[string]uint16{"t-old": 3, "t-old-revoked": 3, "t-new": 0, "t-expired": 0, "t-test": 0, "t-stamped": 9},
			func(ctx context.Context, q store.Q) (int64, error) {
				return q.StampTicketKeysIssuedBefore(ctx, account.Live, 3, fxAt.Add(90*time.Minute), fxAt.Add(time.Hour))
			})
	},
	"StampTicketKeys": func(t *testing.T, s *store.Store) {
		checkKeyChange(t, s, 3, map[string]uint16{"t-old": 3, "t-old-revoked": 3, "t-new": 3, "t-expired": 0, "t-test": 0, "t-stamped": 9},
			func(ctx context.Context, q store.Q) (int64, error) {
				return q.StampTicketKeys(ctx, account.Live, 3, fxAt.Add(time.Hour))
			})
	},
	"TicketsSignedWith": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		keyTickets(f)
		f.write(func(q store.Q) error { _, err := q.StampTicketKeys(f.ctx, account.Live, 3, fxAt); return err })
		got, err := f.read().TicketsSignedWith(f.ctx, 3, fxAt.Add(time.Hour))
		// Valid at, not invalidated, oldest first.
		if ids := ticketIDs(got); err != nil || !cmp.Equal(ids, []string{"t-old", "t-new"}) {
			t.Errorf("TicketsSignedWith(3) = %v, %v; want t-old, t-new", ids, err)
		}
	},
	"ResignTickets": func(t *testing.T, s *store.Store) {
		// The revoked ticket keeps the old key.
		checkKeyChange(t, s, 2, map[string]uint16{"t-old": 4, "t-new": 4, "t-old-revoked": 3, "t-expired": 0, "t-test": 0, "t-stamped": 9},
			func(ctx context.Context, q store.Q) (int64, error) {
				if _, err := q.StampTicketKeys(ctx, account.Live, 3, fxAt); err != nil {
					return 0, err
				}
				return q.ResignTickets(ctx, 3, 4, fxAt.Add(time.Hour))
			})
	},
	"InspectionKeyUse": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		keyTickets(f)
		f.write(func(q store.Q) error { _, err := q.StampTicketKeys(f.ctx, account.Live, 3, fxAt); return err })
		got, err := f.read().InspectionKeyUse(f.ctx, fxAt.Add(time.Hour))
		want := map[uint16]ticketing.KeyUse{
			3: {Tickets: 2, LastValidUntil: fxAt.Add(2*time.Hour + 24*time.Hour - time.Second)}, // t-new's end
			9: {Tickets: 1, LastValidUntil: fxAt.Add(24*time.Hour - time.Second)},
		}
		if d := cmp.Diff(want, got); err != nil || d != "" {
			t.Errorf("InspectionKeyUse (%v; -want +got):\n%s", err, d)
		}
	},
	"Tickets": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		for i, c := range f.order(fxAccount, account.Live, "order-1", fxAt, 5).Coupons {
			want = append(want, ticketCursor(f.ticket(c, "ticket-"+c.ID, fxAt.Add(time.Duration(i)*time.Minute), nil)))
		}
		f.ticket(f.order(fxOther, account.Live, "order-2", fxAt, 1).Coupons[0], "t-other", fxAt, nil)
		f.ticket(f.order(fxAccount, account.Test, "order-3", fxAt, 1).Coupons[0], "t-test", fxAt, nil)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Tickets(f.ctx, ticketing.TicketFilter{Query: lq})
			return cursors(p.Items, ticketCursor), p.HasMore, err
		})
		f.write(func(q store.Q) error { _, err := q.RevokeTicket(f.ctx, "ticket-order-1-c1", "lost", fxAt); return err })
		lq := list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}
		for state, ids := range map[ticketing.TicketState][]string{
			ticketing.TicketValid:       {"ticket-order-1-c4", "ticket-order-1-c3", "ticket-order-1-c2", "ticket-order-1-c0"},
			ticketing.TicketInvalidated: {"ticket-order-1-c1"},
		} {
			p, err := f.read().Tickets(f.ctx, ticketing.TicketFilter{Query: lq, State: state})
			if got := ticketIDs(p.Items); err != nil || !cmp.Equal(got, ids) {
				t.Errorf("Tickets in state %s = %v, %v; want %v", state, got, err, ids)
			}
		}
	},
}

func ticketIDs(ts []ticketing.Ticket) []string { return cursorIDs(cursors(ts, ticketCursor)) }

// keyTickets writes the tickets the inspection key cases work on, each
// valid for a day: t-old (live, issued at fxAt), t-old-revoked (live, at
// fxAt, revoked), t-new (live, at fxAt+2h), t-expired (live, ended before
// fxAt), t-test (test environment), t-stamped (live, key 9).
func keyTickets(f *fixture) {
	f.t.Helper()
	live := f.order(fxAccount, account.Live, "order-1", fxAt, 5).Coupons
	test := f.order(fxAccount, account.Test, "order-2", fxAt, 1).Coupons
	f.ticket(live[0], "t-old", fxAt, nil)
	f.ticket(live[1], "t-old-revoked", fxAt, nil)
	f.ticket(live[2], "t-new", fxAt.Add(2*time.Hour), nil)
	f.ticket(live[3], "t-expired", fxAt.Add(-48*time.Hour), nil)
	f.ticket(test[0], "t-test", fxAt, nil)
	f.ticket(live[4], "t-stamped", fxAt, func(tk *ticketing.Ticket) { tk.InspectionKeyID = 9 })
	f.write(func(q store.Q) error { _, err := q.RevokeTicket(f.ctx, "t-old-revoked", "lost", fxAt); return err })
}

// checkKeyChange writes keyTickets, runs change in a transaction and fails
// unless it changed want tickets and each ticket has the inspection key
// keys names.
func checkKeyChange(t *testing.T, s *store.Store, want int64, keys map[string]uint16, change func(ctx context.Context, q store.Q) (int64, error)) {
	t.Helper()
	f := newFixture(t, s)
	keyTickets(f)
	var n int64
	f.write(func(q store.Q) (err error) { n, err = change(f.ctx, q); return err })
	if n != want {
		t.Errorf("%d tickets changed, want %d", n, want)
	}
	for id, kid := range keys {
		if got, err := f.read().Ticket(f.ctx, id); err != nil || got.InspectionKeyID != kid {
			t.Errorf("ticket %s key %d (%v), want %d", id, got.InspectionKeyID, err, kid)
		}
	}
}

func TestConformanceTestClocks(t *testing.T) { testClocksConformance.run(t) }

// testClocksConformance: testclocks.go (test clocks and the tickets an
// advance reaches).
var testClocksConformance = conformanceCases{
	"InsertTestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		name := "Ä clock"
		c := clockRecord("clock-1", account.Test, fxAt)
		c.Name, c.FrozenTime = &name, fxAt.Add(72*time.Hour)
		checkInsert(t, f, c, func(q store.Q) error { return q.InsertTestClock(f.ctx, c) },
			func(q store.Q) (ticketing.TestClock, error) { return q.TestClock(f.ctx, fxAccount, account.Test, c.ID) })
	},
	"TestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cs := f.clocks("clock-1", "clock-2")
		f.write(func(q store.Q) error { return q.DeleteTestClock(f.ctx, "clock-2", fxAt) })
		wantClocks(t, f, cs[0])
		wantOwnOnly(t, account.Test, cs[0].ID, store.CodeTestClockNotFound, lookup(f.ctx, f.read().TestClock))
		_, err := f.read().TestClock(f.ctx, fxAccount, account.Test, "clock-2")
		wantCode(t, "a deleted clock", err, apperr.NotFound, store.CodeTestClockNotFound)
	},
	"TestClockTime": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.clocks("clock-1")[0]
		f.write(func(q store.Q) error { return q.DeleteTestClock(f.ctx, c.ID, fxAt) }) // deleted or not: the objects on it keep its time
		if got, err := f.read().TestClockTime(f.ctx, c.ID); err != nil || !got.Equal(c.FrozenTime) || got.Location() != time.UTC {
			t.Errorf("TestClockTime = %v, %v; want %v in UTC", got, err, c.FrozenTime)
		}
		_, err := f.read().TestClockTime(f.ctx, "clock-x")
		wantCode(t, "an unknown clock", err, apperr.NotFound, store.CodeTestClockNotFound)
	},
	"LockTestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.clocks("clock-1")[0]
		f.write(func(q store.Q) error {
			if err := q.LockTestClock(f.ctx, c.ID); err != nil {
				return err
			}
			return q.LockTestClock(f.ctx, "clock-x")
		})
		wantClocks(t, f, c) // unchanged by its lock
	},
	"SetTestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cs := f.clocks("clock-1", "clock-2")
		f.write(func(q store.Q) error {
			return q.SetTestClock(f.ctx, "clock-1", fxAt.Add(24*time.Hour), ticketing.TestClockAdvancing)
		})
		cs[0].FrozenTime, cs[0].Status = fxAt.Add(24*time.Hour), ticketing.TestClockAdvancing
		wantClocks(t, f, cs...)
	},
	"SetTestClockStatus": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cs := f.clocks("clock-1", "clock-2")
		f.write(func(q store.Q) error { return q.SetTestClockStatus(f.ctx, "clock-1", ticketing.TestClockAdvancing) })
		cs[0].Status = ticketing.TestClockAdvancing // the time stays
		wantClocks(t, f, cs...)
	},
	"DeleteTestClock": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.clocks("clock-1")[0]
		f.write(func(q store.Q) error { return q.DeleteTestClock(f.ctx, c.ID, fxAt) })
		_, err := f.read().TestClock(f.ctx, fxAccount, account.Test, c.ID)
		wantCode(t, "the deleted clock", err, apperr.NotFound, store.CodeTestClockNotFound)
		if p, err := f.read().TestClocks(f.ctx, ticketing.TestClockFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Test, Limit: 5}}); err != nil || len(p.Items) != 0 {
			t.Errorf("the deleted clock is listed: %+v, %v", p.Items, err)
		}
	},
	"TestClocks": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		f.write(func(q store.Q) error {
			for i, id := range []string{"k-a", "k-b", "k-c", "k-d", "k-e", "k-deleted"} {
				c := clockRecord(id, account.Test, fxAt)
				c.CreatedAt = fxAt.Add(time.Duration(i) * time.Minute)
				if err := q.InsertTestClock(f.ctx, c); err != nil {
					return err
				}
				if id != "k-deleted" {
					want = append(want, list.Cursor{CreatedAt: c.CreatedAt, ID: id})
				}
			}
			if err := q.DeleteTestClock(f.ctx, "k-deleted", fxAt); err != nil {
				return err
			}
			other := clockRecord("k-other", account.Test, fxAt)
			other.AccountID = fxOther
			if err := q.InsertTestClock(f.ctx, other); err != nil {
				return err
			}
			return q.InsertTestClock(f.ctx, clockRecord("k-live", account.Live, fxAt))
		})
		checkList(t, s, account.Test, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.TestClocks(f.ctx, ticketing.TestClockFilter{Query: lq})
			return cursors(p.Items, func(c ticketing.TestClock) list.Cursor { return list.Cursor{CreatedAt: c.CreatedAt, ID: c.ID} }), p.HasMore, err
		})
	},
	"ClockTicketsStarted": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		clock := "clock-1"
		f.write(func(q store.Q) error { return q.InsertTestClock(f.ctx, clockRecord(clock, account.Test, fxAt)) })
		on := f.order(fxAccount, account.Test, "order-1", fxAt, 1).Coupons[0]
		off := f.order(fxAccount, account.Test, "order-2", fxAt, 1).Coupons[0]
		f.write(func(q store.Q) error {
			on.ID, on.OrderID, on.Position, on.TestClockID = "coupon-on", "order-1", 1, &clock
			return q.InsertCoupon(f.ctx, on)
		})
		for i, c := range []struct {
			coupon ticketing.Coupon
			id     string
			from   time.Time
		}{{on, "t-b", fxAt.Add(2 * time.Hour)}, {on, "t-a", fxAt.Add(24 * time.Hour)}, {on, "t-before", fxAt},
			{on, "t-after", fxAt.Add(25 * time.Hour)}, {off, "t-off", fxAt.Add(2 * time.Hour)}} {
			f.ticket(c.coupon, c.id, c.from, func(tk *ticketing.Ticket) { tk.CycleID = string(rune('a' + i)) })
		}
		// Starting after from and not after to, by id.
		got, err := f.read().ClockTicketsStarted(f.ctx, clock, fxAt, fxAt.Add(24*time.Hour))
		if err != nil || !cmp.Equal(got, []string{"t-a", "t-b"}) {
			t.Errorf("ClockTicketsStarted = %v, %v; want t-a, t-b", got, err)
		}
	},
	"NextVDVNumber": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		// Tickets holding hash-derived numbers 2 (still valid) and 3 (ended).
		f.ticket(c[0], "t-2", fxAt, func(tk *ticketing.Ticket) { tk.VDVNumber = 2 })
		f.ticket(c[1], "t-3", fxAt.Add(-72*time.Hour), func(tk *ticketing.Ticket) { tk.VDVNumber = 3 })
		var got []uint32
		for range 3 {
			f.write(func(q store.Q) error {
				n, err := q.NextVDVNumber(f.ctx, fxAt)
				got = append(got, n)
				return err
			})
		}
		if !cmp.Equal(got, []uint32{1, 3, 4}) {
			t.Errorf("NextVDVNumber = %v, want 1, 3, 4 (2 is held by a valid ticket)", got)
		}
	},
	"UnnumberedVDVTickets": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 4).Coupons
		f.ticket(c[0], "t-b", fxAt, nil)
		f.ticket(c[1], "t-a", fxAt, nil)
		f.ticket(c[2], "t-numbered", fxAt, func(tk *ticketing.Ticket) { tk.VDVNumber = 9 })
		f.ticket(c[3], "t-ended", fxAt.Add(-72*time.Hour), nil)
		for _, q := range []struct {
			products []string
			limit    int
			want     []string
		}{{[]string{fxProduct}, 10, []string{"t-a", "t-b"}}, {[]string{fxProduct}, 1, []string{"t-a"}}, {[]string{"product-x"}, 10, nil}, {nil, 10, nil}} {
			got, err := f.read().UnnumberedVDVTickets(f.ctx, q.products, fxAt, q.limit)
			if err != nil || !cmp.Equal(got, q.want) {
				t.Errorf("UnnumberedVDVTickets(%v, %d) = %v, %v; want %v", q.products, q.limit, got, err, q.want)
			}
		}
	},
	"SetVDVNumbers": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxAccount, account.Live, "order-1", fxAt, 2).Coupons
		f.ticket(c[0], "t-1", fxAt, nil)
		f.ticket(c[1], "t-2", fxAt, func(tk *ticketing.Ticket) { tk.VDVNumber = 9 })
		f.write(func(q store.Q) error { return q.SetVDVNumbers(f.ctx, map[string]uint32{"t-1": 5, "t-2": 6}) })
		for id, want := range map[string]uint32{"t-1": 5, "t-2": 9} { // a stored number is never replaced
			if tk, err := f.read().Ticket(f.ctx, id); err != nil || tk.VDVNumber != want {
				t.Errorf("ticket %s number %d (%v), want %d", id, tk.VDVNumber, err, want)
			}
		}
	},
}
