package app

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
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
	return a.writeOrder(ctx, n, a.eventsAt(p.AccountID, p.Environment, n.order.CreatedAt))
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
	return a.writeOrder(ctx, n, ev)
}

// PassesChanged runs passesChanged in a transaction of its own (the
// month-turn benchmark measures the enqueue alone), at the service's time at.
func PassesChanged(ctx context.Context, s *store.Store, at, effective time.Time, ticketIDs ...string) error {
	return s.Write(ctx, func(q store.Q) error { return passesChangedAt(ctx, q, at, at, effective, ticketIDs...) })
}
