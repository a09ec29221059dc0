package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

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
		f.write(func(q store.Q) error {
			if err := q.InsertTestClock(f.ctx, clockRecord(clock, account.Test, fxAt)); err != nil {
				return err
			}
			return q.InsertSubscription(f.ctx, sub)
		})
		got, err := f.read().Subscription(f.ctx, fxAccount, account.Test, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(sub, got); d != "" {
			t.Errorf("Subscription after InsertSubscription (-want +got):\n%s", d)
		}
		err = s.Write(f.ctx, func(q store.Q) error { return q.InsertSubscription(f.ctx, sub) })
		wantCode(t, "a second subscription of the same id", err, apperr.Conflict, store.CodeConflict)
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
		for _, c := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Live, sub.ID}, {fxAccount, account.Test, sub.ID}, {fxAccount, account.Live, "sub-x"}, {"", account.Live, "sub-x"}} {
			_, err := f.read().Subscription(f.ctx, c.acct, c.env, c.id)
			wantCode(t, c.acct+"/"+string(c.env)+"/"+c.id, err, apperr.NotFound, store.CodeSubscriptionNotFound)
		}
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
		f.write(func(q store.Q) error { return q.InsertCycle(f.ctx, cy) })
		if got, err := f.read().Cycles(f.ctx, sub.ID); err != nil || !cmp.Equal(got, []ticketing.Cycle{cy}) {
			t.Errorf("Cycles after InsertCycle = %+v, %v; want %+v", got, err, cy)
		}
		err := s.Write(f.ctx, func(q store.Q) error { return q.InsertCycle(f.ctx, cy) })
		wantCode(t, "a second cycle of the same id", err, apperr.Conflict, store.CodeConflict)
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

func subscriptionCursor(s ticketing.Subscription) list.Cursor {
	return list.Cursor{CreatedAt: s.CreatedAt, ID: s.ID}
}
