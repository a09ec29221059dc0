package app

import (
	"context"

	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
)

// EventWriter is a's event writer for a use-case package whose store
// view is Q (store.NewView[Q]): it writes the events of one change of one
// account and environment that the package made (each with its id, time
// and object) in the change's transaction q, with their webhook
// deliveries, as the application's own changes do (changeEvents.write).
// The events move below the use cases next (docs/architecture.md, "What
// moves next"); until then the package gets its writer this way.
func EventWriter[Q any](a *App) func(ctx context.Context, q Q, evs []event.Event) error {
	return func(ctx context.Context, q Q, evs []event.Event) error {
		if len(evs) == 0 {
			return nil
		}
		// q is the store.Q a store.View hands out behind the package's
		// narrow interface.
		c := &changeEvents{a: a, acc: evs[0].AccountID, env: evs[0].Environment, at: evs[0].CreatedAt, evs: evs}
		return c.write(ctx, any(q).(store.Q))
	}
}
