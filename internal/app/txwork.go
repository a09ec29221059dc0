package app

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// TxWork is the work of internal/app that a capability package's change
// does inside its own write transaction q, handed to the package at
// wiring (docs/architecture.md, "Use cases by capability"): a privacy
// erasure revokes the subject's still valid tickets and writes its
// <subject>.erased event.
type TxWork struct {
	a *App
	q store.Q
}

// TxWork binds the work to the transaction q.
func (a *App) TxWork(q store.Q) TxWork { return TxWork{a: a, q: q} }

// Revoke revokes ticket t as `farebox tickets revoke` does (revocation
// feed, pass update), with the revocation kind and reason given.
func (w TxWork) Revoke(ctx context.Context, t ticketing.Ticket, kind, reason string, now time.Time) error {
	return w.a.revoke(ctx, w.q, t, kind, reason, now)
}

// WriteEvent writes an event of type t about objectID showing obj for p's
// account and environment, with its webhook deliveries; call it last in
// the transaction.
func (w TxWork) WriteEvent(ctx context.Context, p account.Principal, t event.Type, objectID string, obj any) error {
	ev := w.a.events(p.AccountID, p.Environment)
	if err := ev.add(t, objectID, obj); err != nil {
		return err
	}
	return ev.write(ctx, w.q)
}
