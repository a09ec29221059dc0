package app

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// A run of the JobApplePassUpdate handler takes on, besides its own job,
// up to applePushBatch−1 further due update jobs (a month turn makes one
// job per subscription, all due at the same instant) and serves them
// together: one transaction tags the passes of all of them, their
// devices are pushed applePushParallel at a time over the HTTP/2
// connection, and one transaction records the outcome of every job.
const (
	applePushBatch    = 500
	applePushParallel = 32
)

// applePassUpdate is the JobApplePassUpdate handler (docs/wallet.md, "The
// job"). Every job of the batch has its own outcome: done when each of its
// devices was pushed (or is gone: 410 Unregistered or a bad token delete
// the token's registrations); retried alone with backoff when a push of
// its devices failed in a way that can pass (429, 5xx, transport errors;
// the retry pushes that ticket's devices again, no other job's); dead at
// once when APNs refused a push for good (another 4xx: repeating it cannot
// succeed), kept with the refusal for the operator.
func (a *App) applePassUpdate(ctx context.Context, j jobs.Job) error {
	jq := a.store.JobsOf(JobApplePassUpdate)
	lease := a.inv.Jobs.WithDefaults().Lease
	more, err := jq.Claim(ctx, j.Worker, a.clock.Now(), lease, applePushBatch-1)
	if err != nil {
		return err // the runner retries j; nothing else was claimed
	}
	// The runner keeps j's lease; the jobs claimed here keep theirs by the
	// same heartbeat (a third of the lease).
	if len(more) > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(lease / 3)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				for _, m := range more {
					_, _ = jq.Extend(context.WithoutCancel(ctx), m.ID, j.Worker, a.clock.Now().Add(lease))
				}
			}
		}()
	}
	batch := append([]jobs.Job{j}, more...)
	outcomes := make([]error, len(batch))
	var tickets []string
	for i, b := range batch {
		if b.Attempts > b.MaxAttempts { // j's is checked by the runner
			outcomes[i] = errPermanent{errors.New("attempts exhausted (the last worker lost its lease)")}
			continue
		}
		tickets = append(tickets, b.Payload)
	}
	var tokens map[string][]string
	err = a.store.Write(ctx, func(q store.Q) error {
		var err error
		tokens, err = q.MarkTicketsApplePassesUpdated(ctx, tickets, a.clock.Now())
		return err
	})
	if err != nil {
		for i := range outcomes {
			if outcomes[i] == nil {
				outcomes[i] = err
			}
		}
		return a.finishPassJobs(ctx, jq, j.Worker, batch, outcomes, nil)
	}
	pushed := a.pushAll(ctx, tokens)
	var gone []string
	for tok, r := range pushed {
		if r.err == nil && r.out == apple.Unregistered {
			gone = append(gone, tok)
		}
	}
	for i, b := range batch {
		if outcomes[i] != nil {
			continue
		}
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
				err = errPermanent{err}
			}
			outcomes[i] = err
		}
	}
	return a.finishPassJobs(ctx, jq, j.Worker, batch, outcomes, gone)
}

// errPermanent is a job outcome that no retry can change.
type errPermanent struct{ error }

func (e errPermanent) Unwrap() error { return e.error }

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

// finishPassJobs records the outcome of each job of a batch that worker
// holds: one transaction deletes the registrations of the tokens APNs
// called gone and marks the successful jobs done; each failed job is then
// scheduled again with the runner's backoff, or buried when its failure is
// permanent or its attempts are used up. It returns jobs.ErrCompleted
// (the runner records nothing more for j) or the error of that
// transaction (the runner retries j; the others are taken over after
// their lease).
func (a *App) finishPassJobs(ctx context.Context, jq store.JobQueue, worker string, batch []jobs.Job, outcomes []error, gone []string) error {
	ctx = context.WithoutCancel(ctx) // the pushes are made: record them
	now := a.clock.Now()
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
		return q.CompleteJobs(ctx, done, worker, now)
	})
	if err != nil {
		return err
	}
	jo := a.inv.Jobs.WithDefaults()
	base, maxB := jo.BaseBackoff, jo.MaxBackoff
	for i, b := range batch {
		herr := outcomes[i]
		if herr == nil {
			continue
		}
		var pe errPermanent
		dead := errors.As(herr, &pe) || b.Attempts >= b.MaxAttempts
		delay := jobs.Backoff(base, maxB, b.Attempts)
		delay += time.Duration(rand.Int64N(int64(delay)/4 + 1))
		if err := jq.Retry(ctx, b.ID, worker, now, now.Add(delay), herr.Error(), dead); err != nil {
			return err
		}
	}
	return jobs.ErrCompleted
}
