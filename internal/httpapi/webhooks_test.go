package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/webhooks"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/webhook"
	"github.com/farebox/farebox/internal/webhook/webhooktest"
)

// received is one POST a test receiver got.
type received struct {
	EventID   string
	Signature string
	Body      []byte
	Type      string
	ObjectID  string
}

// receiver is a local webhook receiver; answer decides each answer (n
// counts the requests from 0).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				ObjectID string `json:"object_id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, received{EventID: r.Header.Get(webhook.EventIDHeader), Signature: r.Header.Get(webhook.SignatureHeader),
			Body: body, Type: ev.Type, ObjectID: ev.Data.ObjectID})
		rc.mu.Unlock()
		if ev.ID != r.Header.Get(webhook.EventIDHeader) {
			t.Errorf("event id header %q, body %q", r.Header.Get(webhook.EventIDHeader), ev.ID)
		}
		if rc.answer != nil {
			rc.answer(n, w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) all() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func (rc *receiver) types() []string {
	var out []string
	for _, g := range rc.all() {
		out = append(out, g.Type)
	}
	return out
}

// drain runs the due jobs until none is due.
func drain(t *testing.T, e *apitest.Env) {
	t.Helper()
	for {
		n, err := e.App.Jobs.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// createEndpoint creates an endpoint with key and returns it (with its secret).
func createEndpoint(t *testing.T, e *apitest.Env, key, url string, types ...string) map[string]any {
	t.Helper()
	return e.Must(201, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Key: key,
		Body: map[string]any{"url": url, "enabled_events": types}}).Map(t)
}

func attempts(t *testing.T, e *apitest.Env, key, id string) []map[string]any {
	t.Helper()
	l := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints/" + id + "/attempts.json?limit=100", Key: key}).Map(t)
	var out []map[string]any
	for _, d := range l["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// TestWebhookDeliveries: an endpoint receives the events of its account
// and environment it asked for, each signed (the signature verifies with
// the secret shown at creation), its body the event as GET
// /v1/events.json lists it, its id in a header; the log lists every
// attempt; a rotation signs with both secrets during the overlap and with
// the new one after; a redelivery sends the same event again; a deleted
// endpoint is gone.
func TestWebhookDeliveries(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t, nil)
		only := newReceiver(t, nil)
		ep := createEndpoint(t, e, e.TestKey, rc.URL+"/hooks", "*")
		secret := str(ep["secret"])
		if !strings.HasPrefix(secret, webhook.SecretPrefix) || ep["status"] != "enabled" || ep["environment"] != "test" {
			t.Fatalf("created: %v", ep)
		}
		id := str(ep["id"])
		createEndpoint(t, e, e.TestKey, only.URL, "ticket.issued")
		if got := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints/" + id + ".json", Key: e.TestKey}).Map(t); got["secret"] != nil || got["url"] != rc.URL+"/hooks" {
			t.Errorf("GET endpoint: %v", got)
		}
		if l := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints.json", Key: e.TestKey}).Map(t); len(l["data"].([]any)) != 2 {
			t.Errorf("list: %v", l)
		}
		if l := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints.json", Key: e.LiveKey}).Map(t); len(l["data"].([]any)) != 0 {
			t.Errorf("the live environment sees test endpoints: %v", l)
		}

		ids := productIDs(t, e)
		order(t, e, e.LiveKey, ids["single/adult"]) // live: not for these endpoints
		o := order(t, e, e.TestKey, ids["single/adult"])
		mustActivate(t, e, "v9", str(o.Coupons[0]["id"]), map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")})
		drain(t, e)

		events := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json", Key: e.TestKey}).Map(t)["data"].([]any)
		listed := map[string]string{}
		for _, ev := range events {
			listed[str(ev.(map[string]any)["id"])] = asJSONString(t, ev)
		}
		got := rc.all()
		if len(got) != 3 || len(listed) != 3 {
			t.Fatalf("received %d deliveries, %d events", len(got), len(listed))
		}
		for _, g := range got {
			if err := webhooktest.Verify(g.Signature, g.Body, secret, e.Clock.Now(), 5*time.Minute); err != nil {
				t.Errorf("%s: %v (%s)", g.Type, err, g.Signature)
			}
			var body any
			if err := json.Unmarshal(g.Body, &body); err != nil || asJSONString(t, body) != listed[g.EventID] {
				t.Errorf("delivered %s\nlisted %s", g.Body, listed[g.EventID])
			}
		}
		if d := only.types(); len(d) != 1 || d[0] != "ticket.issued" {
			t.Errorf("the ticket.issued endpoint got %v", d)
		}
		log := attempts(t, e, e.TestKey, id)
		if len(log) != 3 {
			t.Fatalf("log: %v", log)
		}
		for _, a := range log {
			if a["succeeded"] != true || a["status_code"] != float64(200) || a["attempt"] != float64(1) || a["error"] != nil || a["next_attempt_at"] != nil {
				t.Errorf("attempt: %v", a)
			}
		}

		// Rotation with an hour's overlap: two signatures, each secret verifies.
		rot := e.Must(200, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints/" + id + "/rotate_secret.json", Key: e.TestKey,
			Body: map[string]any{"overlap_seconds": 3600}}).Map(t)
		newSecret := str(rot["secret"])
		if newSecret == secret || !strings.HasPrefix(newSecret, webhook.SecretPrefix) || rot["previous_secret_expires_at"] != "2026-06-15T11:00:00Z" {
			t.Fatalf("rotated: %v", rot)
		}
		order(t, e, e.TestKey, ids["single/adult"])
		drain(t, e)
		last := rc.all()[3]
		if strings.Count(last.Signature, "v1=") != 2 {
			t.Errorf("during the overlap: %s", last.Signature)
		}
		for _, s := range []string{secret, newSecret} {
			if err := webhooktest.Verify(last.Signature, last.Body, s, e.Clock.Now(), 5*time.Minute); err != nil {
				t.Errorf("during the overlap: %v", err)
			}
		}
		e.Clock.Advance(61 * time.Minute)
		order(t, e, e.TestKey, ids["single/adult"])
		drain(t, e)
		last = rc.all()[4]
		if strings.Count(last.Signature, "v1=") != 1 || webhooktest.Verify(last.Signature, last.Body, newSecret, e.Clock.Now(), time.Minute) != nil ||
			webhooktest.Verify(last.Signature, last.Body, secret, e.Clock.Now(), time.Minute) == nil {
			t.Errorf("after the overlap: %s", last.Signature)
		}

		// Redelivery of the first event: the same event id again, logged as a redelivery.
		first := got[0]
		r := e.Must(202, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints/" + id + "/redeliver.json", Key: e.TestKey,
			Body: map[string]any{"event_id": first.EventID}}).Map(t)
		if r["state"] != "pending" || r["event_id"] != first.EventID {
			t.Errorf("redeliver: %v", r)
		}
		drain(t, e)
		again := rc.all()[5]
		if again.EventID != first.EventID || string(again.Body) != string(first.Body) {
			t.Errorf("redelivered %s, first %s", again.Body, first.Body)
		}
		if a := attempts(t, e, e.TestKey, id)[0]; a["redelivery"] != true || a["event_id"] != first.EventID || a["succeeded"] != true {
			t.Errorf("redelivery attempt: %v", a)
		}
		// Paging the log.
		page := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints/" + id + "/attempts.json?limit=2", Key: e.TestKey}).Map(t)
		data := page["data"].([]any)
		next := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints/" + id + "/attempts.json?limit=10&starting_after=" +
			str(data[1].(map[string]any)["id"]), Key: e.TestKey}).Map(t)
		if page["has_more"] != true || len(next["data"].([]any)) != 4 || next["has_more"] != false {
			t.Errorf("log pages: %v / %v", page, next)
		}

		e.Must(200, apitest.Req{Method: "DELETE", Path: "/v1/webhook_endpoints/" + id + ".json", Key: e.TestKey})
		e.Must(404, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints/" + id + ".json", Key: e.TestKey})
		order(t, e, e.TestKey, ids["single/adult"])
		drain(t, e)
		if n := len(rc.all()); n != 6 {
			t.Errorf("a deleted endpoint got %d deliveries", n)
		}
	})
}

// TestWebhookOrderPerObject: the events of one object reach an endpoint in
// the order of the changes: while the first is being retried, the later
// ones wait, and they follow once it succeeded; every retry carries the
// same event id.
func TestWebhookOrderPerObject(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
			if n < 2 {
				http.Error(w, "not yet", http.StatusInternalServerError)
			}
		})
		ep := createEndpoint(t, e, e.TestKey, rc.URL, "coupon.tariff_settings_updated", "coupon.activated")
		ids := productIDs(t, e)
		_, cid := orderFirst(t, e, e.TestKey, ids["month/adult"])
		for _, pc := range []string{"10115", "10117"} {
			e.Must(200, apitest.Req{Method: "POST", Path: "/v9/ticketing/coupons/" + cid + "/tariff_settings.json",
				Body: map[string]any{"tariff_settings": map[string]any{"german_postal_code": pc}}})
		}
		mustActivate(t, e, "v9", cid, map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")})
		drain(t, e)
		if n := len(rc.all()); n != 1 {
			t.Fatalf("while the first event fails, %d deliveries were made", n)
		}
		e.Clock.Advance(13 * time.Second)
		drain(t, e)
		if n := len(rc.all()); n != 2 {
			t.Fatalf("after the first retry, %d deliveries", n)
		}
		e.Clock.Advance(26 * time.Second)
		drain(t, e)
		got := rc.all()
		want := []string{"coupon.tariff_settings_updated", "coupon.tariff_settings_updated", "coupon.tariff_settings_updated",
			"coupon.tariff_settings_updated", "coupon.activated"}
		if d := rc.types(); asJSONString(t, d) != asJSONString(t, want) {
			t.Fatalf("order: %v", d)
		}
		if got[0].EventID != got[1].EventID || got[1].EventID != got[2].EventID || got[2].EventID == got[3].EventID {
			t.Errorf("retries must carry the same event id: %v %v %v %v", got[0].EventID, got[1].EventID, got[2].EventID, got[3].EventID)
		}
		var pcs []string
		for _, g := range got[2:4] {
			var ev struct {
				Data struct {
					Object struct {
						TariffSettings map[string]any `json:"tariff_settings"`
					} `json:"object"`
				} `json:"data"`
			}
			_ = json.Unmarshal(g.Body, &ev)
			pcs = append(pcs, str(ev.Data.Object.TariffSettings["german_postal_code"]))
		}
		if pcs[0] != "10115" || pcs[1] != "10117" {
			t.Errorf("tariff settings delivered out of order: %v", pcs)
		}
		log := attempts(t, e, e.TestKey, str(ep["id"]))
		var codes []any
		for i := len(log) - 1; i >= 0; i-- {
			codes = append(codes, log[i]["status_code"])
		}
		if asJSONString(t, codes) != "[500,500,200,200,200]" || log[4]["next_attempt_at"] == nil || log[4]["response_excerpt"] != "not yet\n" ||
			log[4]["error"] != "HTTP 500" || log[2]["attempt"] != float64(3) {
			t.Errorf("log: %v", log)
		}
	})
}

// TestWebhookReceiverFailures: a receiver that answers slowly succeeds
// (latency logged); one that times out, closes the connection, redirects
// or answers 500 fails with the reason in the log; a long answer is cut
// to the excerpt; nothing follows a redirect.
func TestWebhookReceiverFailures(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Webhooks: webhooks.Options{Timeout: 500 * time.Millisecond}}, func(t *testing.T, e *apitest.Env) {
		followed := newReceiver(t, nil)
		cases := []struct {
			name   string
			answer func(n int, w http.ResponseWriter, r *http.Request)
			check  func(a map[string]any) bool
		}{
			{"slow", func(int, http.ResponseWriter, *http.Request) { time.Sleep(200 * time.Millisecond) },
				func(a map[string]any) bool {
					return a["succeeded"] == true && a["status_code"] == float64(200) && a["latency_ms"].(float64) >= 200
				}},
			{"timeout", func(_ int, _ http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}, func(a map[string]any) bool {
				return a["succeeded"] == false && a["status_code"] == nil && a["error"] == "timed out"
			}},
			{"close", func(_ int, w http.ResponseWriter, _ *http.Request) {
				c, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					c.Close()
				}
			}, func(a map[string]any) bool {
				return a["succeeded"] == false && a["status_code"] == nil && a["error"] == "connection closed without an answer"
			}},
			{"redirect", func(_ int, w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, followed.URL, http.StatusFound)
			}, func(a map[string]any) bool {
				return a["succeeded"] == false && a["status_code"] == float64(302) && strings.Contains(str(a["error"]), "redirect")
			}},
			{"500", func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(500)
				fmt.Fprint(w, "boom")
			}, func(a map[string]any) bool {
				return a["succeeded"] == false && a["status_code"] == float64(500) && a["response_excerpt"] == "boom" && a["next_attempt_at"] != nil
			}},
			{"long", func(_ int, w http.ResponseWriter, _ *http.Request) {
				fmt.Fprint(w, strings.Repeat("ü", 100_000))
			}, func(a map[string]any) bool {
				x := str(a["response_excerpt"])
				return a["succeeded"] == true && len(x) == webhook.ExcerptBytes && x == strings.Repeat("ü", webhook.ExcerptBytes/2)
			}},
		}
		eps := map[string]string{}
		for _, c := range cases {
			rc := newReceiver(t, c.answer)
			eps[c.name] = str(createEndpoint(t, e, e.TestKey, rc.URL, "order.created")["id"])
		}
		ids := productIDs(t, e)
		order(t, e, e.TestKey, ids["single/adult"])
		drain(t, e)
		for _, c := range cases {
			log := attempts(t, e, e.TestKey, eps[c.name])
			if len(log) != 1 || !c.check(log[0]) {
				t.Errorf("%s: %v", c.name, log)
			}
		}
		if n := len(followed.all()); n != 0 {
			t.Errorf("a redirect was followed")
		}
	})
}

// TestWebhookDisabling: an endpoint whose deliveries all fail is retried
// with growing delays for 3 days, then the delivery has failed and the
// endpoint is disabled with the reason shown; it gets no new deliveries
// until the partner enables it again.
func TestWebhookDisabling(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", 503) })
		id := str(createEndpoint(t, e, e.TestKey, rc.URL, "order.created")["id"])
		ids := productIDs(t, e)
		order(t, e, e.TestKey, ids["single/adult"])
		start := e.Clock.Now()
		get := func() map[string]any {
			return e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints/" + id + ".json", Key: e.TestKey}).Map(t)
		}
		prev := start
		for i := 0; i < 100 && get()["status"] == "enabled"; i++ {
			before := len(rc.all())
			drain(t, e)
			if len(rc.all()) > before {
				prev = e.Clock.Now()
			}
			e.Clock.Advance(time.Hour)
		}
		ep := get()
		if ep["status"] != "disabled" || !strings.Contains(str(ep["disabled_reason"]), "HTTP 503") || ep["failing_since"] != "2026-06-15T10:00:00Z" {
			t.Fatalf("after 3 days of failures: %v", ep)
		}
		if d := prev.Sub(start); d < webhook.DisableAfter || d > webhook.DisableAfter+time.Hour {
			t.Errorf("disabled %v after the first failure", d)
		}
		log := attempts(t, e, e.TestKey, id)
		for _, a := range log[1:] { // each retry after Backoff(n) plus up to a quarter of jitter, the last at the window's end
			at, _ := time.Parse(time.RFC3339, str(a["created"]))
			next, _ := time.Parse(time.RFC3339, str(a["next_attempt_at"]))
			b := webhook.Backoff(int(a["attempt"].(float64)))
			if d := next.Sub(at); (d < b || d > b+b/4+time.Second) && !next.Equal(start.Add(webhook.RetryWindow)) {
				t.Errorf("attempt %v: next after %v, backoff %v", a["attempt"], d, b)
			}
		}
		if log[0]["next_attempt_at"] != nil || len(log) < 10 {
			t.Errorf("the last attempt is not final, or too few attempts: %d %v", len(log), log[0])
		}
		n := len(rc.all())
		order(t, e, e.TestKey, ids["single/adult"])
		e.Clock.Advance(time.Hour)
		drain(t, e)
		if len(rc.all()) != n {
			t.Errorf("a disabled endpoint got a delivery")
		}
		ev := str(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json?limit=1", Key: e.TestKey}).Map(t)["data"].([]any)[0].(map[string]any)["id"])
		e.Must(409, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints/" + id + "/redeliver.json", Key: e.TestKey, Body: map[string]any{"event_id": ev}})
		en := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v1/webhook_endpoints/" + id + ".json", Key: e.TestKey, Body: map[string]any{"disabled": false}}).Map(t)
		if en["status"] != "enabled" || en["failing_since"] != nil || en["disabled_reason"] != nil {
			t.Errorf("enabled: %v", en)
		}
		dis := e.Must(200, apitest.Req{Method: "PATCH", Path: "/v1/webhook_endpoints/" + id + ".json", Key: e.TestKey, Body: map[string]any{"disabled": true}}).Map(t)
		if dis["status"] != "disabled" || dis["disabled_reason"] != "disabled by the account" {
			t.Errorf("disabled by the account: %v", dis)
		}
	})
}

// TestWebhookRefusals: bad endpoints and foreign ids are a clear 4xx
// naming the field (or 404), and nothing is written.
func TestWebhookRefusals(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t, nil)
		bad := func(key string, body any, field string) {
			t.Helper()
			r := e.Must(400, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Key: key, Body: body}).Map(t)
			det, _ := r["details"].([]any)
			if len(det) == 0 || det[0].(map[string]any)["field"] != field {
				t.Errorf("%v: %v (want field %s)", body, r, field)
			}
		}
		all := []string{"*"}
		for _, u := range []string{"", "not a url", "ftp://partner.example/", "http://93.184.215.14/hooks", "https://127.0.0.1/x",
			"https://[::1]/", "https://10.1.2.3/", "https://192.168.0.10/", "https://172.16.0.1/", "https://169.254.169.254/latest/meta-data",
			"https://[fe80::1]/", "https://224.0.0.1/", "https://0.0.0.0/", "https://100.64.1.1/", "https://localhost:8443/",
			"https://user:pw@93.184.215.14/", "https://93.184.215.14/#frag", "https://nonexistent.invalid/", "https://93.184.215.14:99999/",
			"https://" + strings.Repeat("a", 2050) + ".example/", "/relative", "https://[::ffff:127.0.0.1]/"} {
			bad(e.LiveKey, map[string]any{"url": u, "enabled_events": all}, "url")
		}
		bad(e.TestKey, map[string]any{"url": "http://10.0.0.1/", "enabled_events": all}, "url")
		bad(e.TestKey, map[string]any{"url": "http://169.254.169.254/", "enabled_events": all}, "url")
		bad(e.LiveKey, map[string]any{"enabled_events": all}, "url")
		for _, types := range []any{nil, []string{}, []string{"order.deleted"}, []string{"order.created", "order.created"}, []string{"*", "Order.Created"}} {
			bad(e.LiveKey, map[string]any{"url": "https://93.184.215.14/", "enabled_events": types}, "enabled_events")
		}
		bad(e.LiveKey, map[string]any{"url": "https://93.184.215.14/", "enabled_events": all, "description": strings.Repeat("x", 501)}, "description")
		e.Must(400, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Key: e.LiveKey, Body: map[string]any{"url": "https://93.184.215.14/", "enabled_events": "*"}})
		e.Must(400, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Key: e.LiveKey, Body: map[string]any{"url": "https://93.184.215.14/", "enabled_events": all, "secret": "mine"}})
		e.Must(401, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Body: map[string]any{"url": "https://93.184.215.14/", "enabled_events": all}})
		for _, key := range []string{e.LiveKey, e.TestKey} {
			if l := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints.json", Key: key}).Map(t); len(l["data"].([]any)) != 0 {
				t.Fatalf("a refused endpoint was written: %v", l)
			}
		}

		// A public address and a test endpoint on loopback are accepted.
		live := createEndpoint(t, e, e.LiveKey, "https://93.184.215.14/hooks", "*")
		test := createEndpoint(t, e, e.TestKey, rc.URL, "*")
		lid, tid := str(live["id"]), str(test["id"])

		// Another account's endpoint, and the other environment's, are unknown.
		_, otherKey := e.NewAccount("Other GmbH", account.Live)
		for _, c := range []struct{ key, id string }{{otherKey, lid}, {e.TestKey, lid}, {e.LiveKey, tid}, {e.LiveKey, "farebox-webhook-nope"}} {
			for _, r := range []apitest.Req{
				{Method: "GET", Path: "/v1/webhook_endpoints/" + c.id + ".json"},
				{Method: "PATCH", Path: "/v1/webhook_endpoints/" + c.id + ".json", Body: map[string]any{"description": "x"}},
				{Method: "DELETE", Path: "/v1/webhook_endpoints/" + c.id + ".json"},
				{Method: "POST", Path: "/v1/webhook_endpoints/" + c.id + "/rotate_secret.json"},
				{Method: "GET", Path: "/v1/webhook_endpoints/" + c.id + "/attempts.json"},
				{Method: "POST", Path: "/v1/webhook_endpoints/" + c.id + "/redeliver.json", Body: map[string]any{"event_id": "farebox-event-x"}},
			} {
				r.Key = c.key
				if m := e.Must(404, r).Map(t); m["code"] != "webhook_endpoint_not_found" {
					t.Errorf("%s %s: %v", r.Method, r.Path, m)
				}
			}
		}
		// Another account's (or environment's) event is unknown too.
		ids := productIDs(t, e)
		order(t, e, e.LiveKey, ids["single/adult"])
		ev := str(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json?limit=1", Key: e.LiveKey}).Map(t)["data"].([]any)[0].(map[string]any)["id"])
		if m := e.Must(404, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints/" + tid + "/redeliver.json", Key: e.TestKey,
			Body: map[string]any{"event_id": ev}}).Map(t); m["code"] != "event_not_found" {
			t.Errorf("redeliver a live event to a test endpoint: %v", m)
		}
		e.Must(400, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints/" + tid + "/redeliver.json", Key: e.TestKey, Body: map[string]any{}})

		// Updates are checked like creation; a refused one changes nothing.
		for body, field := range map[string]string{`{"url":"https://10.0.0.1/"}`: "url", `{"enabled_events":["nope"]}`: "enabled_events",
			`{"enabled_events":[]}`: "enabled_events"} {
			r := e.Must(400, apitest.Req{Method: "PATCH", Path: "/v1/webhook_endpoints/" + lid + ".json", Key: e.LiveKey, Body: body}).Map(t)
			if det, _ := r["details"].([]any); len(det) == 0 || det[0].(map[string]any)["field"] != field {
				t.Errorf("%s: %v", body, r)
			}
		}
		for q, field := range map[string]string{"?limit=0": "limit", "?starting_after=farebox-attempt-nope": "starting_after", "?x=1": "x",
			"?ending_before=farebox-attempt-nope": "ending_before"} {
			wantInvalidParameter(t, e, e.LiveKey, "/v1/webhook_endpoints/"+lid+"/attempts.json"+q, field)
		}
		for _, o := range []int64{-1, 604801} {
			e.Must(400, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints/" + lid + "/rotate_secret.json", Key: e.LiveKey, Body: map[string]any{"overlap_seconds": o}})
		}
		if got := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints/" + lid + ".json", Key: e.LiveKey}).Map(t); asJSONString(t, got["enabled_events"]) != `["*"]` ||
			got["url"] != "https://93.184.215.14/hooks" || got["previous_secret_expires_at"] != nil {
			t.Errorf("a refused update changed the endpoint: %v", got)
		}

		// At most 16 endpoints per account and environment.
		for i := 1; i < webhook.MaxEndpoints; i++ {
			createEndpoint(t, e, e.LiveKey, fmt.Sprintf("https://93.184.215.14/%d", i), "*")
		}
		if m := e.Must(409, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Key: e.LiveKey,
			Body: map[string]any{"url": "https://93.184.215.14/17", "enabled_events": all}}).Map(t); m["code"] != "too_many_webhook_endpoints" {
			t.Errorf("17th endpoint: %v", m)
		}
	})
}

// TestWebhookConnectTimeCheck: the address is checked again when the
// sender connects (the dialer's Control), so a live endpoint whose name
// resolves to a loopback address by then (DNS rebinding) is not called;
// the operator's --webhook-allow-private lets it through.
func TestWebhookConnectTimeCheck(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprint("allow-private=", allow), func(t *testing.T) {
			apitest.ForEachEngine(t, apitest.Options{Webhooks: webhooks.Options{AllowPrivate: allow}}, func(t *testing.T, e *apitest.Env) {
				rc := newReceiver(t, nil)
				// Created while the name resolved to a public address: written
				// directly, as the check at creation would have let it pass.
				now := e.Clock.Now()
				ep := webhook.Endpoint{ID: "farebox-webhook-rebound", AccountID: e.AccountID, Environment: account.Live,
					URL: rc.URL, EventTypes: []string{"*"}, Secret: webhook.NewSecret(), CreatedAt: now, UpdatedAt: now}
				if err := e.Store.Write(context.Background(), func(q store.Q) error { return q.InsertEndpoint(context.Background(), ep) }); err != nil {
					t.Fatal(err)
				}
				ids := productIDs(t, e)
				order(t, e, e.LiveKey, ids["single/adult"])
				drain(t, e)
				log := attempts(t, e, e.LiveKey, ep.ID)
				if allow {
					if len(rc.all()) != 1 || log[0]["succeeded"] != true {
						t.Errorf("with --webhook-allow-private: %v", log)
					}
					return
				}
				if len(rc.all()) != 0 || len(log) != 1 || !strings.HasPrefix(str(log[0]["error"]), "connection refused by policy") {
					t.Errorf("a loopback address was called: %d %v", len(rc.all()), log)
				}
			})
		})
	}
}
