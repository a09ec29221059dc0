package app

import (
	"context"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/ticketing"
)

// PlaceOrderWithoutEvent is PlaceOrder without its order.created event,
// the baseline of BenchmarkPlaceOrderEvents: the same steps (newOrder,
// writeOrder) with an empty set of events, so production code carries no
// switch for it.
func PlaceOrderWithoutEvent(ctx context.Context, a *App, p account.Principal, req OrderRequest) (ticketing.Order, error) {
	n, err := placeForBench(ctx, a, p, req, false)
	return n.order, err
}

// PlaceOrderWithEmptyEvent is PlaceOrder with an order.created event
// whose object is "{}", built without the order's view: the floor of
// BenchmarkPlaceOrderEvents, what an event row costs whatever it shows.
func PlaceOrderWithEmptyEvent(ctx context.Context, a *App, p account.Principal, req OrderRequest) (ticketing.Order, error) {
	n, err := placeForBench(ctx, a, p, req, true)
	return n.order, err
}

// PlaceOrderResponseWithoutEvent and PlaceOrderResponseWithEmptyEvent
// are PlaceOrderWithoutEvent and PlaceOrderWithEmptyEvent answering as
// PlaceOrderResponse did before the answer was made of the event's
// object: the view made from the values written, left to the encoder.
func PlaceOrderResponseWithoutEvent(ctx context.Context, a *App, p account.Principal, req OrderRequest, version int) (OrderJSON, error) {
	n, err := placeForBench(ctx, a, p, req, false)
	if err != nil {
		return OrderJSON{}, err
	}
	return a.orderView(ctx, a.store.Read(), n.order, n.known(), version, true)
}

// PlaceOrderResponseWithEmptyEvent: see PlaceOrderResponseWithoutEvent.
func PlaceOrderResponseWithEmptyEvent(ctx context.Context, a *App, p account.Principal, req OrderRequest, version int) (OrderJSON, error) {
	n, err := placeForBench(ctx, a, p, req, true)
	if err != nil {
		return OrderJSON{}, err
	}
	return a.orderView(ctx, a.store.Read(), n.order, n.known(), version, true)
}

// placeForBench places an order without its order.created event, or with
// one showing "{}" when empty.
func placeForBench(ctx context.Context, a *App, p account.Principal, req OrderRequest, empty bool) (placedOrder, error) {
	n, err := a.newOrder(ctx, p, req)
	if err != nil {
		return n, err
	}
	ev := a.eventsAt(p.AccountID, p.Environment, n.order.CreatedAt)
	if empty {
		ev.evs = append(ev.evs, event.Event{ID: a.IDs.New("event"), AccountID: p.AccountID, Environment: p.Environment,
			Type: event.OrderCreated, ObjectID: n.order.ID, APIVersion: event.APIVersion, CreatedAt: ev.at, Object: []byte("{}")})
	}
	n.order, err = a.writeOrder(ctx, idempotency.Claim{}, n, ev)
	return n, err
}
