package httpapi_test

import (
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
)

var testKeyRe = regexp.MustCompile(`fbx_test_[A-Za-z0-9_]{20,}`) // a secret, not a listed prefix

// flashes are the stored one-time notices of the web sessions.
func flashes(t *testing.T, e *apitest.Env) []string {
	t.Helper()
	rows, err := e.Store.DB().QueryContext(context.Background(), `SELECT flash FROM web_sessions WHERE flash IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var f sql.NullString
		if err := rows.Scan(&f); err != nil {
			t.Fatal(err)
		}
		out = append(out, f.String)
	}
	return out
}

// TestSecretsShownOnce: a new API key (dashboard and console), a new
// webhook endpoint and a rotated signing secret are POST-redirect-GET: the
// POST answers 303 without the secret, the page after the redirect shows
// it once, a reload of that page shows it no more and creates nothing; the
// stored notice is sealed (the secret is not in the database) and another
// session of the same user never sees it. Both engines.
func TestSecretsShownOnce(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withOperator(t)}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		v := dashSignedIn(t, e, "once@partner.example")
		// The same user signed in a second time, in another browser.
		v2 := newVisitor(t, e, "en")
		sf := v2.must(200, "GET", "/dashboard/sign-in", nil)
		v2.must(http.StatusSeeOther, "POST", "/dashboard/sign-in", url.Values{"csrf_token": {sf.csrf(t)}, "email": {"once@partner.example"}, "password": {dashPassword}})

		keyCount := func() int {
			k, err := e.Store.Read().Keys(ctx, e.AccountID)
			if err != nil {
				t.Fatal(err)
			}
			return len(k)
		}
		// postOnce posts, wants 303 to want with no secret in the answer,
		// a sealed notice in the store, then the secret once.
		postOnce := func(c *visitor, path string, form url.Values, want string, secretRe *regexp.Regexp) string {
			t.Helper()
			r := c.must(http.StatusSeeOther, "POST", path, form)
			if loc := r.Header.Get("Location"); loc != want {
				t.Fatalf("POST %s: Location %q, want %q", path, loc, want)
			}
			if secretRe.MatchString(r.Body) {
				t.Errorf("POST %s: the answer holds the secret", path)
			}
			stored := flashes(t, e)
			if len(stored) != 1 {
				t.Fatalf("POST %s: %d stored notices", path, len(stored))
			}
			if secretRe.MatchString(stored[0]) || strings.Contains(stored[0], "whsec_") || strings.Contains(stored[0], "fbx_test_") {
				t.Errorf("POST %s: the stored notice is not sealed: %q", path, stored[0])
			}
			// The user's other session does not get it, nor consume it.
			if c == v {
				if p := v2.must(200, "GET", want, nil); secretRe.MatchString(p.Body) {
					t.Errorf("GET %s in the other session shows the secret", want)
				}
			}
			p := c.must(200, "GET", want, nil)
			secret := secretRe.FindString(p.Body)
			if secret == "" || !strings.Contains(p.Body, `class="notice" role="status"`) {
				t.Fatalf("GET %s after the redirect shows no secret:\n%.2000s", want, p.Body)
			}
			if n := len(flashes(t, e)); n != 0 {
				t.Errorf("GET %s: %d notices left", want, n)
			}
			// The reload: no secret, nothing created.
			again := c.must(200, "GET", want, nil)
			if strings.Contains(again.Body, secret) || strings.Contains(again.Body, `class="notice"`) {
				t.Errorf("the reload of %s shows the secret again", want)
			}
			return secret
		}

		// Dashboard: a key.
		kp := v.must(200, "GET", "/dashboard/test/keys", nil)
		before := keyCount()
		secret := postOnce(v, "/dashboard/test/keys", url.Values{"csrf_token": {kp.csrf(t)}}, "/dashboard/test/keys", testKeyRe)
		if keyCount() != before+1 {
			t.Errorf("keys %d → %d, want one more", before, keyCount())
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: secret})

		// Dashboard: a webhook endpoint, then its rotated secret.
		hp := v.must(200, "GET", "/dashboard/test/webhooks", nil)
		made := postOnce(v, "/dashboard/test/webhooks", url.Values{"csrf_token": {hp.csrf(t)}, "url": {"http://127.0.0.1:9/hooks"},
			"event": {"*"}, "description": {"Zugang 東京 🚆"}}, "/dashboard/test/webhooks", whsecRe)
		ids := apiEndpoints(t, e, e.TestKey)
		if len(ids) != 1 {
			t.Fatalf("endpoints after create and reload: %v", ids)
		}
		rotated := postOnce(v, "/dashboard/test/webhooks/"+ids["http://127.0.0.1:9/hooks"]+"/rotate", url.Values{"csrf_token": {hp.csrf(t)}},
			"/dashboard/test/webhooks", whsecRe)
		if rotated == made {
			t.Error("the rotated secret is the old one")
		}
		if n := len(apiEndpoints(t, e, e.TestKey)); n != 1 {
			t.Errorf("%d endpoints after rotate", n)
		}

		// A notice not yet shown is replaced by the next one, never shown twice.
		r := v.must(http.StatusSeeOther, "POST", "/dashboard/test/keys", url.Values{"csrf_token": {kp.csrf(t)}})
		v.must(http.StatusSeeOther, "POST", "/dashboard/test/keys", url.Values{"csrf_token": {kp.csrf(t)}})
		if p := v.must(200, "GET", r.Header.Get("Location"), nil); len(testKeyRe.FindAllString(p.Body, -1)) != 1 {
			t.Errorf("two keys made without a page between: the page shows %d secrets", len(testKeyRe.FindAllString(p.Body, -1)))
		}

		// The console: a key for the account.
		op := newVisitor(t, e, "en")
		f := op.must(200, "GET", "/admin/sign-in", nil)
		op.must(http.StatusSeeOther, "POST", "/admin/sign-in", url.Values{"csrf_token": {f.csrf(t)}, "user": {"ops"}, "password": {testOperatorPassword}})
		acc := op.must(200, "GET", "/admin/accounts", nil)
		before = keyCount()
		secret = postOnce(op, "/admin/accounts/"+e.AccountID+"/keys", url.Values{"environment": {"test"}, "csrf_token": {acc.csrf(t)}}, "/admin/accounts", testKeyRe)
		if keyCount() != before+1 {
			t.Errorf("console keys %d → %d", before, keyCount())
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: secret})
	})
}
