package app

import (
	"context"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// Limits of an order request.
const (
	MaxProductsPerOrder = 100
	MaxOrderReference   = 255
)

// OrderRequest is what a partner sends to order tickets.
type OrderRequest struct {
	ProductIDs             []string
	OptionalOrderReference *string
	// TestClock names a test clock of the caller's test environment the
	// order is created on (docs/test-clocks.md); nil for the service's time.
	TestClock *string
}

// PlaceOrder creates an order with one coupon per product id (duplicates
// allowed, each its own coupon), a billable item per single-ticket coupon,
// and for a subscription product the subscription with its first, ordered
// cycle and that cycle's billable item. Everything is written in one
// transaction: an unknown, unsold or not permitted product creates nothing
// and the 422 names each offending entry.
func (a *App) PlaceOrder(ctx context.Context, claim idempotency.Claim, p account.Principal, req OrderRequest) (ticketing.Order, error) {
	n, err := a.placeOrder(ctx, claim, p, req)
	return n.order, err
}

// PlaceOrderResponse is PlaceOrder answering with the new order in the
// shape of API version, with its restore secret (the POST's answer),
// made from the values just written: nothing is read back.
func (a *App) PlaceOrderResponse(ctx context.Context, claim idempotency.Claim, p account.Principal, req OrderRequest, version int) (OrderJSON, error) {
	n, err := a.placeOrder(ctx, claim, p, req)
	if err != nil {
		return OrderJSON{}, err
	}
	if version < 8 {
		// Older versions' coupons lack activatable_until: not the event's shape.
		return a.orderView(ctx, a.store.Read(), n.order, n.known(), version, true)
	}
	v := n.view
	v.RestoreSecret = n.order.RestoreSecret
	if answer, ok := orderAnswer(n.object, v.RestoreSecret, a.products.Answers()); ok {
		v.answer = answer
	}
	return v, nil
}

func (a *App) placeOrder(ctx context.Context, claim idempotency.Claim, p account.Principal, req OrderRequest) (placedOrder, error) {
	n, err := a.newOrder(ctx, p, req)
	if err != nil {
		return n, err
	}
	// order.created is made before the transaction: everything it shows is
	// in memory, and SQLite's single writer (PostgreSQL's row locks) are
	// then held only for the inserts.
	ev := a.eventsAt(p.AccountID, p.Environment, n.order.CreatedAt)
	if n.view, n.object, err = ev.order(ctx, a.store.Read(), n.order, n.known()); err != nil {
		return n, err
	}
	n.order, err = a.writeOrder(ctx, claim, n, ev)
	return n, err
}

// placedOrder is an order checked and built by newOrder, with the rows it
// writes besides its own.
type placedOrder struct {
	order ticketing.Order
	subs  []ticketing.Subscription
	items []ticketing.BillableItem
	// Once placeOrder made them: the order in the event's shape (that of
	// v8 and later) and its order.created object.
	view   OrderJSON
	object []byte
}

// known are the order's new subscriptions by id: its views show them
// without reading them back (orderView).
func (n placedOrder) known() map[string]ticketing.Subscription {
	known := make(map[string]ticketing.Subscription, len(n.subs))
	for _, s := range n.subs {
		known[s.ID] = s
	}
	return known
}

// newOrder checks an order request and builds the order with its coupons,
// subscriptions and billable items (nothing is written yet).
func (a *App) newOrder(ctx context.Context, p account.Principal, req OrderRequest) (placedOrder, error) {
	const op = "app.PlaceOrder"
	if len(req.ProductIDs) == 0 || len(req.ProductIDs) > MaxProductsPerOrder {
		return placedOrder{}, apperr.Validation(op, CodeInvalidProductIDs, "/product_ids",
			fmt.Sprintf("product_ids must hold 1 to %d product ids", MaxProductsPerOrder))
	}
	if r := req.OptionalOrderReference; r != nil && (utf8.RuneCountInString(*r) > MaxOrderReference || !utf8.ValidString(*r)) {
		return placedOrder{}, apperr.Validation(op, CodeInvalidOrderReference, "/optional_order_reference",
			fmt.Sprintf("optional_order_reference must be at most %d characters", MaxOrderReference))
	}
	clk, err := a.orderClock(ctx, p, req.TestClock)
	if err != nil {
		return placedOrder{}, err
	}
	now := a.clock.Now()
	if clk != nil {
		now = clk.FrozenTime
	}
	ix := a.Catalog()
	// Grants matter only for restricted products; most orders skip the query.
	var grants map[string]bool
	for _, id := range req.ProductIDs {
		if pr, ok := ix.Product(id); ok && pr.Restricted && grants == nil {
			var err error
			if grants, err = a.store.Read().Grants(ctx, p.AccountID); err != nil {
				return placedOrder{}, err
			}
		}
	}
	products := make([]*catalog.Product, len(req.ProductIDs))
	var probs []apperr.FieldError
	for i, id := range req.ProductIDs {
		pr, ok := ix.Product(id)
		field := fmt.Sprintf("/product_ids/%d", i)
		switch {
		case !ok:
			probs = append(probs, apperr.FieldError{Field: field, Message: fmt.Sprintf("unknown product %q", id)})
		case !pr.OnSale(now):
			probs = append(probs, apperr.FieldError{Field: field, Message: fmt.Sprintf("product %q is not on sale", id)})
		case pr.Restricted && !grants[id]:
			probs = append(probs, apperr.FieldError{Field: field, Message: fmt.Sprintf("product %q may not be ordered by this account; contact the operator", id)})
		}
		products[i] = pr
	}
	if len(probs) > 0 {
		msgs := make([]string, len(probs))
		for i, pr := range probs {
			msgs[i] = pr.Message
		}
		return placedOrder{}, apperr.E(op, apperr.Unprocessable, CodeInvalidProductIDs,
			"product_ids: "+strings.Join(msgs, "; ")).WithDetails(probs...)
	}

	o := ticketing.Order{ID: a.IDs.New("order"), AccountID: p.AccountID, Environment: p.Environment,
		OptionalOrderReference: req.OptionalOrderReference, RestoreSecret: a.IDs.New("restore-secret"), CreatedAt: now,
		TestClockID: req.TestClock}
	var subs []ticketing.Subscription
	var items []ticketing.BillableItem
	for i, pr := range products {
		c := ticketing.Coupon{ID: a.IDs.New("coupon"), OrderID: o.ID, Position: i, AccountID: p.AccountID,
			Environment: p.Environment, ProductID: pr.ID, CreatedAt: now, TestClockID: o.TestClockID}
		if pr.IsSubscription {
			s, item := a.newSubscription(p, pr, c.ID, now, o.TestClockID)
			c.SubscriptionID = &s.ID
			subs = append(subs, s)
			items = append(items, item)
		} else {
			item := a.newBillableItem(p, pr, now, o.TestClockID)
			item.CouponID = &c.ID
			c.BillableItemID = &item.ID
			items = append(items, item)
		}
		o.Coupons = append(o.Coupons, c)
	}
	return placedOrder{order: o, subs: subs, items: items}, nil
}

// writeOrder writes an order built by newOrder and the events of ev (its
// order.created) atomically: on PostgreSQL one statement, autocommitted
// when the account has no enabled webhook endpoint (store.InsertOrderAlone),
// else inside the transaction that also adds the deliveries.
func (a *App) writeOrder(ctx context.Context, claim idempotency.Claim, n placedOrder, ev *changeEvents) (ticketing.Order, error) {
	o, subs, items := n.order, n.subs, n.items
	// Without an enabled webhook endpoint the rows and events are one
	// autocommitted statement (PostgreSQL); with one, or on SQLite, a
	// transaction holds them and their deliveries.
	written, err := a.store.InsertOrderAlone(ctx, claim, o, subs, items, ev.evs)
	if err == nil && !written {
		err = a.store.WriteClaimed(ctx, claim, func(q store.Q) error {
			hooks, err := q.InsertOrderRows(ctx, o, subs, items, ev.evs)
			return ev.inserted(ctx, q, hooks, err)
		})
	}
	if err != nil {
		return ticketing.Order{}, err
	}
	return o, nil
}

// newBillableItem is the item of product pr ordered at now, on test clock
// clockID (nil: none).
func (a *App) newBillableItem(p account.Principal, pr *catalog.Product, now time.Time, clockID *string) ticketing.BillableItem {
	return ticketing.BillableItem{ID: a.IDs.New("billable"), AccountID: p.AccountID, Environment: p.Environment,
		ProductID: pr.ID, Description: pr.LocalTicketName, AmountCents: pr.PriceInCents, Currency: pr.Currency,
		VATRateBP: pr.VATRateBP, OrderedAt: now, TestClockID: clockID}
}

// Order returns one of the caller's orders.
func (a *App) Order(ctx context.Context, p account.Principal, id string) (ticketing.Order, error) {
	return a.store.Read().Order(ctx, p.AccountID, p.Environment, id)
}
