package webhooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/deliveries"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/webhooks"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/webhook"
	"github.com/farebox/farebox/internal/webhook/webhooktest"
)

var start = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// fixture is the webhooks capability on a fresh store, wired as
// cmd/farebox does: the events it reads bodies from, the deliveries the
// changes add, and the instance's job runner (run with RunOnce).
type fixture struct {
	ctx   context.Context
	s     *store.Store
	clock *clocktest.Fixed
	jobs  *jobs.Runner
	dl    *deliveries.Service
	hooks *webhooks.Service
	// test and live are acc_1's principals, other acc_2's test one.
	test, live, other account.Principal
}

func newFixture(t *testing.T, s *store.Store) *fixture {
	f := &fixture{ctx: context.Background(), s: s, clock: clocktest.NewFixed(start),
		test:  account.Principal{AccountID: "acc_1", Environment: account.Test},
		live:  account.Principal{AccountID: "acc_1", Environment: account.Live},
		other: account.Principal{AccountID: "acc_2", Environment: account.Test}}
	f.jobs = jobs.New(s.Jobs(), f.clock, jobs.Options{})
	f.dl = deliveries.New(f.clock, "farebox")
	ev := events.New(store.NewView[events.Queries](s), f.clock, s.SettledEventSeq, nil)
	f.hooks = webhooks.New(store.NewView[webhooks.Queries](s), f.clock, "farebox", ev, f.dl,
		webhooks.Options{Jobs: f.jobs, Queue: s.JobsOf(deliveries.JobDeliver)})
	storetest.Accounts(t, s, start, "acc_1", "acc_2")
	return f
}

// change commits a change of p with one event of type typ about objectID,
// fanned out to p's endpoints in the same transaction (as internal/app's
// changes do), and returns the event.
func (f *fixture) change(t *testing.T, p account.Principal, typ event.Type, objectID string) event.Event {
	t.Helper()
	e := event.Event{ID: ident.Prefix("farebox").New("event"), AccountID: p.AccountID, Environment: p.Environment, Type: typ,
		ObjectID: objectID, APIVersion: event.APIVersion, CreatedAt: f.clock.Now(), Object: []byte(`{"id":"` + objectID + `","note":"Ω 🚆"}`)}
	err := f.s.Write(f.ctx, func(q store.Q) error {
		hooks, err := q.InsertEvents(f.ctx, []event.Event{e})
		if err != nil || !hooks {
			return err
		}
		return f.dl.FanOut(f.ctx, q, p.AccountID, p.Environment, []event.Event{e})
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// run runs the due jobs once and returns how many ran.
func (f *fixture) run(t *testing.T) int {
	t.Helper()
	n, err := f.jobs.RunOnce(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// receiver is a local endpoint that records what it receives and answers
// with status.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	got    []received
}

type received struct {
	body               []byte
	sig, event, deliry string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{status: http.StatusOK}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{body: b, sig: req.Header.Get(webhook.SignatureHeader),
			event: req.Header.Get(webhook.EventIDHeader), deliry: req.Header.Get(webhook.DeliveryHeader)})
		status := r.status
		r.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "thanks ✓")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func code(err error) string {
	if e := apperr.As(err); e != nil {
		if e.Code == apperr.CodeInvalidParameter && len(e.Details) == 1 {
			return e.Code + " " + e.Details[0].Field
		}
		return e.Code
	}
	return ""
}

func ptr[T any](v T) *T { return &v }

// TestEndpointUseCases: creating needs a url and event types and checks
// each field; the secret is shown on creation only; a live endpoint may
// not reach loopback; updates, disabling and enabling; another account or
// environment sees nothing; an environment holds at most
// webhook.MaxEndpoints; deletion.
func TestEndpointUseCases(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		rc := newReceiver(t)
		all := []string{"*"}
		for _, c := range []struct {
			p    account.Principal
			req  webhooks.EndpointRequest
			want string
		}{
			{f.test, webhooks.EndpointRequest{EnabledEvents: &all}, "invalid_parameter url"},
			{f.test, webhooks.EndpointRequest{URL: &rc.URL}, "invalid_parameter enabled_events"},
			{f.test, webhooks.EndpointRequest{URL: &rc.URL, EnabledEvents: &[]string{"order.deleted"}}, "invalid_parameter enabled_events"},
			{f.test, webhooks.EndpointRequest{URL: &rc.URL, EnabledEvents: &all, Description: ptr(strings.Repeat("ü", webhook.MaxDescription+1))}, "invalid_parameter description"},
			{f.test, webhooks.EndpointRequest{URL: ptr("ftp://example.com/"), EnabledEvents: &all}, "invalid_parameter url"},
			{f.live, webhooks.EndpointRequest{URL: &rc.URL, EnabledEvents: &all}, "invalid_parameter url"},
		} {
			if _, err := f.hooks.CreateEndpoint(f.ctx, idempotency.Claim{}, c.p, c.req); code(err) != c.want {
				t.Errorf("%+v: %v, want %s", c.req, err, c.want)
			}
		}
		desc := "Kasse 東京 🚆"
		e, err := f.hooks.CreateEndpoint(f.ctx, idempotency.Claim{}, f.test, webhooks.EndpointRequest{URL: &rc.URL, EnabledEvents: &[]string{"order.created"}, Description: &desc})
		if err != nil || e.Object != "webhook_endpoint" || e.Status != "enabled" || e.Secret == "" || e.Description != desc ||
			e.Environment != "test" || time.Time(e.Created) != start || e.DisabledAt != nil || e.PreviousSecretExpiresAt != nil {
			t.Fatalf("CreateEndpoint = %+v, %v", e, err)
		}
		got, err := f.hooks.Endpoint(f.ctx, f.test, e.ID)
		if err != nil || got.Secret != "" || got.URL != e.URL {
			t.Errorf("Endpoint = %+v, %v (the secret is shown once)", got, err)
		}
		for _, p := range []account.Principal{f.live, f.other} {
			if _, err := f.hooks.Endpoint(f.ctx, p, e.ID); apperr.KindOf(err) != apperr.NotFound {
				t.Errorf("%+v reads the endpoint: %v", p, err)
			}
			if l, err := f.hooks.Endpoints(f.ctx, p); err != nil || len(l.Data) != 0 {
				t.Errorf("%+v lists %+v, %v", p, l, err)
			}
		}

		u, err := f.hooks.UpdateEndpoint(f.ctx, idempotency.Claim{}, f.test, e.ID, webhooks.EndpointRequest{EnabledEvents: &all, Disabled: ptr(true)})
		if err != nil || u.Status != "disabled" || *u.DisabledReason != "disabled by the account" || u.Description != desc || u.EnabledEvents[0] != "*" {
			t.Fatalf("disable = %+v, %v", u, err)
		}
		if _, err := f.hooks.UpdateEndpoint(f.ctx, idempotency.Claim{}, f.test, e.ID, webhooks.EndpointRequest{URL: ptr("http://")}); code(err) != "invalid_parameter url" {
			t.Errorf("bad url: %v", err)
		}
		if u, err = f.hooks.UpdateEndpoint(f.ctx, idempotency.Claim{}, f.test, e.ID, webhooks.EndpointRequest{Disabled: ptr(false)}); err != nil || u.Status != "enabled" || u.DisabledReason != nil {
			t.Fatalf("enable = %+v, %v", u, err)
		}
		if _, err := f.hooks.UpdateEndpoint(f.ctx, idempotency.Claim{}, f.other, e.ID, webhooks.EndpointRequest{Description: &desc}); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("another account updates: %v", err)
		}

		for range webhook.MaxEndpoints - 1 {
			f.clock.Advance(time.Second)
			if _, err := f.hooks.CreateEndpoint(f.ctx, idempotency.Claim{}, f.test, webhooks.EndpointRequest{URL: &rc.URL, EnabledEvents: &all}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.hooks.CreateEndpoint(f.ctx, idempotency.Claim{}, f.test, webhooks.EndpointRequest{URL: &rc.URL, EnabledEvents: &all}); code(err) != webhooks.CodeTooManyWebhookEndpoints {
			t.Errorf("one too many: %v", err)
		}
		l, err := f.hooks.Endpoints(f.ctx, f.test)
		if err != nil || len(l.Data) != webhook.MaxEndpoints || l.Data[0].ID != e.ID || l.Object != "list" || l.HasMore {
			t.Errorf("Endpoints: %d, %v", len(l.Data), err)
		}

		if _, err := f.hooks.DeleteEndpoint(f.ctx, idempotency.Claim{}, f.other, e.ID); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("another account deletes: %v", err)
		}
		if d, err := f.hooks.DeleteEndpoint(f.ctx, idempotency.Claim{}, f.test, e.ID); err != nil || !d.Deleted || d.ID != e.ID {
			t.Errorf("DeleteEndpoint = %+v, %v", d, err)
		}
		if _, err := f.hooks.Endpoint(f.ctx, f.test, e.ID); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("deleted endpoint: %v", err)
		}
		if types := webhooks.EventTypes(); types[0] != "*" || len(types) != len(event.Types)+1 {
			t.Errorf("EventTypes = %v", types)
		}
	})
}

// TestDeliveryAndRotation: a change's event reaches the endpoint with the
// body GET /v1/events.json shows and a signature the receiver verifies
// with the endpoint's secret; during a rotation's overlap each attempt is
// signed with the new and the old secret, after it with the new one only;
// the delivery log shows every attempt.
func TestDeliveryAndRotation(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		rc := newReceiver(t)
		e, err := f.hooks.CreateEndpoint(f.ctx, idempotency.Claim{}, f.test, webhooks.EndpointRequest{URL: &rc.URL, EnabledEvents: &[]string{"order.created"}})
		if err != nil {
			t.Fatal(err)
		}
		f.change(t, f.test, event.CouponActivated, "farebox-coupon-1") // not subscribed
		ev := f.change(t, f.test, event.OrderCreated, "farebox-order-1")
		if n := f.run(t); n != 1 {
			t.Fatalf("%d jobs ran, want the one delivery", n)
		}
		got := rc.received()
		want, _ := json.Marshal(events.Response(event.Page{Events: []event.Event{withSeq(t, f, ev)}}).Data[0])
		if len(got) != 1 || string(got[0].body) != string(want) || got[0].event != ev.ID || got[0].deliry == "" {
			t.Fatalf("received %+v\nwant body %s", got, want)
		}
		if err := webhooktest.Verify(got[0].sig, got[0].body, e.Secret, start, time.Minute); err != nil {
			t.Errorf("signature %q: %v", got[0].sig, err)
		}

		if _, err := f.hooks.RotateSecret(f.ctx, idempotency.Claim{}, f.test, e.ID, ptr(int64(-1))); code(err) != "invalid_parameter overlap_seconds" {
			t.Errorf("negative overlap: %v", err)
		}
		if _, err := f.hooks.RotateSecret(f.ctx, idempotency.Claim{}, f.test, e.ID, ptr(int64(webhook.MaxOverlap/time.Second)+1)); code(err) != "invalid_parameter overlap_seconds" {
			t.Errorf("overlap too long: %v", err)
		}
		r, err := f.hooks.RotateSecret(f.ctx, idempotency.Claim{}, f.test, e.ID, ptr(int64(60)))
		if err != nil || r.Secret == "" || r.Secret == e.Secret || r.PreviousSecretExpiresAt == nil || time.Time(*r.PreviousSecretExpiresAt) != start.Add(time.Minute) {
			t.Fatalf("RotateSecret = %+v, %v", r, err)
		}
		f.change(t, f.test, event.OrderCreated, "farebox-order-2")
		f.run(t)
		f.clock.Advance(61 * time.Second)
		if g, err := f.hooks.Endpoint(f.ctx, f.test, e.ID); err != nil || g.PreviousSecretExpiresAt != nil {
			t.Errorf("after the overlap: %+v, %v", g, err)
		}
		f.change(t, f.test, event.OrderCreated, "farebox-order-3")
		f.run(t)
		got = rc.received()
		if len(got) != 3 {
			t.Fatalf("received %d", len(got))
		}
		during, after := got[1], got[2]
		if strings.Count(during.sig, "v1=") != 2 || webhooktest.Verify(during.sig, during.body, e.Secret, start, time.Minute) != nil ||
			webhooktest.Verify(during.sig, during.body, r.Secret, start, time.Minute) != nil {
			t.Errorf("during the overlap %q is not signed with both secrets", during.sig)
		}
		now := f.clock.Now()
		if strings.Count(after.sig, "v1=") != 1 || webhooktest.Verify(after.sig, after.body, r.Secret, now, time.Minute) != nil ||
			webhooktest.Verify(after.sig, after.body, e.Secret, now, time.Minute) == nil {
			t.Errorf("after the overlap %q is not signed with the new secret alone", after.sig)
		}

		log, err := f.hooks.Attempts(f.ctx, f.test, e.ID, kit.ListRequest{Limit: "2"})
		if err != nil || len(log.Data) != 2 || !log.HasMore || log.Data[0].EventID != after.event || !log.Data[0].Succeeded ||
			*log.Data[0].StatusCode != 200 || log.Data[0].ResponseExcerpt != "thanks ✓" || log.Data[0].Attempt != 1 || log.Data[0].Object != "webhook_attempt" {
			t.Fatalf("Attempts = %+v, %v", log, err)
		}
		rest, err := f.hooks.Attempts(f.ctx, f.test, e.ID, kit.ListRequest{StartingAfter: log.Data[1].ID})
		if err != nil || len(rest.Data) != 1 || rest.HasMore || rest.Data[0].EventID != ev.ID {
			t.Errorf("second page %+v, %v", rest, err)
		}
		if _, err := f.hooks.Attempts(f.ctx, f.test, e.ID, kit.ListRequest{EndingBefore: log.Data[0].ID}); code(err) != "invalid_parameter ending_before" {
			t.Errorf("ending_before: %v", err)
		}
		if _, err := f.hooks.Attempts(f.ctx, f.other, e.ID, kit.ListRequest{}); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("another account's log: %v", err)
		}
	})
}

// withSeq is ev as stored (with its sequence number).
func withSeq(t *testing.T, f *fixture, ev event.Event) event.Event {
	t.Helper()
	stored, err := f.s.Read().EventsOf(f.ctx, ev.ObjectID)
	if err != nil || len(stored) != 1 {
		t.Fatal(len(stored), err)
	}
	return stored[0]
}

// TestFailuresAndRedelivery: a failed attempt is retried after its
// backoff, the endpoint failing since the first failure; an endpoint
// failing for webhook.DisableAfter is disabled with the reason; a
// redelivery needs an enabled endpoint and an event of the caller's, and
// is sent once, not retried, marked in the log.
func TestFailuresAndRedelivery(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		rc := newReceiver(t)
		rc.status = http.StatusInternalServerError
		all := []string{"*"}
		e, err := f.hooks.CreateEndpoint(f.ctx, idempotency.Claim{}, f.test, webhooks.EndpointRequest{URL: &rc.URL, EnabledEvents: &all})
		if err != nil {
			t.Fatal(err)
		}
		ev := f.change(t, f.test, event.OrderCreated, "farebox-order-1")
		f.run(t)
		log, err := f.hooks.Attempts(f.ctx, f.test, e.ID, kit.ListRequest{})
		if err != nil || len(log.Data) != 1 || log.Data[0].Succeeded || log.Data[0].NextAttemptAt == nil || *log.Data[0].StatusCode != 500 {
			t.Fatalf("after a failure: %+v, %v", log, err)
		}
		if g, _ := f.hooks.Endpoint(f.ctx, f.test, e.ID); g.FailingSince == nil || time.Time(*g.FailingSince) != start {
			t.Errorf("failing since %v", g.FailingSince)
		}
		if n := f.run(t); n != 0 {
			t.Errorf("%d jobs ran before the retry is due", n)
		}
		f.clock.Set(time.Time(*log.Data[0].NextAttemptAt))
		f.run(t)
		if got := rc.received(); len(got) != 2 || got[1].event != ev.ID {
			t.Fatalf("retry: received %d", len(got))
		}

		// Failing throughout the disable period: the attempt at its end
		// disables the endpoint.
		f.clock.Set(start.Add(webhook.DisableAfter))
		f.run(t)
		g, err := f.hooks.Endpoint(f.ctx, f.test, e.ID)
		if err != nil || g.Status != "disabled" || !strings.Contains(*g.DisabledReason, "every delivery attempt failed since") {
			t.Fatalf("after %s of failures: %+v, %v", webhook.DisableAfter, g, err)
		}
		if _, err := f.hooks.Redeliver(f.ctx, idempotency.Claim{}, f.test, e.ID, ev.ID); code(err) != webhooks.CodeWebhookEndpointDisabled {
			t.Errorf("redelivery to a disabled endpoint: %v", err)
		}

		rc.mu.Lock()
		rc.status = http.StatusNoContent
		rc.mu.Unlock()
		if _, err := f.hooks.UpdateEndpoint(f.ctx, idempotency.Claim{}, f.test, e.ID, webhooks.EndpointRequest{Disabled: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.hooks.Redeliver(f.ctx, idempotency.Claim{}, f.test, e.ID, ""); code(err) != "invalid_parameter event_id" {
			t.Errorf("no event id: %v", err)
		}
		foreign := f.change(t, f.other, event.OrderCreated, "farebox-order-9")
		if _, err := f.hooks.Redeliver(f.ctx, idempotency.Claim{}, f.test, e.ID, foreign.ID); code(err) != webhooks.CodeEventNotFound {
			t.Errorf("another account's event: %v", err)
		}
		if _, err := f.hooks.Redeliver(f.ctx, idempotency.Claim{}, f.other, e.ID, foreign.ID); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("another account's endpoint: %v", err)
		}
		before := len(rc.received())
		d, err := f.hooks.Redeliver(f.ctx, idempotency.Claim{}, f.test, e.ID, ev.ID)
		if err != nil || d.Object != "webhook_delivery" || d.State != webhook.StatePending || d.EventID != ev.ID || d.EndpointID != e.ID {
			t.Fatalf("Redeliver = %+v, %v", d, err)
		}
		f.run(t)
		got := rc.received()
		if len(got) != before+1 || got[len(got)-1].deliry != d.ID || got[len(got)-1].event != ev.ID {
			t.Fatalf("redelivery not received: %d after %d", len(got), before)
		}
		log, err = f.hooks.Attempts(f.ctx, f.test, e.ID, kit.ListRequest{Limit: "1"})
		if err != nil || !log.Data[0].Redelivery || !log.Data[0].Succeeded || log.Data[0].DeliveryID != d.ID {
			t.Errorf("redelivery in the log: %+v, %v", log.Data, err)
		}
	})
}

// TestRunnerWokenAfterCommit: with workers of their own (Runner, as
// farebox serve --webhook-workers), a committed change wakes them: the
// event arrives without waiting for the poll interval (an hour here).
func TestRunnerWokenAfterCommit(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		arrived := make(chan string, 1)
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- r.Header.Get(webhook.EventIDHeader)
		}))
		defer rc.Close()
		all := []string{"*"}
		if _, err := f.hooks.CreateEndpoint(f.ctx, idempotency.Claim{}, f.test, webhooks.EndpointRequest{URL: &rc.URL, EnabledEvents: &all}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(f.ctx)
		r := f.hooks.Runner(jobs.Options{PollInterval: time.Hour})
		r.Start(ctx, 2)
		defer r.Wait()
		defer cancel()
		ev := f.change(t, f.test, event.OrderCreated, "farebox-order-1")
		if id := <-arrived; id != ev.ID {
			t.Errorf("arrived %s, want %s", id, ev.ID)
		}
	})
}
