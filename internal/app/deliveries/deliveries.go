// Package deliveries writes the webhook deliveries of events
// (docs/webhooks.md) inside the transaction that writes the events, so a
// committed event always has its deliveries: internal/app's changes call
// FanOut, the webhooks capability's redelivery calls Add. Each delivery's
// attempts are jobs of kind JobDeliver, which the webhooks capability
// runs. It works only in its caller's transaction, through Queries.
package deliveries

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/webhook"
)

// JobDeliver is the job kind of one delivery attempt; its payload is
// "<delivery id> <attempt>" (AttemptJob).
const JobDeliver = "webhook.deliver"

// Queries are the store methods the deliveries use, in the caller's
// transaction (store.Q implements them).
type Queries interface {
	Endpoints(ctx context.Context, accountID string, env account.Environment, enabled bool) ([]webhook.Endpoint, error)
	AddDeliveries(ctx context.Context, ds []webhook.Delivery) ([]bool, error)
	EnqueueJobs(ctx context.Context, js []jobs.NewJob, at time.Time) error
	AfterCommit(f func())
}

// Service adds deliveries; after a commit that enqueued attempts it wakes
// the instance's delivery workers (WakeWith).
type Service struct {
	clock clock.Clock
	ids   ident.Prefix
	wake  atomic.Pointer[func()]
}

// New returns the deliveries with the service clock c (nil: the system
// clock) and the id prefix ids ("": farebox).
func New(c clock.Clock, ids ident.Prefix) *Service {
	if c == nil {
		c = clock.System{}
	}
	if ids == "" {
		ids = "farebox"
	}
	return &Service{clock: c, ids: ids}
}

// WakeWith sets what wakes the delivery workers after a commit that
// enqueued attempts (the webhooks capability hands its Notify).
func (s *Service) WakeWith(f func()) { s.wake.Store(&f) }

func (s *Service) notify() {
	if f := s.wake.Load(); f != nil {
		(*f)()
	}
}

// FanOut adds a delivery of each event to every enabled endpoint of the
// account and environment that wants it, inside the change's transaction:
// a committed event always has its deliveries. The caller calls it only
// when the event insert found an enabled endpoint (that check is part of
// the insert statement, so an account without endpoints pays no statement
// for webhooks). Three statements for all events of the change
// (endpoints, chains, deliveries) and one for the jobs.
func (s *Service) FanOut(ctx context.Context, q Queries, acc string, env account.Environment, evs []event.Event) error {
	if len(evs) == 0 {
		return nil
	}
	eps, err := q.Endpoints(ctx, acc, env, true)
	if err != nil || len(eps) == 0 {
		return err
	}
	now := s.clock.Now()
	var ds []webhook.Delivery
	for _, e := range evs {
		for _, ep := range eps {
			if ep.Wants(e.Type) {
				ds = append(ds, webhook.Delivery{ID: s.ids.New("delivery"), EndpointID: ep.ID, AccountID: ep.AccountID,
					Environment: ep.Environment, EventID: e.ID, ObjectID: e.ObjectID, CreatedAt: now})
			}
		}
	}
	return s.Add(ctx, q, ds, now)
}

// Add stores deliveries and enqueues the first attempt of those that do
// not wait behind an earlier event of their object; the instance's
// workers are woken after the commit.
func (s *Service) Add(ctx context.Context, q Queries, ds []webhook.Delivery, now time.Time) error {
	if len(ds) == 0 {
		return nil
	}
	pending, err := q.AddDeliveries(ctx, ds)
	if err != nil {
		return err
	}
	var js []jobs.NewJob
	for i, d := range ds {
		if pending[i] {
			js = append(js, AttemptJob(d.ID, 1, now))
		}
	}
	if len(js) > 0 {
		q.AfterCommit(s.notify)
	}
	return q.EnqueueJobs(ctx, js, s.clock.Now())
}

// AttemptJob is the job of attempt n of a delivery, due at at; its payload
// is "<delivery id> <n>", so a job that outlived its attempt (run again
// after a lost lease, once the attempt was recorded) does nothing.
func AttemptJob(deliveryID string, n int, at time.Time) jobs.NewJob {
	return jobs.NewJob{Kind: JobDeliver, Payload: deliveryID + " " + strconv.Itoa(n), RunAt: at}
}
