package app

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/webhook"
	"github.com/farebox/farebox/internal/webhook/sender"
)

// Webhooks (docs/webhooks.md): endpoints per account and environment, a
// delivery per event and endpoint written in the transaction of the
// change (fanOut), each attempt a job of kind JobWebhookDeliver.

// JobWebhookDeliver is the job kind of one delivery attempt; its payload
// is the delivery id.
const JobWebhookDeliver = "webhook.deliver"

// WebhookOptions configure deliveries.
type WebhookOptions struct {
	// AllowPrivate lets live endpoints use http and reach loopback, private
	// and link-local addresses (on-premises installations).
	AllowPrivate bool
	// Timeout bounds one attempt (webhook.Timeout when zero).
	Timeout time.Duration
}

func (a *App) initWebhooks(o WebhookOptions) {
	a.hooks = o
	a.sender = sender.New(o.Timeout)
	if a.Jobs != nil {
		a.Jobs.HandleBatch(JobWebhookDeliver, 0, a.deliverWebhooks)
	}
}

// DefaultWebhookWorkers is how many delivery workers farebox serve runs
// (--webhook-workers). Each claims up to webhookClaim due attempts in one
// transaction and posts them at the same time; their outcomes are
// recorded together with those of the other workers (hookBatch), so an
// instance has up to DefaultWebhookWorkers×webhookClaim attempts in
// flight and two commits serve many attempts.
const DefaultWebhookWorkers = 8

// webhookClaim is how many attempts a delivery worker claims at once.
const webhookClaim = 32

// WebhookRunner returns a job runner that claims only delivery attempts,
// for workers of their own (farebox serve --webhook-workers): deliveries
// do not wait behind invoice documents, nor these behind deliveries.
func (a *App) WebhookRunner(o jobs.Options) *jobs.Runner {
	if o.ClaimBatch <= 0 {
		o.ClaimBatch = webhookClaim
	}
	o.Concurrent = true
	r := jobs.New(a.store.JobsOf(JobWebhookDeliver), a.clock, o)
	r.HandleBatch(JobWebhookDeliver, 0, a.deliverWebhooks)
	a.hookRunner.Store(r)
	return r
}

// notifyWebhooks wakes a worker of this instance for a due delivery.
func (a *App) notifyWebhooks() {
	if r := a.hookRunner.Load(); r != nil {
		r.Notify()
		return
	}
	if a.Jobs != nil {
		a.Jobs.Notify()
	}
}

// fanOut adds a delivery of each event to every enabled endpoint of the
// change's account and environment that wants it, inside the change's
// transaction: a committed event always has its deliveries. write calls it
// only when the event insert found an enabled endpoint (that check is part
// of the insert statement, so an account without endpoints pays no
// statement for webhooks). Three statements for all events of the change
// (endpoints, chains, deliveries) and one for the jobs.
func (c *changeEvents) fanOut(ctx context.Context, q store.Q) error {
	if len(c.evs) == 0 {
		return nil
	}
	eps, err := q.Endpoints(ctx, c.acc, c.env, true)
	if err != nil || len(eps) == 0 {
		return err
	}
	now := c.a.clock.Now()
	var ds []webhook.Delivery
	for _, e := range c.evs {
		for _, ep := range eps {
			if ep.Wants(e.Type) {
				ds = append(ds, webhook.Delivery{ID: c.a.IDs.New("delivery"), EndpointID: ep.ID, AccountID: ep.AccountID,
					Environment: ep.Environment, EventID: e.ID, ObjectID: e.ObjectID, CreatedAt: now})
			}
		}
	}
	return c.a.addDeliveries(ctx, q, ds, now)
}

// addDeliveries stores deliveries and enqueues the first attempt of those
// that do not wait behind an earlier event of their object; the instance's
// workers are woken after the commit.
func (a *App) addDeliveries(ctx context.Context, q store.Q, ds []webhook.Delivery, now time.Time) error {
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
			js = append(js, attemptJob(d.ID, 1, now))
		}
	}
	if len(js) > 0 {
		q.AfterCommit(a.notifyWebhooks)
	}
	return q.EnqueueJobs(ctx, js, a.clock.Now())
}

// attemptJob is the job of attempt n of a delivery, due at at; its payload
// is "<delivery id> <n>", so a job that outlived its attempt (run again
// after a lost lease, once the attempt was recorded) does nothing.
func attemptJob(deliveryID string, n int, at time.Time) jobs.NewJob {
	return jobs.NewJob{Kind: JobWebhookDeliver, Payload: deliveryID + " " + strconv.Itoa(n), RunAt: at}
}

// deliverWebhooks makes the attempts of one claim of delivery jobs (a
// batch of JobWebhookDeliver): one query reads the deliveries with their
// endpoints and events, one more at most the events' shared parts; then
// each attempt posts its event at the same time as the others and records
// its attempt, schedules what follows (the retry, or the next event of
// the object) and marks its job done in one transaction, shared with the
// attempts this instance's workers finish meanwhile (hookBatch: one
// commit for many attempts), as soon as its receiver answered: a slow
// receiver holds up no other's record. A worker that dies between the
// POST and that commit leaves the job to another worker after the lease,
// which posts again with the same event id (at least once).
func (a *App) deliverWebhooks(ctx context.Context, js []jobs.Job) []error {
	errs := make([]error, len(js))
	ids := make([]string, len(js))
	for i, j := range js {
		ids[i], _, _ = strings.Cut(j.Payload, " ")
	}
	work, err := a.store.Read().DeliveriesWork(ctx, ids)
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
	bodies, err := a.eventBodies(ctx, evs)
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
			errs[t.i] = a.attempt(ctx, js[t.i], t.w, body)
		}()
	}
	wg.Wait()
	return errs
}

// attempt posts one delivery's event (body) and records the attempt.
func (a *App) attempt(ctx context.Context, j jobs.Job, w webhook.Work, body []byte) error {
	d, ep, ev := w.Delivery, w.Endpoint, w.Event
	now := a.clock.Now()
	var res webhook.Result
	final, counts := false, true
	switch {
	case ep.DisabledAt != nil:
		res, final, counts = webhook.Result{Err: "endpoint disabled: " + ep.DisabledReason}, true, false
	case !w.EventFound:
		res, final, counts = webhook.Result{Err: "event no longer exists (older than the retention period)"}, true, false
	default:
		res = a.sender.Post(ctx, sender.Delivery{URL: ep.URL, Body: body, Signature: webhook.Sign(ep.Secrets(now), now, body),
			EventID: ev.ID, DeliveryID: d.ID, Policy: webhook.PolicyFor(ep.Environment, a.hooks.AllowPrivate)})
	}
	if ctx.Err() != nil && !res.OK() {
		return ctx.Err() // shutting down or the lease was lost: not this receiver's failure
	}
	o := &hookOutcome{job: j, d: d, ep: ep, typ: ev.Type, res: res, at: now, final: final || d.Manual, counts: counts,
		done: make(chan error, 1)}
	if err := a.hookBatch.record(ctx, o, a.writeOutcomes); err != nil {
		return err
	}
	return jobs.ErrCompleted
}

// eventBodies are the JSON of events as GET /v1/events.json shows them,
// their shared parts read at once.
func (a *App) eventBodies(ctx context.Context, evs []event.Event) ([][]byte, error) {
	objs := make([][]byte, len(evs))
	for i, e := range evs {
		objs[i] = e.Object
	}
	if err := a.expandParts(ctx, objs); err != nil {
		return nil, err
	}
	out := make([][]byte, len(evs))
	for i, e := range evs {
		e.Object = objs[i]
		b, err := json.Marshal(EventsResponse(event.Page{Events: []event.Event{e}}).Data[0])
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

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
func (a *App) writeOutcomes(ctx context.Context, batch []*hookOutcome) error {
	recs := make([]webhook.AttemptRecord, len(batch))
	held := map[int64]string{}
	for i, o := range batch {
		d, res := o.d, o.res
		att := webhook.Attempt{ID: a.IDs.New("attempt"), EndpointID: o.ep.ID, DeliveryID: d.ID, EventID: d.EventID,
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
	err := a.store.Write(ctx, func(q store.Q) error {
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
				js = append(js, attemptJob(o.d.ID, att.Attempt+1, *att.NextAttemptAt))
			} else if hasNext[i] {
				next, err := q.NextInChain(ctx, o.ep.ID, o.d.ObjectID)
				if err != nil {
					return err
				}
				if next != "" {
					js = append(js, attemptJob(next, 1, o.at))
					wake = true
				}
			}
			if err := a.endpointOutcome(ctx, q, o); err != nil {
				return err
			}
		}
		return q.EnqueueJobs(ctx, js, a.clock.Now())
	})
	if err == nil && wake {
		a.notifyWebhooks()
	}
	return err
}

// endpointOutcome counts an attempt towards its endpoint's failures: a
// success ends a failing period, a failure starts one, and an endpoint
// failing for webhook.DisableAfter is disabled with the reason.
func (a *App) endpointOutcome(ctx context.Context, q store.Q, o *hookOutcome) error {
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

// WebhookEndpointRequest is the body of creating or updating an endpoint;
// nil fields are left as they are (update) or take their default (create).
type WebhookEndpointRequest struct {
	URL           *string   `json:"url"`
	EnabledEvents *[]string `json:"enabled_events"`
	Description   *string   `json:"description"`
	Disabled      *bool     `json:"disabled"`
}

// WebhookEndpointJSON is an endpoint as the API shows it. Secret is shown
// when the endpoint is created and when its secret is rotated, never
// again.
type WebhookEndpointJSON struct {
	ID                      string     `json:"id"`
	Object                  string     `json:"object"`
	URL                     string     `json:"url"`
	Description             string     `json:"description"`
	EnabledEvents           []string   `json:"enabled_events"`
	Environment             string     `json:"environment"`
	Status                  string     `json:"status"`
	DisabledReason          *string    `json:"disabled_reason"`
	DisabledAt              *timestamp `json:"disabled_at"`
	FailingSince            *timestamp `json:"failing_since"`
	PreviousSecretExpiresAt *timestamp `json:"previous_secret_expires_at"`
	Created                 timestamp  `json:"created"`
	Secret                  string     `json:"secret,omitempty"`
}

func (a *App) endpointView(e webhook.Endpoint, secret bool) WebhookEndpointJSON {
	v := WebhookEndpointJSON{ID: e.ID, Object: "webhook_endpoint", URL: e.URL, Description: e.Description,
		EnabledEvents: e.EventTypes, Environment: string(e.Environment), Status: "enabled", DisabledAt: tsPtr(e.DisabledAt),
		FailingSince: tsPtr(e.FailingSince), Created: timestamp(e.CreatedAt)}
	if e.DisabledAt != nil {
		v.Status, v.DisabledReason = "disabled", &e.DisabledReason
	}
	if e.OldSecret != "" && e.OldSecretExpires != nil && a.clock.Now().Before(*e.OldSecretExpires) {
		v.PreviousSecretExpiresAt = tsPtr(e.OldSecretExpires)
	}
	if secret {
		v.Secret = e.Secret
	}
	return v
}

// checkEndpoint validates the fields of req that are set into e; every
// problem is a 400 invalid_parameter naming the field.
func (a *App) checkEndpoint(ctx context.Context, op string, e *webhook.Endpoint, req WebhookEndpointRequest) error {
	if req.URL != nil {
		p := webhook.PolicyFor(e.Environment, a.hooks.AllowPrivate)
		u, msg := p.CheckURL(*req.URL)
		if msg == "" {
			msg = a.sender.Resolve(ctx, u.Hostname(), p)
		}
		if msg != "" {
			return apperr.Param(op, "url", msg)
		}
		e.URL = u.String()
	}
	if req.EnabledEvents != nil {
		if msg := webhook.CheckTypes(*req.EnabledEvents); msg != "" {
			return apperr.Param(op, "enabled_events", msg)
		}
		e.EventTypes = *req.EnabledEvents
	}
	if req.Description != nil {
		if n := len([]rune(*req.Description)); n > webhook.MaxDescription || strings.ContainsRune(*req.Description, 0) {
			return apperr.Param(op, "description", fmt.Sprintf("description is longer than %d characters or holds a NUL", webhook.MaxDescription))
		}
		e.Description = *req.Description
	}
	return nil
}

// WebhookEventTypes are what an endpoint may subscribe to: "*" (every
// type, now and later) and the event catalogue in documentation order;
// the dashboard's form offers them.
func WebhookEventTypes() []string {
	out := []string{webhook.Wildcard}
	for _, t := range event.Types {
		out = append(out, string(t))
	}
	return out
}

// CreateWebhookEndpoint adds an endpoint to the caller's account and
// environment; the answer shows its signing secret, once.
func (a *App) CreateWebhookEndpoint(ctx context.Context, p account.Principal, req WebhookEndpointRequest) (WebhookEndpointJSON, error) {
	const op = "app.CreateWebhookEndpoint"
	now := a.clock.Now()
	e := webhook.Endpoint{ID: a.IDs.New("webhook"), AccountID: p.AccountID, Environment: p.Environment,
		Secret: webhook.NewSecret(), CreatedAt: now, UpdatedAt: now}
	if req.URL == nil {
		return WebhookEndpointJSON{}, apperr.Param(op, "url", "url is required")
	}
	if req.EnabledEvents == nil {
		return WebhookEndpointJSON{}, apperr.Param(op, "enabled_events", "enabled_events is required: event types, or [\"*\"] for all")
	}
	if err := a.checkEndpoint(ctx, op, &e, req); err != nil {
		return WebhookEndpointJSON{}, err
	}
	if req.Disabled != nil && *req.Disabled {
		e.DisabledAt, e.DisabledReason = &now, "disabled by the account"
	}
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		eps, err := q.Endpoints(ctx, p.AccountID, p.Environment, false)
		if err != nil {
			return err
		}
		if len(eps) >= webhook.MaxEndpoints {
			return apperr.E(op, apperr.Conflict, CodeTooManyWebhookEndpoints,
				fmt.Sprintf("an account has at most %d webhook endpoints per environment", webhook.MaxEndpoints))
		}
		return q.InsertEndpoint(ctx, e)
	})
	return a.endpointView(e, true), err
}

// WebhookEndpointListJSON lists an account's endpoints (all of them: at
// most webhook.MaxEndpoints).
type WebhookEndpointListJSON struct {
	Object  string                `json:"object"`
	Data    []WebhookEndpointJSON `json:"data"`
	HasMore bool                  `json:"has_more"`
}

// WebhookEndpoints lists the caller's endpoints of its environment, oldest first.
func (a *App) WebhookEndpoints(ctx context.Context, p account.Principal) (WebhookEndpointListJSON, error) {
	eps, err := a.store.Read().Endpoints(ctx, p.AccountID, p.Environment, false)
	out := WebhookEndpointListJSON{Object: "list", Data: []WebhookEndpointJSON{}}
	for _, e := range eps {
		out.Data = append(out.Data, a.endpointView(e, false))
	}
	return out, err
}

// WebhookEndpoint returns one of the caller's endpoints.
func (a *App) WebhookEndpoint(ctx context.Context, p account.Principal, id string) (WebhookEndpointJSON, error) {
	e, err := a.store.Read().Endpoint(ctx, p.AccountID, p.Environment, id, false)
	return a.endpointView(e, false), err
}

// UpdateWebhookEndpoint changes an endpoint's url, event types,
// description or state: disabled true disables it ("disabled by the
// account"), false enables it again and forgets its failures.
func (a *App) UpdateWebhookEndpoint(ctx context.Context, p account.Principal, id string, req WebhookEndpointRequest) (WebhookEndpointJSON, error) {
	const op = "app.UpdateWebhookEndpoint"
	var e webhook.Endpoint
	if _, err := a.store.Read().Endpoint(ctx, p.AccountID, p.Environment, id, false); err != nil {
		return WebhookEndpointJSON{}, err
	}
	probe := webhook.Endpoint{Environment: p.Environment}
	if err := a.checkEndpoint(ctx, op, &probe, req); err != nil { // DNS outside the transaction
		return WebhookEndpointJSON{}, err
	}
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		var err error
		if e, err = q.Endpoint(ctx, p.AccountID, p.Environment, id, true); err != nil {
			return err
		}
		if req.URL != nil {
			e.URL = probe.URL
		}
		if req.EnabledEvents != nil {
			e.EventTypes = probe.EventTypes
		}
		if req.Description != nil {
			e.Description = probe.Description
		}
		now := a.clock.Now()
		switch {
		case req.Disabled == nil:
		case *req.Disabled && e.DisabledAt == nil:
			e.DisabledAt, e.DisabledReason = &now, "disabled by the account"
		case !*req.Disabled:
			e.DisabledAt, e.DisabledReason, e.FailingSince = nil, "", nil
		}
		e.UpdatedAt = now
		return q.UpdateEndpoint(ctx, e)
	})
	return a.endpointView(e, false), err
}

// DeletedJSON answers a deletion.
type DeletedJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// DeleteWebhookEndpoint deletes an endpoint with its deliveries and log.
func (a *App) DeleteWebhookEndpoint(ctx context.Context, p account.Principal, id string) (DeletedJSON, error) {
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		if _, err := q.Endpoint(ctx, p.AccountID, p.Environment, id, true); err != nil {
			return err
		}
		return q.DeleteEndpoint(ctx, id)
	})
	return DeletedJSON{ID: id, Object: "webhook_endpoint", Deleted: err == nil}, err
}

// RotateWebhookSecret gives an endpoint a new secret; the old one goes on
// signing (a second v1 in the signature) for overlap seconds: nil takes
// webhook.DefaultOverlap, 0 ends it at once.
func (a *App) RotateWebhookSecret(ctx context.Context, p account.Principal, id string, overlap *int64) (WebhookEndpointJSON, error) {
	const op = "app.RotateWebhookSecret"
	d := webhook.DefaultOverlap
	if overlap != nil {
		if *overlap < 0 || *overlap > int64(webhook.MaxOverlap/time.Second) {
			return WebhookEndpointJSON{}, apperr.Param(op, "overlap_seconds",
				fmt.Sprintf("overlap_seconds is from 0 to %d", int64(webhook.MaxOverlap/time.Second)))
		}
		d = time.Duration(*overlap) * time.Second
	}
	var e webhook.Endpoint
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		var err error
		if e, err = q.Endpoint(ctx, p.AccountID, p.Environment, id, true); err != nil {
			return err
		}
		now := a.clock.Now()
		until := now.Add(d)
		e.OldSecret, e.OldSecretExpires, e.Secret, e.UpdatedAt = e.Secret, &until, webhook.NewSecret(), now
		return q.UpdateEndpoint(ctx, e)
	})
	return a.endpointView(e, true), err
}

// WebhookAttemptJSON is one row of an endpoint's delivery log.
type WebhookAttemptJSON struct {
	ID              string     `json:"id"`
	Object          string     `json:"object"`
	DeliveryID      string     `json:"delivery_id"`
	EventID         string     `json:"event_id"`
	EventType       string     `json:"event_type"`
	Attempt         int        `json:"attempt"`
	Created         timestamp  `json:"created"`
	StatusCode      *int       `json:"status_code"`
	LatencyMS       int64      `json:"latency_ms"`
	ResponseExcerpt string     `json:"response_excerpt"`
	Error           *string    `json:"error"`
	Succeeded       bool       `json:"succeeded"`
	Redelivery      bool       `json:"redelivery"`
	NextAttemptAt   *timestamp `json:"next_attempt_at"`
}

// WebhookAttemptListJSON is a page of the delivery log.
type WebhookAttemptListJSON struct {
	Object  string               `json:"object"`
	Data    []WebhookAttemptJSON `json:"data"`
	HasMore bool                 `json:"has_more"`
}

// WebhookAttempts is a page of an endpoint's delivery log, newest first
// (limit and starting_after as every list).
func (a *App) WebhookAttempts(ctx context.Context, p account.Principal, id string, req ListRequest) (WebhookAttemptListJSON, error) {
	const op = "app.WebhookAttempts"
	r := a.store.Read()
	if _, err := r.Endpoint(ctx, p.AccountID, p.Environment, id, false); err != nil {
		return WebhookAttemptListJSON{}, err
	}
	var l listParams
	limit := l.Limit(req.Limit)
	var before int64
	if req.EndingBefore != "" {
		l.Bad("ending_before", "the delivery log pages with starting_after only")
	}
	err := l.Cursors(ListRequest{StartingAfter: req.StartingAfter}, "attempt of this endpoint", "", func(_, aid string) (bool, error) {
		n, ok, err := r.AttemptPosition(ctx, id, aid)
		before = n
		return ok, err
	})
	if err != nil {
		return WebhookAttemptListJSON{}, err
	}
	if err := l.Err(op); err != nil {
		return WebhookAttemptListJSON{}, err
	}
	atts, err := r.Attempts(ctx, id, before, limit)
	if err != nil {
		return WebhookAttemptListJSON{}, err
	}
	out := WebhookAttemptListJSON{Object: "list", Data: []WebhookAttemptJSON{}, HasMore: len(atts) > limit}
	for i, at := range atts {
		if i == limit {
			break
		}
		v := WebhookAttemptJSON{ID: at.ID, Object: "webhook_attempt", DeliveryID: at.DeliveryID, EventID: at.EventID,
			EventType: at.EventType, Attempt: at.Attempt, Created: timestamp(at.At), LatencyMS: at.Latency.Milliseconds(),
			ResponseExcerpt: at.Excerpt, Succeeded: at.Succeeded, Redelivery: at.Manual, NextAttemptAt: tsPtr(at.NextAttemptAt)}
		if at.StatusCode != 0 {
			v.StatusCode = &at.StatusCode
		}
		if at.Error != "" {
			v.Error = &at.Error
		}
		out.Data = append(out.Data, v)
	}
	return out, nil
}

// WebhookDeliveryJSON answers a redelivery.
type WebhookDeliveryJSON struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	EndpointID string `json:"endpoint_id"`
	EventID    string `json:"event_id"`
	State      string `json:"state"`
}

// RedeliverWebhook sends an event of the caller's account and
// environment to one of its endpoints again, once (a manual delivery is
// not retried and not ordered behind the object's other events), whatever
// types the endpoint subscribes to. A disabled endpoint gets nothing.
func (a *App) RedeliverWebhook(ctx context.Context, p account.Principal, id, eventID string) (WebhookDeliveryJSON, error) {
	const op = "app.RedeliverWebhook"
	if eventID == "" {
		return WebhookDeliveryJSON{}, apperr.Param(op, "event_id", "event_id is required")
	}
	var d WebhookDeliveryJSON
	err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		ep, err := q.Endpoint(ctx, p.AccountID, p.Environment, id, false)
		if err != nil {
			return err
		}
		if ep.DisabledAt != nil {
			return apperr.E(op, apperr.Conflict, CodeWebhookEndpointDisabled, "the endpoint is disabled: enable it first")
		}
		ev, ok, err := q.Event(ctx, p.AccountID, p.Environment, eventID)
		if err != nil {
			return err
		}
		if !ok {
			return apperr.NotFoundf(op, CodeEventNotFound)
		}
		now := a.clock.Now()
		nd := webhook.Delivery{ID: a.IDs.New("delivery"), EndpointID: ep.ID, AccountID: ep.AccountID, Environment: ep.Environment,
			EventID: ev.ID, ObjectID: ev.ObjectID, Manual: true, CreatedAt: now}
		d = WebhookDeliveryJSON{ID: nd.ID, Object: "webhook_delivery", EndpointID: ep.ID, EventID: ev.ID, State: webhook.StatePending}
		return a.addDeliveries(ctx, q, []webhook.Delivery{nd}, now)
	})
	return d, err
}
