package app

// Ending subscriptions: subscription.ended for each subscription whose end
// has passed, written once in the transaction that marks it (by the events
// job on the service's time, by a test clock's advance on the clock's).

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
)

// endSubscriptions writes subscription.ended, at now, for the
// subscriptions of clockID ("" for those on the service's time) whose end
// has passed at now, each once in the transaction that marks it.
func (a *App) endSubscriptions(ctx context.Context, clockID string, now time.Time) (ended int, err error) {
	for {
		ids, err := a.store.Read().EndedSubscriptions(ctx, clockID, now, 100)
		if err != nil || len(ids) == 0 {
			return ended, err
		}
		for _, id := range ids {
			err := a.store.Write(ctx, func(q store.Q) error {
				if err := q.LockSubscription(ctx, id); err != nil {
					return err
				}
				first, err := q.MarkSubscriptionEnded(ctx, id, now)
				if err != nil || !first {
					return err
				}
				s, err := q.Subscription(ctx, "", "", id)
				if err != nil {
					return err
				}
				ev := a.eventsAt(s.AccountID, s.Environment, now)
				if err := ev.subscription(ctx, q, event.SubscriptionEnded, id); err != nil {
					return err
				}
				ended++
				return ev.write(ctx, q)
			})
			if err != nil {
				return ended, err
			}
		}
	}
}
