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
	n, err := a.newOrder(ctx, p, req)
	if err != nil {
		return ticketing.Order{}, err
	}
	return a.writeOrder(ctx, idempotency.Claim{}, n, a.eventsAt(p.AccountID, p.Environment, n.order.CreatedAt))
}

// PlaceOrderWithEmptyEvent is PlaceOrder with an order.created event
// whose object is "{}", built without the order's view: the floor of
// BenchmarkPlaceOrderEvents, what an event row costs whatever it shows.
func PlaceOrderWithEmptyEvent(ctx context.Context, a *App, p account.Principal, req OrderRequest) (ticketing.Order, error) {
	n, err := a.newOrder(ctx, p, req)
	if err != nil {
		return ticketing.Order{}, err
	}
	ev := a.eventsAt(p.AccountID, p.Environment, n.order.CreatedAt)
	ev.evs = append(ev.evs, event.Event{ID: a.IDs.New("event"), AccountID: p.AccountID, Environment: p.Environment,
		Type: event.OrderCreated, ObjectID: n.order.ID, APIVersion: event.APIVersion, CreatedAt: ev.at, Object: []byte("{}")})
	return a.writeOrder(ctx, idempotency.Claim{}, n, ev)
}
