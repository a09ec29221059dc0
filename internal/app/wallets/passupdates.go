package wallets

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/wallet/apple"
)

// Wallet pass updates (docs/wallet.md, "Apple Wallet updates" and "Google
// Wallet updates"). Every change of what a ticket's passes show — voided by
// a restore, revoked by the operator, re-signed after a key revocation, a
// subscription's next cycle starting — calls passes.Changed inside the
// transaction that makes the change, so the update jobs exist exactly when
// the change commits and never when it rolls back. The jobs, never the
// request, patch the saved Google object (googleupdates.go) and give the
// Apple passes a new update tag and push to every registered device.

// HandleJobs registers the pass update handlers with the job runner r.
// Jobs are enqueued by every process that changes tickets (the CLI too);
// they run on the servers, whose wallets know the credentials. A server
// without wallet credentials registers a Service of zero Options: its
// Apple updates only tag the passes, its Google updates finish without a
// call.
func (w *Service) HandleJobs(r *jobs.Runner) {
	r.Handle(passes.JobGoogleObject, w.updateGoogleObject)
	r.HandleBatch(passes.JobApplePassUpdate, applePushBatch, w.applePassUpdates)
}

// PassPusher sends the pass-update push to one device (apple.APNs).
type PassPusher interface {
	Push(ctx context.Context, pushToken string) (apple.Outcome, error)
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
func (w *Service) applePassUpdates(ctx context.Context, batch []jobs.Job) []error {
	outcomes := make([]error, len(batch))
	tickets := make([]string, len(batch))
	for i, b := range batch {
		tickets[i] = b.Payload
	}
	var tokens map[string][]string
	err := w.DB.Write(ctx, func(q Queries) error {
		var err error
		tokens, err = q.MarkTicketsApplePassesUpdated(ctx, tickets, w.Clock.Now())
		return err
	})
	if err != nil {
		for i := range outcomes {
			outcomes[i] = err
		}
		return outcomes
	}
	pushed := w.pushAll(ctx, tokens)
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
	return w.finishPassJobs(ctx, batch, outcomes, gone)
}

// pushResult is APNs's answer to one push.
type pushResult struct {
	out apple.Outcome
	err error
}

// pushAll pushes every distinct token of tokens once, applePushParallel
// at a time, and returns the answers by token; none without a pusher
// (the passes are only tagged).
func (w *Service) pushAll(ctx context.Context, tokens map[string][]string) map[string]pushResult {
	pp := w.o.Pusher
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
				out[i].out, out[i].err = pp.Push(ctx, distinct[i])
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
func (w *Service) finishPassJobs(ctx context.Context, batch []jobs.Job, outcomes []error, gone []string) []error {
	ctx = context.WithoutCancel(ctx) // the pushes are made: record them
	var done []int64
	for i, b := range batch {
		if outcomes[i] == nil {
			done = append(done, b.ID)
		}
	}
	err := w.DB.Write(ctx, func(q Queries) error {
		for _, tok := range gone {
			if _, err := q.DeleteApplePushToken(ctx, tok); err != nil {
				return err
			}
		}
		return q.CompleteJobs(ctx, done, batch[0].Worker, w.Clock.Now())
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
