package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
// effective (a cycle's start) or now when that has passed. at and
// effective are on the time of the changed objects (their test clock's,
// docs/test-clocks.md); a change due now is scheduled on the service's
// time (a clock's time says nothing about when the runner gets to it); a
// later effective time is on the service's time too, so objects on a clock
// must not come here with one: advancing their clock past it enqueues the
// update (advanceJob, clockPassUpdates). Call
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
func (a *App) passesChanged(ctx context.Context, q store.Q, at, effective time.Time, ticketIDs ...string) error {
	return passesChangedAt(ctx, q, a.clock.Now(), at, effective, ticketIDs...)
}

// passesChangedAt is passesChanged with the service's time svc.
func passesChangedAt(ctx context.Context, q store.Q, svc, at, effective time.Time, ticketIDs ...string) error {
	runAt := svc
	if effective.After(at) {
		runAt = effective
	}
	for _, id := range ticketIDs {
		if !runAt.After(svc) {
			if err := enqueueGoogleObject(ctx, q, id, runAt, svc); err != nil {
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
		if err := q.EnqueueJob(ctx, jobs.NewJob{Kind: JobApplePassUpdate, Payload: id, RunAt: runAt, MaxAttempts: passUpdateAttempts}, svc); err != nil {
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

// The JobApplePassUpdate handler serves up to applePushBatch due update
// jobs at once (a month turn makes one job per subscription, all due at
// the same instant; the runner fills the batch, jobs.Runner.HandleBatch):
// one transaction tags the passes of all of them, their devices are
// pushed applePushParallel at a time over the HTTP/2 connection, and one
// transaction records the done jobs.
const (
	applePushBatch    = 500
	applePushParallel = 32
)

// applePassUpdates is the JobApplePassUpdate batch handler (docs/wallet.md,
// "The job"). Every job of the batch has its own outcome: done when each
// of its devices was pushed (or is gone: 410 Unregistered or a bad token
// delete the token's registrations); retried alone with the runner's
// backoff when a push of its devices failed in a way that can pass (429,
// 5xx, transport errors; the retry pushes that ticket's devices again, no
// other job's); dead at once when APNs refused a push for good (another
// 4xx: repeating it cannot succeed, jobs.Permanent), kept with the refusal
// for the operator.
func (a *App) applePassUpdates(ctx context.Context, batch []jobs.Job) []error {
	outcomes := make([]error, len(batch))
	tickets := make([]string, len(batch))
	for i, b := range batch {
		tickets[i] = b.Payload
	}
	var tokens map[string][]string
	err := a.store.Write(ctx, func(q store.Q) error {
		var err error
		tokens, err = q.MarkTicketsApplePassesUpdated(ctx, tickets, a.clock.Now())
		return err
	})
	if err != nil {
		for i := range outcomes {
			outcomes[i] = err
		}
		return outcomes
	}
	pushed := a.pushAll(ctx, tokens)
	var gone []string
	for tok, r := range pushed {
		if r.err == nil && r.out == apple.Unregistered {
			gone = append(gone, tok)
		}
	}
	for i, b := range batch {
		toks := tokens[b.Payload]
		var failed int
		var last error
		retry := false
		for _, tok := range toks {
			r, ok := pushed[tok]
			if !ok || r.err == nil {
				continue
			}
			failed++
			var pe *apple.PushError
			if !errors.As(r.err, &pe) || pe.Retry {
				retry, last = true, r.err
			} else if last == nil || !retry {
				last = r.err
			}
		}
		if failed > 0 {
			err := fmt.Errorf("%d of %d pushes failed (retry: %v), last: %w", failed, len(toks), retry, last)
			if !retry {
				err = jobs.Permanent(err)
			}
			outcomes[i] = err
		}
	}
	return a.finishPassJobs(ctx, batch, outcomes, gone)
}

// pushResult is APNs's answer to one push.
type pushResult struct {
	out apple.Outcome
	err error
}

// pushAll pushes every distinct token of tokens once, applePushParallel
// at a time, and returns the answers by token; none without a pusher
// (the passes are only tagged).
func (a *App) pushAll(ctx context.Context, tokens map[string][]string) map[string]pushResult {
	pp := a.pusher.Load()
	if pp == nil {
		return nil
	}
	var distinct []string
	res := map[string]pushResult{}
	for _, ts := range tokens {
		for _, t := range ts {
			if _, ok := res[t]; !ok {
				res[t] = pushResult{}
				distinct = append(distinct, t)
			}
		}
	}
	out := make([]pushResult, len(distinct))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(applePushParallel, len(distinct)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i].out, out[i].err = (*pp).Push(ctx, distinct[i])
			}
		}()
	}
	for i := range distinct {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, t := range distinct {
		res[t] = out[i]
	}
	return res
}

// finishPassJobs records, in one transaction, the outcome of the jobs of
// a batch whose devices were all pushed: it deletes the registrations of
// the tokens APNs called gone and marks those jobs done (jobs.ErrCompleted
// for them); the failed jobs' outcomes go back to the runner, which
// retries or buries each. When that transaction fails, every job gets its
// error (the runner retries them all; their pushes are repeated).
func (a *App) finishPassJobs(ctx context.Context, batch []jobs.Job, outcomes []error, gone []string) []error {
	ctx = context.WithoutCancel(ctx) // the pushes are made: record them
	var done []int64
	for i, b := range batch {
		if outcomes[i] == nil {
			done = append(done, b.ID)
		}
	}
	err := a.store.Write(ctx, func(q store.Q) error {
		for _, tok := range gone {
			if _, err := q.DeleteApplePushToken(ctx, tok); err != nil {
				return err
			}
		}
		return q.CompleteJobs(ctx, done, batch[0].Worker, a.clock.Now())
	})
	for i := range outcomes {
		switch {
		case err != nil:
			outcomes[i] = err
		case outcomes[i] == nil:
			outcomes[i] = jobs.ErrCompleted
		}
	}
	return outcomes
}
