package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
)

// dashSignIn signs a new visitor in with the sign-in form.
func dashSignIn(t *testing.T, e *apitest.Env, email, password string, want int) *visitor {
	t.Helper()
	v := newVisitor(t, e, "en")
	f := v.must(200, "GET", "/dashboard/sign-in", nil)
	v.must(want, "POST", "/dashboard/sign-in", url.Values{"csrf_token": {f.csrf(t)}, "email": {email}, "password": {password}})
	return v
}

// signedIn reports whether the visitor's dashboard session still opens a page.
func signedIn(t *testing.T, v *visitor) bool {
	t.Helper()
	r := v.do("GET", "/dashboard/test/usage", nil)
	switch {
	case r.Status == 200:
		return true
	case r.Status == http.StatusSeeOther && r.Header.Get("Location") == "/dashboard/sign-in":
		return false
	}
	t.Fatalf("GET /dashboard/test/usage: %d %v", r.Status, r.Header)
	return false
}

// TestDashboardUsersAndSessions drives issue 28's first item over HTTP with
// real cookies and CSRF tokens, on both engines: a password reset (a new
// invitation accepted) ends the user's other sessions at once; a dashboard
// user removes another user of the same account (never of another
// account, never the last one; removing itself signs it out), the
// operator removes any (the last one too) from the console; a removed
// user's sessions end at once, its password and its unused invitation no
// longer work; a changed operator password ends the console sessions
// opened with the old one.
func TestDashboardUsersAndSessions(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withOperator(t)}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		const newPassword = "ein neues Passwort 東京 🚆"

		// A reset ends the other sessions.
		a1 := dashSignedIn(t, e, "alice@partner.example")
		a2 := dashSignIn(t, e, "Alice@Partner.example", dashPassword, http.StatusSeeOther)
		if !signedIn(t, a1) || !signedIn(t, a2) {
			t.Fatal("alice is not signed in twice")
		}
		a3, _ := dashAccepted(t, e, e.AccountID, "alice@partner.example", newPassword)
		if signedIn(t, a1) || signedIn(t, a2) {
			t.Error("a password reset left the user's other sessions open")
		}
		if !signedIn(t, a3) {
			t.Fatal("the session of the reset is not open")
		}
		dashSignIn(t, e, "alice@partner.example", dashPassword, http.StatusUnauthorized)
		a4 := dashSignIn(t, e, "alice@partner.example", newPassword, http.StatusSeeOther)

		// The users page lists the account's users only.
		b := dashSignedIn(t, e, "bob@partner.example")
		c := dashSignedIn(t, e, "carol@partner.example")
		bobLink, err := e.WebUsers.InviteDashboardUser(ctx, idempotency.Claim{}, e.AccountID, "bob@partner.example") // unused when bob is removed
		if err != nil {
			t.Fatal(err)
		}
		other, _ := e.NewAccount("Andere Verkehrsbetriebe", account.Live)
		d, df := dashAccepted(t, e, other, "dave@other.example", dashPassword)

		for _, env := range []string{"test", "live"} {
			p := a3.must(200, "GET", "/dashboard/"+env+"/users", nil)
			for _, want := range []string{"alice@partner.example (you)", "bob@partner.example", "carol@partner.example",
				`href="/dashboard/` + env + `/users" aria-current="page"`, `aria-label="Remove bob@partner.example"`} {
				if !strings.Contains(p.Body, want) {
					t.Errorf("%s users page lacks %q:\n%.3000s", env, want, p.Body)
				}
			}
			if strings.Contains(p.Body, "dave@other.example") {
				t.Errorf("%s users page shows another account's user", env)
			}
		}
		p := a3.must(200, "GET", "/dashboard/test/users", nil)
		remove := func(v *visitor, csrf, email string) page {
			return v.do("POST", "/dashboard/test/users/remove", url.Values{"csrf_token": {csrf}, "email": {email}})
		}
		// Forged: no token, another visitor's token; nothing removed.
		a3.must(http.StatusForbidden, "POST", "/dashboard/test/users/remove", url.Values{"email": {"bob@partner.example"}})
		if r := remove(a3, df.csrf(t), "bob@partner.example"); r.Status != http.StatusForbidden {
			t.Errorf("another visitor's token: %d", r.Status)
		}
		// Another account's user, an unknown one, a malformed address: refused.
		for email, want := range map[string]int{"dave@other.example": 404, "nobody@partner.example": 404, "not an address": 422,
			strings.Repeat("a", 250) + "@partner.example": 422, "": 422, "عنوان@partner.example": 404} {
			if r := remove(a3, p.csrf(t), email); r.Status != want || !strings.Contains(r.Body, `role="alert"`) && !strings.Contains(r.Body, "error") {
				t.Errorf("remove %q: %d, want %d", email, r.Status, want)
			}
		}
		if !signedIn(t, b) || !signedIn(t, d) {
			t.Fatal("a refused removal ended a session")
		}
		// Bob removed by alice: his session ends at once, his password and
		// his unused link no longer work.
		if r := remove(a3, p.csrf(t), " BOB@partner.example "); r.Status != 200 || !strings.Contains(r.Body, "their sessions have ended") ||
			strings.Contains(r.Body, `aria-label="Remove bob@partner.example"`) {
			t.Errorf("remove bob: %d\n%.2000s", r.Status, r.Body)
		}
		if signedIn(t, b) {
			t.Error("a removed user's session is still open")
		}
		dashSignIn(t, e, "bob@partner.example", dashPassword, http.StatusUnauthorized)
		b.must(http.StatusNotFound, "GET", "/dashboard/invite?token="+bobLink, nil)
		if !signedIn(t, d) || !signedIn(t, a4) {
			t.Error("removing bob ended other users' sessions")
		}
		// Carol removes herself: signed out, her cookie cleared.
		cp := c.must(200, "GET", "/dashboard/test/users", nil)
		r := c.must(http.StatusSeeOther, "POST", "/dashboard/test/users/remove", url.Values{"csrf_token": {cp.csrf(t)}, "email": {"carol@partner.example"}})
		if r.Header.Get("Location") != "/dashboard/sign-in" || !strings.Contains(strings.Join(r.Header.Values("Set-Cookie"), ";"), "Max-Age=0") {
			t.Errorf("carol removing herself: %v", r.Header)
		}
		if signedIn(t, c) {
			t.Error("carol is still signed in")
		}
		// Alice is the last user: no button, and the post is refused.
		last := a3.must(200, "GET", "/dashboard/test/users", nil)
		if strings.Contains(last.Body, `aria-label="Remove alice@partner.example"`) {
			t.Error("the last user is offered a Remove button")
		}
		if r := remove(a3, last.csrf(t), "alice@partner.example"); r.Status != http.StatusConflict || !strings.Contains(r.Body, "last dashboard user") {
			t.Errorf("removing the last user: %d\n%.2000s", r.Status, r.Body)
		}
		if !signedIn(t, a3) || !signedIn(t, a4) {
			t.Fatal("a refused removal of the last user signed it out")
		}
		if users, _ := e.WebUsers.DashboardUsers(ctx, e.AccountID); len(users) != 1 || users[0].Email != "alice@partner.example" {
			t.Errorf("users left: %+v", users)
		}

		// The operator removes the last one from the console.
		op := newVisitor(t, e, "en")
		of := op.must(200, "GET", "/admin/sign-in", nil)
		op.must(http.StatusSeeOther, "POST", "/admin/sign-in", url.Values{"csrf_token": {of.csrf(t)}, "user": {"ops"}, "password": {testOperatorPassword}})
		acc := op.must(200, "GET", "/admin/accounts", nil)
		if !strings.Contains(acc.Body, "alice@partner.example") || !strings.Contains(acc.Body, "dave@other.example") || strings.Contains(acc.Body, "bob@partner.example") {
			t.Errorf("console users:\n%.4000s", acc.Body)
		}
		op.must(http.StatusForbidden, "POST", "/admin/accounts/"+e.AccountID+"/users/remove", url.Values{"email": {"alice@partner.example"}})
		op.must(http.StatusNotFound, "POST", "/admin/accounts/"+e.AccountID+"/users/remove", url.Values{"csrf_token": {acc.csrf(t)}, "email": {"dave@other.example"}})
		if r := op.must(200, "POST", "/admin/accounts/"+e.AccountID+"/users/remove", url.Values{"csrf_token": {acc.csrf(t)}, "email": {"alice@partner.example"}}); !strings.Contains(r.Body, "Dashboard user alice@partner.example removed") {
			t.Errorf("console removal:\n%.2000s", r.Body)
		}
		if signedIn(t, a3) || signedIn(t, a4) {
			t.Error("the operator's removal left alice signed in")
		}
		if !signedIn(t, d) {
			t.Error("the operator's removal ended another account's user")
		}
		// A removed user can be invited again.
		again := dashSignedIn(t, e, "alice@partner.example")
		if !signedIn(t, again) {
			t.Error("alice invited again cannot sign in")
		}
		// A password set behind a session's back (as a reset racing a
		// sign-in would) makes the session invalid: a session counts only
		// with the password it was opened with.
		if err := e.Store.Write(ctx, func(q store.Q) error {
			return q.SetDashboardUser(ctx, "alice@partner.example", e.AccountID, "$argon2id$v=19$m=64,t=1,p=1$MDEyMzQ1Njc4OWFiY2RlZg$bm90IHRoZSBwYXNzd29yZCBvZiB0aGUgc2Vzc2lvbg", e.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		if signedIn(t, again) {
			t.Error("a session outlived its user's password")
		}

		// The operator's password changed in --admin-password-file: an
		// instance with the new file does not accept the old sessions.
		if op.must(200, "GET", "/admin/accounts", nil).Status != 200 {
			t.Fatal("console session")
		}
		changed := apitest.NewOnStore(t, e.Store, apitest.Options{Configure: func(dp *httpapi.Deps) {
			withOperator(t)(dp)
			c, err := webusers.ParseOperatorCredentials(operatorLine("ops", "the operator's new password"))
			if err != nil {
				t.Fatal(err)
			}
			dp.Operator = c
		}})
		op.base = changed.URL // the same cookie jar (cookies ignore the port)
		if r := op.must(http.StatusSeeOther, "GET", "/admin/accounts", nil); r.Header.Get("Location") != "/admin/sign-in" {
			t.Errorf("the old password's session on the new credential: %v", r.Header)
		}
		of = op.must(200, "GET", "/admin/sign-in", nil)
		op.must(http.StatusUnauthorized, "POST", "/admin/sign-in", url.Values{"csrf_token": {of.csrf(t)}, "user": {"ops"}, "password": {testOperatorPassword}})
		op.must(http.StatusSeeOther, "POST", "/admin/sign-in", url.Values{"csrf_token": {of.csrf(t)}, "user": {"ops"}, "password": {"the operator's new password"}})
		op.must(200, "GET", "/admin/accounts", nil)
	})
}

// TestDashboardAndConsoleInOneBrowser: each area keeps a session cookie of
// its own, so a browser signed in to the partner dashboard and the
// operator console (an operator who is also a partner's user, or one
// testing both) stays signed in to both, and signing out of one leaves the
// other open. Before, both shared fbweb_session and the second sign-in
// ended the first.
func TestDashboardAndConsoleInOneBrowser(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withOperator(t)}, func(t *testing.T, e *apitest.Env) {
		v := dashSignedIn(t, e, "ops@partner.example")
		console := func() bool {
			t.Helper()
			r := v.do("GET", "/admin/accounts", nil)
			if r.Status != 200 && (r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/admin/sign-in") {
				t.Fatalf("GET /admin/accounts: %d %v", r.Status, r.Header)
			}
			return r.Status == 200
		}
		f := v.must(200, "GET", "/admin/sign-in", nil)
		in := v.must(http.StatusSeeOther, "POST", "/admin/sign-in", url.Values{"csrf_token": {f.csrf(t)}, "user": {"ops"}, "password": {testOperatorPassword}})
		if c := strings.Join(in.Header.Values("Set-Cookie"), "\n"); !strings.Contains(c, "fbweb_session=") || strings.Contains(c, "fbdash_session") {
			t.Errorf("the console's sign-in set %s", c)
		}
		if !signedIn(t, v) || !console() {
			t.Fatal("signing in to the console ended the dashboard session (or did not open the console)")
		}
		// Out of the console: the dashboard stays open; then out of it too.
		out := v.must(200, "GET", "/admin/accounts", nil)
		v.must(http.StatusSeeOther, "POST", "/admin/sign-out", url.Values{"csrf_token": {out.csrf(t)}})
		if console() || !signedIn(t, v) {
			t.Fatal("signing out of the console did not end it alone")
		}
		d := v.must(200, "GET", "/dashboard/test/usage", nil)
		v.must(http.StatusSeeOther, "POST", "/dashboard/sign-out", url.Values{"csrf_token": {d.csrf(t)}})
		if signedIn(t, v) {
			t.Fatal("signing out of the dashboard left it open")
		}
	})
}
