// Package webhooks is the webhooks capability (docs/webhooks.md): an
// account's endpoints per environment (create, list, read, update,
// delete, secret rotation), their delivery log and redelivery, and the
// delivery workers that post each attempt and record its outcome. The
// deliveries themselves are written in the transaction of the change that
// writes the events (package deliveries); the event bodies come from
// package events. It reaches the database only through Queries.
package webhooks

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/deliveries"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/webhook"
	"github.com/farebox/farebox/internal/webhook/sender"
)

// Queries are the store methods the webhooks use (store.Q implements
// them; the wiring passes store.NewView[Queries]).
type Queries interface {
	deliveries.Queries
	InsertEndpoint(ctx context.Context, e webhook.Endpoint) error
	UpdateEndpoint(ctx context.Context, e webhook.Endpoint) error
	Endpoint(ctx context.Context, accountID string, env account.Environment, id string, lock bool) (webhook.Endpoint, error)
	DeleteEndpoint(ctx context.Context, id string) error
	Event(ctx context.Context, accountID string, env account.Environment, id string) (event.Event, bool, error)
	Attempts(ctx context.Context, endpointID string, before int64, limit int) ([]webhook.Attempt, error)
	AttemptPosition(ctx context.Context, endpointID, id string) (int64, bool, error)
	DeliveriesWork(ctx context.Context, ids []string) (map[string]webhook.Work, error)
	RecordAttempts(ctx context.Context, rs []webhook.AttemptRecord) (applied, hasNext []bool, err error)
	NextInChain(ctx context.Context, endpointID, objectID string) (string, error)
	EndpointOutcome(ctx context.Context, id string, ok bool, at time.Time) (*time.Time, error)
	DisableEndpoint(ctx context.Context, id string, at time.Time, reason string) error
	DeleteJobs(ctx context.Context, held map[int64]string) error
}

// DB is the database as the webhooks see it (store.View).
type DB = kit.DB[Queries]

// Options configure deliveries.
type Options struct {
	// AllowPrivate lets live endpoints use http and reach loopback, private
	// and link-local addresses (on-premises installations).
	AllowPrivate bool
	// Timeout bounds one attempt (webhook.Timeout when zero).
	Timeout time.Duration
	// Jobs is the instance's job runner (nil: none). It runs delivery
	// attempts as well, and is woken for them while no Runner is started.
	Jobs *jobs.Runner
	// Queue is the job queue of delivery attempts alone
	// (store.Store.JobsOf(deliveries.JobDeliver)), which Runner claims
	// from; nil: no Runner.
	Queue jobs.Queue
}

// Service holds the webhook use cases and the delivery workers.
type Service struct {
	kit.Base[DB]
	o          Options
	sender     *sender.Sender
	events     *events.Service
	deliveries *deliveries.Service
	runner     atomic.Pointer[jobs.Runner] // Runner's, if started
	batch      hookBatch                   // group commit of delivery attempts
}

// New returns the webhooks of db; c is the service clock (nil: the system
// clock), ids the id prefix, ev reads the events' bodies, dl adds
// redeliveries and is set to wake this service's workers (Notify). The
// attempts are registered with o.Jobs.
func New(db DB, c clock.Clock, ids ident.Prefix, ev *events.Service, dl *deliveries.Service, o Options) *Service {
	s := &Service{Base: kit.NewBase(db, c, ids), o: o, sender: sender.New(o.Timeout), events: ev, deliveries: dl}
	if o.Jobs != nil {
		o.Jobs.HandleBatch(deliveries.JobDeliver, 0, s.deliver)
	}
	dl.WakeWith(s.Notify)
	return s
}

// DefaultWorkers is how many delivery workers farebox serve runs
// (--webhook-workers). Each claims up to claim due attempts in one
// transaction and posts them at the same time; their outcomes are
// recorded together with those of the other workers (hookBatch), so an
// instance has up to DefaultWorkers×claim attempts in flight and two
// commits serve many attempts.
const DefaultWorkers = 8

// claim is how many attempts a delivery worker claims at once.
const claim = 32

// Runner returns a job runner that claims only delivery attempts, for
// workers of their own (farebox serve --webhook-workers): deliveries do
// not wait behind invoice documents, nor these behind deliveries.
func (s *Service) Runner(o jobs.Options) *jobs.Runner {
	if o.ClaimBatch <= 0 {
		o.ClaimBatch = claim
	}
	o.Concurrent = true
	r := jobs.New(s.o.Queue, s.Clock, o)
	r.HandleBatch(deliveries.JobDeliver, 0, s.deliver)
	s.runner.Store(r)
	return r
}

// Notify wakes a worker of this instance for a due delivery.
func (s *Service) Notify() {
	if r := s.runner.Load(); r != nil {
		r.Notify()
		return
	}
	if s.o.Jobs != nil {
		s.o.Jobs.Notify()
	}
}

// deliver makes the attempts of one claim of delivery jobs (a batch of
// deliveries.JobDeliver): one query reads the deliveries with their
// endpoints and events, one more at most the events' shared parts; then
// each attempt posts its event at the same time as the others and records
// its attempt, schedules what follows (the retry, or the next event of
// the object) and marks its job done in one transaction, shared with the
// attempts this instance's workers finish meanwhile (hookBatch: one
// commit for many attempts), as soon as its receiver answered: a slow
// receiver holds up no other's record. A worker that dies between the
// POST and that commit leaves the job to another worker after the lease,
// which posts again with the same event id (at least once).
func (s *Service) deliver(ctx context.Context, js []jobs.Job) []error {
	errs := make([]error, len(js))
	ids := make([]string, len(js))
	for i, j := range js {
		ids[i], _, _ = strings.Cut(j.Payload, " ")
	}
	work, err := s.DB.Read().DeliveriesWork(ctx, ids)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	// The attempts to make: a job whose delivery is gone (deleted with its
	// endpoint) or whose attempt is recorded already does nothing.
	type todo struct {
		i int
		w webhook.Work
	}
	var run []todo
	var evs []event.Event
	for i, j := range js {
		w, ok := work[ids[i]]
		_, n, _ := strings.Cut(j.Payload, " ")
		if !ok || w.Delivery.State != webhook.StatePending || strconv.Itoa(w.Delivery.Attempts+1) != n {
			continue
		}
		run = append(run, todo{i, w})
		if w.EventFound {
			evs = append(evs, w.Event)
		}
	}
	bodies, err := s.events.Bodies(ctx, evs)
	if err != nil {
		for _, t := range run {
			errs[t.i] = err
		}
		return errs
	}
	var wg sync.WaitGroup
	for _, t := range run {
		var body []byte
		if t.w.EventFound {
			body, bodies = bodies[0], bodies[1:]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[t.i] = s.attempt(ctx, js[t.i], t.w, body)
		}()
	}
	wg.Wait()
	return errs
}

// attempt posts one delivery's event (body) and records the attempt.
func (s *Service) attempt(ctx context.Context, j jobs.Job, w webhook.Work, body []byte) error {
	d, ep, ev := w.Delivery, w.Endpoint, w.Event
	now := s.Clock.Now()
	var res webhook.Result
	final, counts := false, true
	switch {
	case ep.DisabledAt != nil:
		res, final, counts = webhook.Result{Err: "endpoint disabled: " + ep.DisabledReason}, true, false
	case !w.EventFound:
		res, final, counts = webhook.Result{Err: "event no longer exists (older than the retention period)"}, true, false
	default:
		res = s.sender.Post(ctx, sender.Delivery{URL: ep.URL, Body: body, Signature: webhook.Sign(ep.Secrets(now), now, body),
			EventID: ev.ID, DeliveryID: d.ID, Policy: webhook.PolicyFor(ep.Environment, s.o.AllowPrivate)})
	}
	if ctx.Err() != nil && !res.OK() {
		return ctx.Err() // shutting down or the lease was lost: not this receiver's failure
	}
	o := &hookOutcome{job: j, d: d, ep: ep, typ: ev.Type, res: res, at: now, final: final || d.Manual, counts: counts,
		done: make(chan error, 1)}
	if err := s.batch.record(ctx, o, s.writeOutcomes); err != nil {
		return err
	}
	return jobs.ErrCompleted
}
