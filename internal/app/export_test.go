package app

import (
	"context"
	"time"

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
