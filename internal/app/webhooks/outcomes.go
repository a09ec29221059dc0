package webhooks

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/app/deliveries"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/webhook"
)

// hookOutcome is a finished attempt waiting to be recorded.
type hookOutcome struct {
	job           jobs.Job
	d             webhook.Delivery
	ep            webhook.Endpoint
	typ           event.Type
	res           webhook.Result
	at            time.Time
	final, counts bool
	done          chan error
}

// hookBatch records the attempts of an instance's delivery workers in
// shared transactions (group commit): a worker whose outcome arrives while
// another writes waits for the next commit, which takes every outcome
// queued by then.
type hookBatch struct {
	mu       sync.Mutex
	queue    []*hookOutcome
	flushing bool
}

func (b *hookBatch) record(ctx context.Context, o *hookOutcome, write func(context.Context, []*hookOutcome) error) error {
	b.mu.Lock()
	b.queue = append(b.queue, o)
	if b.flushing {
		b.mu.Unlock()
		return <-o.done
	}
	b.flushing = true
	for len(b.queue) > 0 {
		batch := b.queue
		b.queue = nil
		b.mu.Unlock()
		err := write(context.WithoutCancel(ctx), batch)
		for _, x := range batch {
			x.done <- err
		}
		b.mu.Lock()
	}
	b.flushing = false
	b.mu.Unlock()
	return <-o.done
}

// writeOutcomes records a batch of attempts in one transaction: the
// attempts and their deliveries' states in two statements, the finished
// jobs deleted, then what follows each (its retry, the next delivery of
// its object, its endpoint's failure count).
func (s *Service) writeOutcomes(ctx context.Context, batch []*hookOutcome) error {
	recs := make([]webhook.AttemptRecord, len(batch))
	held := map[int64]string{}
	for i, o := range batch {
		d, res := o.d, o.res
		att := webhook.Attempt{ID: s.IDs.New("attempt"), EndpointID: o.ep.ID, DeliveryID: d.ID, EventID: d.EventID,
			EventType: string(o.typ), Attempt: d.Attempts + 1, At: o.at, StatusCode: res.StatusCode, Latency: res.Latency,
			Excerpt: res.Excerpt, Error: res.Err, Succeeded: res.OK(), Manual: d.Manual}
		state := webhook.StateSucceeded
		if !res.OK() {
			state = webhook.StateFailed
			if !o.final {
				if next, ok := webhook.NextAttempt(d.CreatedAt, o.at, att.Attempt, rand.Float64()); ok {
					state, att.NextAttemptAt = webhook.StatePending, &next
				}
			}
		}
		recs[i] = webhook.AttemptRecord{Attempt: att, State: state}
		held[o.job.ID] = o.job.Worker
	}
	wake := false
	err := s.DB.Write(ctx, func(q Queries) error {
		wake = false
		if err := q.DeleteJobs(ctx, held); err != nil {
			return err
		}
		applied, hasNext, err := q.RecordAttempts(ctx, recs)
		if err != nil {
			return err
		}
		var js []jobs.NewJob
		for i, o := range batch {
			if !applied[i] {
				continue
			}
			att := recs[i].Attempt
			if att.NextAttemptAt != nil {
				js = append(js, deliveries.AttemptJob(o.d.ID, att.Attempt+1, *att.NextAttemptAt))
			} else if hasNext[i] {
				next, err := q.NextInChain(ctx, o.ep.ID, o.d.ObjectID)
				if err != nil {
					return err
				}
				if next != "" {
					js = append(js, deliveries.AttemptJob(next, 1, o.at))
					wake = true
				}
			}
			if err := endpointOutcome(ctx, q, o); err != nil {
				return err
			}
		}
		return q.EnqueueJobs(ctx, js, s.Clock.Now())
	})
	if err == nil && wake {
		s.Notify()
	}
	return err
}

// endpointOutcome counts an attempt towards its endpoint's failures: a
// success ends a failing period, a failure starts one, and an endpoint
// failing for webhook.DisableAfter is disabled with the reason.
func endpointOutcome(ctx context.Context, q Queries, o *hookOutcome) error {
	if !o.counts || (o.res.OK() && o.ep.FailingSince == nil) {
		return nil
	}
	since, err := q.EndpointOutcome(ctx, o.ep.ID, o.res.OK(), o.at)
	if err != nil || !webhook.ShouldDisable(since, o.at) {
		return err
	}
	return q.DisableEndpoint(ctx, o.ep.ID, o.at, fmt.Sprintf("every delivery attempt failed since %s (%s without a success); last error: %s",
		since.Format(time.RFC3339), webhook.DisableAfter, o.res.Err))
}
