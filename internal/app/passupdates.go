package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/wallet/apple"
)

// Wallet pass updates (docs/wallet.md, "Apple Wallet updates" and "Google
// Wallet updates"). Every change of what a ticket's passes show — voided by
// a restore, revoked by the operator, re-signed after a key revocation, a
// subscription's next cycle starting — calls passesChanged inside the
// transaction that makes the change, so the update jobs exist exactly when
// the change commits and never when it rolls back. The jobs, never the
// request, patch the saved Google object (googleupdates.go) and give the
// Apple passes a new update tag and push to every registered device.

// JobApplePassUpdate is the job kind that tags the Apple passes following
// the coupon of one ticket (the payload) as updated and pushes to their
// devices through APNs.
const JobApplePassUpdate = "wallet.apple.update"

// passUpdateAttempts bounds the retries of one update job (backoff 2 s
// doubling, capped at 10 minutes: about 40 minutes in all).
const passUpdateAttempts = 10

// passesChanged enqueues the update of the passes of ticketIDs, due at
// effective (a cycle's start) or now when that has passed; call
// a.notifyJobs() after the commit to start them at once. A change due now
// always enqueues the Google job: the process that changes a ticket (the
// CLI too) does not know whether the servers have Google credentials, and
// the job finishes without a call when they have none or Google never saw
// the object; a ticket with a binary barcode profile gets none, as it has
// no Google pass (enqueueGoogleObject). A change due later (the next
// cycle's ticket, issued ahead of its start) enqueues none: a saved Google
// object of that ticket already holds its validity, and nothing in it
// changes at the start. An
// Apple change due now is enqueued only when a pass follows the ticket's
// coupon: a pass built later shows the change anyway. A change due later
// is always enqueued: its pass may be built meanwhile.
func passesChanged(ctx context.Context, q store.Q, at, effective time.Time, ticketIDs ...string) error {
	runAt := effective
	if runAt.Before(at) {
		runAt = at
	}
	for _, id := range ticketIDs {
		if !runAt.After(at) {
			if err := enqueueGoogleObject(ctx, q, id, runAt, at); err != nil {
				return err
			}
			n, err := q.CountApplePasses(ctx, id)
			if err != nil {
				return err
			}
			if n == 0 {
				continue
			}
		}
		if err := q.EnqueueJob(ctx, jobs.NewJob{Kind: JobApplePassUpdate, Payload: id, RunAt: runAt, MaxAttempts: passUpdateAttempts}, at); err != nil {
			return err
		}
	}
	return nil
}

// notifyJobs wakes a job worker of this instance after a commit that
// enqueued work (others find it at their next poll).
func (a *App) notifyJobs() {
	if a.Jobs != nil {
		a.Jobs.Notify()
	}
}

// PassPusher sends the pass-update push to one device (apple.APNs).
type PassPusher interface {
	Push(ctx context.Context, pushToken string) (apple.Outcome, error)
}

// SetPassPusher sets how Apple pass updates reach devices; nil (the
// default) only tags the passes as updated, so a device sees the change
// when it next asks on its own.
func (a *App) SetPassPusher(p PassPusher) {
	if p == nil {
		a.pusher.Store(nil)
		return
	}
	a.pusher.Store(&p)
}

// applePassUpdate is the JobApplePassUpdate handler: one transaction tags
// the passes and reads their devices' push tokens, then one push per
// token. 410 Unregistered (or a bad token) deletes the token's
// registrations; 429, 5xx and transport errors fail the job, which the
// runner retries with backoff (the repeat pushes again to every device: a
// duplicate push costs a device one request that answers "nothing new").
func (a *App) applePassUpdate(ctx context.Context, j jobs.Job) error {
	var tokens []string
	err := a.store.Write(ctx, func(q store.Q) error {
		var err error
		tokens, err = q.MarkApplePassesUpdated(ctx, j.Payload, a.clock.Now())
		return err
	})
	if err != nil || len(tokens) == 0 {
		return err
	}
	pp := a.pusher.Load()
	if pp == nil {
		return nil
	}
	var failed int
	var last error
	for _, tok := range tokens {
		out, err := (*pp).Push(ctx, tok)
		switch {
		case err != nil:
			failed++
			last = err
		case out == apple.Unregistered:
			if err := a.store.Write(ctx, func(q store.Q) error {
				_, err := q.DeleteApplePushToken(ctx, tok)
				return err
			}); err != nil {
				return err
			}
		}
	}
	if failed > 0 {
		var pe *apple.PushError
		retry := errors.As(last, &pe) && pe.Retry
		return fmt.Errorf("%d of %d pushes failed (retry: %v), last: %w", failed, len(tokens), retry, last)
	}
	return nil
}
