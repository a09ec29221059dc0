package app

import (
	"context"
	"strings"

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

// WriteEventsForBench commits one change writing n order.created events
// about distinct objects (each about 1 kB) for acc and env, with their
// webhook deliveries, and returns their ids once committed.
func (a *App) WriteEventsForBench(ctx context.Context, acc string, env account.Environment, n int) ([]string, error) {
	var ids []string
	err := a.store.Write(ctx, func(q store.Q) error {
		c := a.events(acc, env)
		for i := 0; i < n; i++ {
			id := a.IDs.New("order")
			if err := c.add(event.OrderCreated, id, map[string]any{"order_id": id, "note": strings.Repeat("x", 1000)}); err != nil {
				return err
			}
		}
		ids = ids[:0]
		for _, e := range c.evs {
			ids = append(ids, e.ID)
		}
		return c.write(ctx, q)
	})
	return ids, err
}
