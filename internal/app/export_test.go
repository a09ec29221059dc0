package app

import (
	"context"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
)

// WithoutOrderEvents returns a copy of a whose PlaceOrder writes no
// order.created event: the baseline of BenchmarkPlaceOrderEvents.
func WithoutOrderEvents(a *App) *App {
	c := New(Options{Store: a.store, Clock: a.clock, IDPrefix: string(a.IDs), Location: a.Loc, Invoicing: a.inv})
	c.catalog.Store(a.catalog.Load())
	c.benchWithoutEvents = true
	return c
}

// PassesChanged runs passesChanged in a transaction of its own (the
// month-turn benchmark measures the enqueue alone).
func PassesChanged(ctx context.Context, s *store.Store, at, effective time.Time, ticketIDs ...string) error {
	return s.Write(ctx, func(q store.Q) error { return passesChanged(ctx, q, at, effective, ticketIDs...) })
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
