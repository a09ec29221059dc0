package app

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// The cancellation receipt (§ 312k BGB, docs/books.md) is a record of the
// books (package books): CancelSubscription appends it in the
// cancellation's transaction, and the DELETE's answer and
// subscription.cancelled show it.

// receipt is the book record of subscription s's cancellation by p,
// received at receivedAt and ending at end, written at now; it names the
// product as the catalog does.
func (a *App) receipt(p account.Principal, s ticketing.Subscription, receivedAt, end, now time.Time) books.Record {
	name := s.ProductID
	if pr, ok := a.Catalog().Product(s.ProductID); ok {
		name = pr.LocalTicketName
	}
	return books.Cancellation(p, s, name, receivedAt, end, now)
}

// CancelledSubscriptionJSON is the answer of DELETE …/subscriptions/{id}.json
// and the object of subscription.cancelled: the Subscription as its GET
// shows it, plus the cancellation receipt (null for a subscription
// cancelled before receipts existed).
type CancelledSubscriptionJSON struct {
	SubscriptionJSON
	CancellationReceipt *books.ReceiptJSON `json:"cancellation_receipt"`
}

// cancelledView is subscription id with its receipt, read through q.
func (a *App) cancelledView(ctx context.Context, q store.Q, p account.Principal, id string) (CancelledSubscriptionJSON, error) {
	d, err := a.subscriptionDetails(ctx, q, id)
	if err != nil {
		return CancelledSubscriptionJSON{}, err
	}
	r, err := a.books.ReceiptOf(ctx, q, p, id)
	return CancelledSubscriptionJSON{SubscriptionJSON: subscriptionView(d), CancellationReceipt: r}, err
}

// CancelledSubscription is the answer of a cancellation: the caller's
// subscription with its receipt.
func (a *App) CancelledSubscription(ctx context.Context, p account.Principal, id string) (CancelledSubscriptionJSON, error) {
	q := a.store.Read()
	if _, err := q.Subscription(ctx, p.AccountID, p.Environment, id); err != nil {
		return CancelledSubscriptionJSON{}, err
	}
	return a.cancelledView(ctx, q, p, id)
}
