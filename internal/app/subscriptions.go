package app

import (
	"context"
	"github.com/farebox/farebox/internal/idempotency"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/subscription"
	"github.com/farebox/farebox/internal/ticketing"
)

// newSubscription makes the subscription an order creates: its first cycle
// is ordered (with its billable item) and undated until the coupon is
// activated, which fixes the month.
func (a *App) newSubscription(p account.Principal, pr *catalog.Product, couponID string, now time.Time, clockID *string) (ticketing.Subscription, ticketing.BillableItem) {
	s := ticketing.Subscription{ID: a.IDs.New("subscription"), AccountID: p.AccountID, Environment: p.Environment,
		ProductID: pr.ID, CreatedAt: now, TestClockID: clockID}
	c := ticketing.Cycle{ID: a.IDs.New("cycle"), SubscriptionID: s.ID, ProductID: pr.ID, Ordered: true, CreatedAt: now}
	item := a.newBillableItem(p, pr, now, clockID)
	item.CouponID, item.SubscriptionID, item.CycleID = &couponID, &s.ID, &c.ID
	c.BillableItemID = &item.ID
	s.Cycles = []ticketing.Cycle{c}
	return s, item
}

// subState turns a stored subscription into the rules' state.
func subState(s ticketing.Subscription) subscription.State {
	st := subscription.State{Restored: s.RestoredSubscriptionID != nil}
	if s.CancelRequestedAt != nil {
		st.CancelledAt = *s.CancelRequestedAt
	}
	if s.EndsAt != nil {
		st.EndsAt = *s.EndsAt
	}
	for _, c := range s.Cycles {
		sc := subscription.Cycle{ID: c.ID, ProductID: c.ProductID, ValidFrom: c.ValidFrom, ValidUntil: c.ValidUntil,
			Ordered: c.Ordered, CouponActivated: c.CouponActivated}
		if c.BillableItemID != nil {
			sc.BillableItemID = *c.BillableItemID
		}
		st.Cycles = append(st.Cycles, sc)
	}
	return st
}

// applyState writes the rules' new state back: changed cycles are updated,
// new ones inserted, unchanged ones left alone (a reactivation changes one
// of a subscription's cycles; each UPDATE is a round trip and a WAL
// record). Cycles keep their ticket ids; the cycle ticketCycle (unless
// empty) gets ticketID.
func applyState(ctx context.Context, q store.Q, s ticketing.Subscription, st subscription.State, now time.Time, ticketCycle, ticketID string) error {
	old := map[string]ticketing.Cycle{}
	for _, c := range s.Cycles {
		old[c.ID] = c
	}
	for _, sc := range st.Cycles {
		c, existed := old[sc.ID]
		if !existed {
			c = ticketing.Cycle{ID: sc.ID, SubscriptionID: s.ID, CreatedAt: now}
		}
		stored := c
		c.ProductID, c.ValidFrom, c.ValidUntil, c.Ordered, c.CouponActivated = sc.ProductID, sc.ValidFrom, sc.ValidUntil, sc.Ordered, sc.CouponActivated
		if sc.BillableItemID != "" {
			id := sc.BillableItemID
			c.BillableItemID = &id
		}
		if sc.ID == ticketCycle {
			c.TicketID = &ticketID
		}
		var err error
		switch {
		case !existed:
			err = q.InsertCycle(ctx, c)
		case !sameCycle(stored, c):
			err = q.UpdateCycle(ctx, c)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sameCycle reports whether a and b store the same row.
func sameCycle(a, b ticketing.Cycle) bool {
	return a.ProductID == b.ProductID && a.ValidFrom.Equal(b.ValidFrom) && a.ValidUntil.Equal(b.ValidUntil) &&
		a.Ordered == b.Ordered && a.CouponActivated == b.CouponActivated && sameID(a.BillableItemID, b.BillableItemID) && sameID(a.TicketID, b.TicketID)
}

func sameID(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// Subscription returns one of the caller's subscriptions.
func (a *App) Subscription(ctx context.Context, p account.Principal, id string) (ticketing.Subscription, error) {
	return a.store.Read().Subscription(ctx, p.AccountID, p.Environment, id)
}

// changeSubscription runs fn on one of the caller's subscriptions, at the
// subscription's time (timeOf), inside a write transaction that holds the
// subscription's row lock, so concurrent changes of one subscription
// happen one after the other.
func (a *App) changeSubscription(ctx context.Context, claim idempotency.Claim, p account.Principal, id string, fn func(q store.Q, s ticketing.Subscription, now time.Time) error) error {
	return a.store.WriteClaimed(ctx, claim, func(q store.Q) error {
		if err := q.LockSubscription(ctx, id); err != nil {
			return err
		}
		s, err := q.Subscription(ctx, p.AccountID, p.Environment, id)
		if err != nil {
			return err
		}
		now, err := a.timeOf(ctx, q, s.TestClockID)
		if err != nil {
			return err
		}
		return fn(q, s, now)
	})
}

// Reorder orders the named cycle, or the next unordered one, creating its
// billable item; after cancellation or for an already ordered cycle it is
// a 422. Concurrent reorders of one subscription serialise on its row, so
// each cycle gets exactly one billable item.
func (a *App) Reorder(ctx context.Context, claim idempotency.Claim, p account.Principal, id, cycleID string) error {
	return a.changeSubscription(ctx, claim, p, id, func(q store.Q, s ticketing.Subscription, now time.Time) error {
		st := subState(s)
		i, err := subscription.ReorderTarget(st, cycleID, now, a.Loc)
		if err != nil {
			return err
		}
		pr, ok := a.Catalog().Product(st.Cycles[i].ProductID)
		if !ok {
			return apperr.E("app.Reorder", apperr.Internal, CodeProductMissing, "the cycle's product is not in the catalog")
		}
		item := a.newBillableItem(p, pr, now, s.TestClockID)
		item.SubscriptionID, item.CycleID = &s.ID, &st.Cycles[i].ID
		if err := q.InsertBillableItem(ctx, item); err != nil {
			return err
		}
		if err := applyState(ctx, q, s, subscription.Reorder(st, i, item.ID, a.IDs.New("cycle"), a.Loc), now, "", ""); err != nil {
			return err
		}
		ev := a.eventsAt(s.AccountID, s.Environment, now)
		if err := ev.subscription(ctx, q, event.SubscriptionCycleOrdered, s.ID); err != nil {
			return err
		}
		return ev.write(ctx, q)
	})
}

// CancelSubscription records a cancellation: requested by the 10th of a
// month (local time) it ends at the end of that month, otherwise at the end
// of the next month. Cancelling again is harmless and keeps the first end;
// cancelled says whether this call made the transition (once per
// subscription, also under concurrent calls: they serialise on its row).
func (a *App) CancelSubscription(ctx context.Context, claim idempotency.Claim, p account.Principal, id string) (cancelled bool, err error) {
	err = a.changeSubscription(ctx, claim, p, id, func(q store.Q, s ticketing.Subscription, now time.Time) error {
		next, dropped, changed := subscription.Cancel(subState(s), now, a.Loc)
		cancelled = changed
		if !changed {
			return nil
		}
		s.CancelRequestedAt, s.EndsAt = &next.CancelledAt, &next.EndsAt
		if err := q.UpdateSubscriptionEnd(ctx, s); err != nil {
			return err
		}
		for _, cid := range dropped {
			if err := q.DeleteUnorderedCycle(ctx, cid); err != nil {
				return err
			}
		}
		// The receipt (§ 312k BGB, docs/books.md) is written once, with the
		// cancellation; subscription.cancelled carries it.
		if err := a.books.Append(ctx, q, a.receipt(p, s, next.CancelledAt, next.EndsAt, now)); err != nil {
			return err
		}
		ev := a.eventsAt(s.AccountID, s.Environment, now)
		if err := ev.cancelledSubscription(ctx, q, p, s.ID); err != nil {
			return err
		}
		return ev.write(ctx, q)
	})
	return cancelled && err == nil, err
}
