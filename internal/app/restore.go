package app

import (
	"context"
	"crypto/subtle"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// RestoreRequest names the coupons of an order to restore.
type RestoreRequest struct {
	RestoreSecret string
	CouponIDs     []string
}

// Restore replaces activated coupons of an order (a traveller lost the
// phone): each gets a new coupon linked both ways (original_coupon_id /
// restored_coupon_id, and likewise for a subscription), the old coupon's
// tickets stop being valid, and the new coupon activates with an empty body
// into a ticket with the original validity and identification. Billable
// items are untouched. A wrong secret answers exactly like an unknown order.
func (a *App) Restore(ctx context.Context, claim idempotency.Claim, p account.Principal, orderID string, req RestoreRequest) (ticketing.Order, []ticketing.Coupon, error) {
	const op = "app.Restore"
	if len(req.CouponIDs) == 0 || len(req.CouponIDs) > MaxProductsPerOrder {
		return ticketing.Order{}, nil, apperr.Validation(op, CodeInvalidCouponIDs, "/coupon_ids",
			fmt.Sprintf("coupon_ids must hold 1 to %d coupon ids", MaxProductsPerOrder))
	}
	var order ticketing.Order
	var created []ticketing.Coupon
	err := a.store.WriteClaimed(ctx, claim, func(q store.Q) error {
		o, err := q.Order(ctx, p.AccountID, p.Environment, orderID)
		if err != nil {
			return err
		}
		if subtle.ConstantTimeCompare([]byte(o.RestoreSecret), []byte(req.RestoreSecret)) != 1 {
			return apperr.NotFoundf(op, CodeOrderNotFound)
		}
		now, err := a.timeOf(ctx, q, o.TestClockID)
		if err != nil {
			return err
		}
		order = o
		byID := map[string]ticketing.Coupon{}
		for _, c := range o.Coupons {
			byID[c.ID] = c
		}
		seen := map[string]bool{}
		var probs []apperr.FieldError
		for i, id := range req.CouponIDs {
			c, ok := byID[id]
			field := fmt.Sprintf("/coupon_ids/%d", i)
			switch {
			case !ok:
				probs = append(probs, apperr.FieldError{Field: field, Message: "not a coupon of this order"})
			case seen[id]:
				probs = append(probs, apperr.FieldError{Field: field, Message: "listed twice"})
			case c.RestoredCouponID != nil:
				probs = append(probs, apperr.FieldError{Field: field, Message: "already restored into " + *c.RestoredCouponID})
			case !c.Activated:
				probs = append(probs, apperr.FieldError{Field: field, Message: "not activated yet; only activated coupons can be restored"})
			}
			seen[id] = true
		}
		if len(probs) > 0 {
			return apperr.E(op, apperr.Unprocessable, CodeInvalidCouponIDs, "coupon_ids: "+probs[0].Field+" "+probs[0].Message).WithDetails(probs...)
		}
		ev := a.eventsAt(o.AccountID, o.Environment, now)
		for _, id := range req.CouponIDs {
			nc, err := a.restoreCoupon(ctx, q, byID[id], now)
			if err != nil {
				return err
			}
			created = append(created, nc)
			if err := ev.coupon(ctx, q, event.CouponRestored, id); err != nil {
				return err
			}
		}
		return ev.write(ctx, q)
	})
	if err == nil {
		a.notifyJobs() // the voided tickets' pass updates
	}
	return order, created, err
}

func (a *App) restoreCoupon(ctx context.Context, q store.Q, old ticketing.Coupon, now time.Time) (ticketing.Coupon, error) {
	nc := ticketing.Coupon{ID: a.IDs.New("coupon"), OrderID: old.OrderID, Position: old.Position + 1000, AccountID: old.AccountID,
		Environment: old.Environment, ProductID: old.ProductID, BillableItemID: old.BillableItemID,
		OriginalCouponID: &old.ID, TariffSettings: old.TariffSettings, CreatedAt: now, TestClockID: old.TestClockID}
	if old.SubscriptionID != nil {
		s, err := q.Subscription(ctx, "", "", *old.SubscriptionID)
		if err != nil {
			return nc, err
		}
		ns := s
		ns.ID = a.IDs.New("subscription")
		ns.OriginalSubscriptionID, ns.RestoredSubscriptionID = &s.ID, nil
		ns.CreatedAt = now
		if err := q.InsertSubscription(ctx, ns); err != nil {
			return nc, err
		}
		for _, c := range s.Cycles {
			c.ID, c.SubscriptionID, c.TicketID, c.CreatedAt = a.IDs.New("cycle"), ns.ID, nil, now
			if err := q.InsertCycle(ctx, c); err != nil {
				return nc, err
			}
		}
		if err := q.SetSubscriptionRestored(ctx, s.ID, ns.ID); err != nil {
			return nc, err
		}
		nc.SubscriptionID = &ns.ID
	}
	if err := q.InsertCoupon(ctx, nc); err != nil {
		return nc, err
	}
	if err := q.SetCouponRestored(ctx, old.ID, nc.ID); err != nil {
		return nc, err
	}
	tickets, err := q.TicketsOfCoupon(ctx, old.ID)
	if err != nil {
		return nc, err
	}
	for _, t := range tickets {
		if err := a.revoke(ctx, q, t, ticketing.RevocationRestored, "replaced by the ticket of a restored coupon", now); err != nil {
			return nc, err
		}
	}
	return nc, nil
}
