package httpapi_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/webhook"
	"github.com/farebox/farebox/internal/webhook/webhooktest"
)

var whsecRe = regexp.MustCompile(webhook.SecretPrefix + `[A-Za-z0-9_\-]+`)

// apiEndpoints are key's webhook endpoints as the API lists them: id by url.
func apiEndpoints(t *testing.T, e *apitest.Env, key string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, x := range e.Must(200, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints.json", Key: key}).Map(t)["data"].([]any) {
		ids[str(x.(map[string]any)["url"])] = str(x.(map[string]any)["id"])
	}
	return ids
}

// TestDashboardWebhooks drives the dashboard's webhooks section on both
// engines as a partner's person would: forged and bad forms refused with
// nothing made (a live endpoint must be https to a public address, as in
// the API), an endpoint created with its secret shown once, a delivery to
// a local receiver listed with its status code and latency and signed
// with that secret, a failing receiver's attempt with its response and
// next attempt, a redelivery, disable (nothing delivered, redelivery
// refused), enable, rotate (the new secret signs), delete; another
// account's endpoint and the other environment's are 404.
func TestDashboardWebhooks(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t, nil)
		failing := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "receiver says boom", http.StatusInternalServerError)
		})
		v := dashSignedIn(t, e, "hooks@partner.example")
		other := newVisitor(t, e, "en")
		otherForm := other.must(200, "GET", "/dashboard/sign-in", nil)

		p := v.must(200, "GET", "/dashboard/test/webhooks", nil)
		for _, want := range []string{`id="create-webhook"`, `value="ticket.issued"`, `value="*"`, `href="/dashboard/test/webhooks" aria-current="page"`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("webhooks page lacks %s:\n%.3000s", want, p.Body)
			}
		}
		tok := p.csrf(t)
		create := func(env, u string, events ...string) url.Values {
			return url.Values{"csrf_token": {tok}, "url": {u}, "event": events, "description": {"orders of " + env}}
		}

		// Forged forms: no token, another visitor's token; nothing made.
		v.must(http.StatusForbidden, "POST", "/dashboard/test/webhooks", url.Values{"url": {rc.URL}, "event": {"*"}})
		forged := create("test", rc.URL, "*")
		forged.Set("csrf_token", otherForm.csrf(t))
		v.must(http.StatusForbidden, "POST", "/dashboard/test/webhooks", forged)
		// Bad input: the form again with the field's error and what was typed.
		if r := v.must(http.StatusBadRequest, "POST", "/dashboard/test/webhooks", create("test", rc.URL+"/typed")); !strings.Contains(r.Body, `id="events-error"`) ||
			!strings.Contains(r.Body, `value="`+rc.URL+`/typed"`) {
			t.Errorf("no events: %.3000s", r.Body)
		}
		if r := v.must(http.StatusBadRequest, "POST", "/dashboard/test/webhooks", create("test", "ftp://example.com/x", "order.created")); !strings.Contains(r.Body, `aria-invalid="true"`) ||
			!strings.Contains(r.Body, `id="url-error"`) || !strings.Contains(r.Body, `value="order.created" id="event-1" checked`) {
			t.Errorf("bad url: %.3000s", r.Body)
		}
		v.must(http.StatusBadRequest, "POST", "/dashboard/test/webhooks", create("test", rc.URL, "order.nope"))
		// Live: http and loopback are refused as the API refuses them.
		for _, u := range []string{rc.URL + "/live", "https://127.0.0.1/hooks"} {
			if r := v.must(http.StatusBadRequest, "POST", "/dashboard/live/webhooks", create("live", u, "*")); !strings.Contains(r.Body, `id="url-error"`) {
				t.Errorf("live %s: %.3000s", u, r.Body)
			}
			e.Must(400, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Key: e.LiveKey, Body: map[string]any{"url": u, "enabled_events": []string{"*"}}})
		}
		if n := len(apiEndpoints(t, e, e.TestKey)) + len(apiEndpoints(t, e, e.LiveKey)); n != 0 {
			t.Fatalf("refused forms made %d endpoints", n)
		}

		// Created: the secret once.
		made := v.postRedirect("/dashboard/test/webhooks", create("test", rc.URL+"/hooks", "*"))
		secret := whsecRe.FindString(made.Body)
		if secret == "" || !strings.Contains(made.Body, rc.URL+"/hooks") {
			t.Fatalf("created: %.3000s", made.Body)
		}
		v.postRedirect("/dashboard/test/webhooks", create("test", failing.URL, "order.created"))
		ids := apiEndpoints(t, e, e.TestKey)
		if len(ids) != 2 || len(apiEndpoints(t, e, e.LiveKey)) != 0 {
			t.Fatalf("endpoints test %v", ids)
		}
		id, failID := ids[rc.URL+"/hooks"], ids[failing.URL]
		list := v.must(200, "GET", "/dashboard/test/webhooks", nil)
		if strings.Contains(list.Body, secret) || !strings.Contains(list.Body, rc.URL+"/hooks") || !strings.Contains(list.Body, "orders of test") {
			t.Errorf("list after create: %.3000s", list.Body)
		}
		if l := v.must(200, "GET", "/dashboard/live/webhooks", nil); strings.Contains(l.Body, rc.URL) {
			t.Error("the live page lists a test endpoint")
		}

		// A delivery: listed with status, latency, signed with the secret shown.
		ids2 := productIDs(t, e)
		order(t, e, e.TestKey, ids2["single/adult"])
		drain(t, e)
		got := rc.all()
		if len(got) != 1 || webhooktest.Verify(got[0].Signature, got[0].Body, secret, e.Clock.Now(), time.Minute) != nil {
			t.Fatalf("delivered %d, signature with the shown secret: %v", len(got), got)
		}
		ev := got[0].EventID
		d := v.must(200, "GET", "/dashboard/test/webhooks/"+id, nil)
		for _, want := range []string{"order.created", ev, "200", " ms", `class="small-button redeliver"`, `value="` + ev + `"`} {
			if !strings.Contains(d.Body, want) {
				t.Errorf("endpoint page lacks %q:\n%.4000s", want, d.Body)
			}
		}
		f := v.must(200, "GET", "/dashboard/test/webhooks/"+failID, nil)
		for _, want := range []string{"500", "receiver says boom", "failed"} {
			if !strings.Contains(f.Body, want) {
				t.Errorf("failing endpoint's page lacks %q:\n%.4000s", want, f.Body)
			}
		}
		if strings.Contains(f.Body, `<td role="cell" data-label="Next attempt">—</td>`) {
			t.Errorf("a failed attempt without its next attempt:\n%.4000s", f.Body)
		}
		if fl := v.must(200, "GET", "/dashboard/test/webhooks", nil); strings.Count(fl.Body, `data-label="Failing since">—<`) != 1 {
			t.Errorf("failing since not shown for the failing endpoint:\n%.4000s", fl.Body)
		}

		// Redelivery: the same event again, logged as a redelivery.
		red := url.Values{"csrf_token": {tok}, "event_id": {ev}}
		v.must(http.StatusForbidden, "POST", "/dashboard/test/webhooks/"+id+"/redeliver", url.Values{"event_id": {ev}})
		if r := v.must(200, "POST", "/dashboard/test/webhooks/"+id+"/redeliver", red); !strings.Contains(r.Body, ev) || !strings.Contains(r.Body, `role="status"`) {
			t.Errorf("redeliver: %.3000s", r.Body)
		}
		drain(t, e)
		if got := rc.all(); len(got) != 2 || got[1].EventID != ev || string(got[1].Body) != string(got[0].Body) {
			t.Fatalf("redelivered: %v", got)
		}
		if r := v.must(200, "GET", "/dashboard/test/webhooks/"+id, nil); !strings.Contains(r.Body, ">redelivery<") {
			t.Errorf("no redelivery row: %.4000s", r.Body)
		}
		v.must(http.StatusNotFound, "POST", "/dashboard/test/webhooks/"+id+"/redeliver", url.Values{"csrf_token": {tok}, "event_id": {"event-nope"}})

		// Another account's endpoint, and this one in the other environment: 404.
		_, otherKey := e.NewAccount("Other Partner", account.Test)
		foreign := str(createEndpoint(t, e, otherKey, rc.URL+"/other", "*")["id"])
		for _, path := range []string{"/dashboard/test/webhooks/" + foreign, "/dashboard/live/webhooks/" + id} {
			v.must(http.StatusNotFound, "GET", path, nil)
			for _, act := range []string{"disable", "enable", "rotate", "delete", "redeliver"} {
				v.must(http.StatusNotFound, "POST", path+"/"+act, red)
			}
		}
		if len(apiEndpoints(t, e, otherKey)) != 1 {
			t.Error("the other account's endpoint was touched")
		}

		// Disable: nothing delivered, redelivery refused; enable again.
		v.must(http.StatusForbidden, "POST", "/dashboard/test/webhooks/"+id+"/disable", url.Values{})
		if r := v.must(200, "POST", "/dashboard/test/webhooks/"+id+"/disable", url.Values{"csrf_token": {tok}}); !strings.Contains(r.Body, "disabled by the account") {
			t.Errorf("disabled: %.3000s", r.Body)
		}
		order(t, e, e.TestKey, ids2["single/adult"])
		drain(t, e)
		if n := len(rc.all()); n != 2 {
			t.Errorf("a disabled endpoint got %d deliveries", n)
		}
		if r := v.must(http.StatusConflict, "POST", "/dashboard/test/webhooks/"+id+"/redeliver", red); !strings.Contains(r.Body, "enable it first") {
			t.Errorf("redeliver to a disabled endpoint: %.3000s", r.Body)
		}
		if r := v.must(200, "POST", "/dashboard/test/webhooks/"+id+"/enable", url.Values{"csrf_token": {tok}}); !strings.Contains(r.Body, "/disable") {
			t.Errorf("enabled: %.3000s", r.Body)
		}

		// Rotate: a new secret, once; it signs the next delivery.
		v.must(http.StatusForbidden, "POST", "/dashboard/test/webhooks/"+id+"/rotate", url.Values{})
		rot := v.postRedirect("/dashboard/test/webhooks/"+id+"/rotate", url.Values{"csrf_token": {tok}})
		newSecret := whsecRe.FindString(rot.Body)
		if newSecret == "" || newSecret == secret {
			t.Fatalf("rotated: %.3000s", rot.Body)
		}
		order(t, e, e.TestKey, ids2["single/adult"])
		drain(t, e)
		last := rc.all()[len(rc.all())-1]
		if webhooktest.Verify(last.Signature, last.Body, newSecret, e.Clock.Now(), time.Minute) != nil {
			t.Errorf("the rotated secret does not verify %s", last.Signature)
		}
		if strings.Contains(v.must(200, "GET", "/dashboard/test/webhooks", nil).Body, newSecret) {
			t.Error("the new secret is shown again")
		}

		// Delete.
		v.must(http.StatusForbidden, "POST", "/dashboard/test/webhooks/"+id+"/delete", url.Values{})
		v.must(200, "POST", "/dashboard/test/webhooks/"+id+"/delete", url.Values{"csrf_token": {tok}})
		v.must(http.StatusNotFound, "GET", "/dashboard/test/webhooks/"+id, nil)
		e.Must(404, apitest.Req{Method: "GET", Path: "/v1/webhook_endpoints/" + id + ".json", Key: e.TestKey})
		if ids := apiEndpoints(t, e, e.TestKey); len(ids) != 1 || ids[failing.URL] != failID {
			t.Errorf("after delete: %v", ids)
		}
	})
}

// TestDashboardWebhooksExtremes: the longest url and description the API
// takes are taken, one more character is refused on the form naming the
// field with nothing made; the delivery log pages by 25 with a next link
// (a cursor of another endpoint is 400); the 17th endpoint of an
// environment is refused (409) on the form.
func TestDashboardWebhooksExtremes(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t, nil)
		v := dashSignedIn(t, e, "hooks@partner.example")
		tok := v.must(200, "GET", "/dashboard/test/webhooks", nil).csrf(t)
		longURL := func(n int) string { return rc.URL + "/" + strings.Repeat("a", n-len(rc.URL)-1) }
		desc := strings.Repeat("ü", webhook.MaxDescription)
		form := func(u, d string) url.Values {
			return url.Values{"csrf_token": {tok}, "url": {u}, "description": {d}, "event": {"order.created"}}
		}
		for field, f := range map[string]url.Values{"url": form(longURL(webhook.MaxURLLength+1), ""), "description": form(rc.URL, desc+"x")} {
			if r := v.must(http.StatusBadRequest, "POST", "/dashboard/test/webhooks", f); !strings.Contains(r.Body, `id="`+field+`-error"`) {
				t.Errorf("too long %s: %.3000s", field, r.Body)
			}
		}
		if n := len(apiEndpoints(t, e, e.TestKey)); n != 0 {
			t.Fatalf("refused forms made %d endpoints", n)
		}
		u := longURL(webhook.MaxURLLength)
		if r := v.postRedirect("/dashboard/test/webhooks", form(u, desc)); !strings.Contains(r.Body, u) || !strings.Contains(r.Body, desc) {
			t.Fatalf("longest url and description: %.3000s", r.Body)
		}
		id := apiEndpoints(t, e, e.TestKey)[u]

		// 30 deliveries: 25 on the first page, 5 on the next.
		ids := productIDs(t, e)
		for i := 0; i < 30; i++ {
			order(t, e, e.TestKey, ids["single/adult"])
		}
		drain(t, e)
		if n := len(rc.all()); n != 30 {
			t.Fatalf("%d deliveries", n)
		}
		first := v.must(200, "GET", "/dashboard/test/webhooks/"+id, nil)
		next := regexp.MustCompile(`href="([^"]+)" id="next"`).FindStringSubmatch(first.Body)
		if c := strings.Count(first.Body, `data-label="Attempt"`); c != 25 || next == nil {
			t.Fatalf("first page: %d rows, next %v", c, next)
		}
		second := v.must(200, "GET", strings.ReplaceAll(next[1], "&amp;", "&"), nil)
		if c := strings.Count(second.Body, `data-label="Attempt"`); c != 5 || strings.Contains(second.Body, `id="next"`) {
			t.Errorf("second page: %d rows", c)
		}
		other := str(createEndpoint(t, e, e.TestKey, rc.URL+"/other", "order.created")["id"])
		order(t, e, e.TestKey, ids["single/adult"])
		drain(t, e)
		otherAttempt := str(attempts(t, e, e.TestKey, other)[0]["id"])
		v.must(http.StatusBadRequest, "GET", "/dashboard/test/webhooks/"+id+"?starting_after="+otherAttempt, nil)

		// Up to webhook.MaxEndpoints per environment; the next is refused.
		for n := 2; n < webhook.MaxEndpoints; n++ {
			v.postRedirect("/dashboard/test/webhooks", form(rc.URL+"/n"+strconv.Itoa(n), ""))
		}
		if r := v.must(http.StatusConflict, "POST", "/dashboard/test/webhooks", form(rc.URL+"/one-too-many", "")); !strings.Contains(r.Body, "at most 16") ||
			!strings.Contains(r.Body, "/one-too-many") {
			t.Errorf("17th endpoint: %.3000s", r.Body)
		}
		if n := len(apiEndpoints(t, e, e.TestKey)); n != webhook.MaxEndpoints {
			t.Errorf("%d endpoints, want %d", n, webhook.MaxEndpoints)
		}
		// The live environment has its own 16.
		if n := len(apiEndpoints(t, e, e.LiveKey)); n != 0 {
			t.Errorf("live has %d endpoints", n)
		}
	})
}
