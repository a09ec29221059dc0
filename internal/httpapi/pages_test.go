package httpapi_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
)

// visitor is a browser without JavaScript: a cookie jar, its language and
// User-Agent, redirects not followed (the test looks at each answer).
type visitor struct {
	t         testing.TB
	base      string
	c         *http.Client
	lang, ua  string
	forwarded string // X-Forwarded-Proto
}

func newVisitor(t testing.TB, e *apitest.Env, lang string) *visitor {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &visitor{t: t, base: e.URL, lang: lang, ua: "Mozilla/5.0 (X11; Linux x86_64)", c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	Status int
	Header http.Header
	Body   string
}

var csrfRe = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf is the page's form token.
func (p page) csrf(t testing.TB) string {
	m := csrfRe.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no CSRF token in page:\n%.500s", p.Body)
	}
	return m[1]
}

func (v *visitor) do(method, path string, form url.Values) page {
	v.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, v.base+path, body)
	if err != nil {
		v.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept-Language", v.lang)
	req.Header.Set("User-Agent", v.ua)
	if v.forwarded != "" {
		req.Header.Set("X-Forwarded-Proto", v.forwarded)
	}
	resp, err := v.c.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		v.t.Fatal(err)
	}
	return page{resp.StatusCode, resp.Header, string(b)}
}

func (v *visitor) must(status int, method, path string, form url.Values) page {
	v.t.Helper()
	p := v.do(method, path, form)
	if p.Status != status {
		v.t.Fatalf("%s %s: %d, want %d\n%.2000s", method, path, p.Status, status, p.Body)
	}
	return p
}

// postRedirect posts form, wants 303 (POST-redirect-GET) and reads the
// page it points to, as a browser does.
func (v *visitor) postRedirect(path string, form url.Values) page {
	v.t.Helper()
	r := v.must(http.StatusSeeOther, "POST", path, form)
	if r.Body != "" && strings.Contains(r.Body, "fbx_") {
		v.t.Errorf("POST %s: the redirect's body holds a key", path)
	}
	return v.must(200, "GET", r.Header.Get("Location"), nil)
}

// operatorLine is an --admin-password-file line with small argon2id
// parameters (the production ones take 64 MiB per check).
func operatorLine(user, password string) string {
	salt := []byte("0123456789abcdef")
	key := argon2.IDKey([]byte(password), salt, 1, 64, 1, 32)
	return fmt.Sprintf("%s:$argon2id$v=19$m=64,t=1,p=1$%s$%s", user,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

const testOperatorPassword = "correct horse battery staple"

// withOperator configures the console's operator "ops" (and wallets).
func withOperator(t testing.TB, trusted ...string) func(d *httpapi.Deps) {
	wallets := withWallets(t, true)
	return func(d *httpapi.Deps) {
		wallets(d)
		c, err := webusers.ParseOperatorCredentials(operatorLine("ops", testOperatorPassword))
		if err != nil {
			t.Fatal(err)
		}
		d.Operator = c
		for _, p := range trusted {
			d.TrustedProxies = append(d.TrustedProxies, netip.MustParsePrefix(p))
		}
	}
}

// all runs each configuration in turn.
func all(fs ...func(d *httpapi.Deps)) func(d *httpapi.Deps) {
	return func(d *httpapi.Deps) {
		for _, f := range fs {
			f(d)
		}
	}
}

// TestTravellerPage: the deep link of a monthly coupon in German and in
// English, a forged activation (no token, a wrong token, a token of
// another visitor) refused with 403 and nothing activated, a refused
// identification shown on the page, then the activation and the ticket
// with the wallet buttons of the visitor's platform; every read billed to
// the coupon's owner. Both engines.
func TestTravellerPage(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withOperator(t)}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		o := order(t, e, e.TestKey, ids["month/adult"])
		id := str(o.Coupons[0]["id"])
		path := "/c/" + id

		de := newVisitor(t, e, "de-DE,de;q=0.9,en;q=0.5")
		p := de.must(200, "GET", path, nil)
		for _, want := range []string{`<html lang="de"`, "Ihr Ticket", "Ticket aktivieren", `name="medium.first_name"`,
			`name="tariff.german_postal_code"`, "TEST – kein gültiges Ticket", "Aktivierbar"} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("German page lacks %q", want)
			}
		}
		// Scripts only from files of this origin, never inline; the inline
		// stylesheet only by its hash.
		if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self';") ||
			strings.Contains(csp, "unsafe") || !strings.Contains(csp, "style-src 'self' 'sha256-") {
			t.Errorf("CSP %q", csp)
		}
		var csrfCookie *http.Cookie
		for _, c := range (&http.Response{Header: p.Header}).Cookies() {
			if c.Name == "fbweb_csrf" {
				csrfCookie = c
			}
		}
		if csrfCookie == nil || !csrfCookie.HttpOnly || csrfCookie.SameSite != http.SameSiteStrictMode || csrfCookie.Secure {
			t.Errorf("CSRF cookie over plain http: %+v", csrfCookie)
		}
		en := newVisitor(t, e, "en-GB,en;q=0.9")
		pe := en.must(200, "GET", path, nil)
		if !strings.Contains(pe.Body, `<html lang="en"`) || !strings.Contains(pe.Body, "Activate ticket") {
			t.Errorf("English page:\n%.1500s", pe.Body)
		}

		form := url.Values{"medium.first_name": {"Erika"}, "medium.last_name": {"Mustermann"},
			"medium.birth_date": {"1985-03-07"}, "tariff.german_postal_code": {"10115"}}
		forged := []url.Values{form} // no token at all
		wrong := url.Values{}
		for k, v := range form {
			wrong[k] = v
		}
		wrong.Set("csrf_token", "AAAA"+p.csrf(t)[4:])
		foreign := url.Values{}
		for k, v := range form {
			foreign[k] = v
		}
		foreign.Set("csrf_token", pe.csrf(t)) // the English visitor's token
		forged = append(forged, wrong, foreign)
		for i, f := range forged {
			r := de.do("POST", path, f)
			if r.Status != http.StatusForbidden || !strings.Contains(r.Body, "Sicherheitsmerkmal des Formulars fehlt") {
				t.Errorf("forged post %d: %d\n%.800s", i, r.Status, r.Body)
			}
		}
		if c, err := e.App.Coupon(context.Background(), id); err != nil || c.Coupon.Activated {
			t.Fatalf("a forged post activated the coupon: %v %v", c.Coupon.Activated, err)
		}

		// A refused identification: the page again, with the reason.
		bad := url.Values{"csrf_token": {p.csrf(t)}, "medium.first_name": {"Erika"}, "medium.birth_date": {"1985-03-07"},
			"tariff.german_postal_code": {"10115"}}
		r := de.do("POST", path, bad)
		if r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "last_name") ||
			!strings.Contains(r.Body, `role="alert"`) {
			t.Errorf("missing last name: %d\n%.1500s", r.Status, r.Body)
		}

		// Hostile text in a form field: refused naming the field, nothing stored.
		for _, hostile := range []string{"Er\x00ika", "Er\xffika", "\xed\xa0\x80", strings.Repeat("E", 100000)} {
			h := url.Values{"csrf_token": {p.csrf(t)}, "medium.first_name": {hostile}, "medium.last_name": {"Mustermann"},
				"medium.birth_date": {"1985-03-07"}, "tariff.german_postal_code": {"10115"}}
			r := de.do("POST", path, h)
			if r.Status < 400 || r.Status >= 500 || !strings.Contains(r.Body, "first_name") && r.Status != http.StatusRequestEntityTooLarge {
				t.Errorf("first_name %.12q: %d\n%.1500s", hostile, r.Status, r.Body)
			}
		}
		if c, err := e.App.Coupon(context.Background(), id); err != nil || c.Coupon.Activated {
			t.Fatalf("a hostile post activated the coupon: %v %v", c.Coupon.Activated, err)
		}

		form.Set("csrf_token", p.csrf(t))
		r = de.must(http.StatusSeeOther, "POST", path, form)
		if loc := r.Header.Get("Location"); loc != path {
			t.Errorf("after activation: Location %q", loc)
		}
		for _, c := range []struct{ ua, want, not string }{
			{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1", "wallet-apple", "wallet-google"},
			{"Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 Chrome/131.0 Mobile Safari/537.36", "wallet-google", "wallet-apple"},
		} {
			de.ua = c.ua
			p := de.must(200, "GET", path, nil)
			if !strings.Contains(p.Body, `id="`+c.want+`"`) || strings.Contains(p.Body, `id="`+c.not+`"`) {
				t.Errorf("%s: want %s only", c.ua, c.want)
			}
			if !strings.Contains(p.Body, "Ihr Ticket ist aktiv.") || !strings.Contains(p.Body, `src="/c/`+id+`/ticket"`) {
				t.Errorf("activated page:\n%.2000s", p.Body)
			}
		}
		de.ua = "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"
		if p := de.must(200, "GET", path, nil); !strings.Contains(p.Body, "wallet-apple") || !strings.Contains(p.Body, "wallet-google") {
			t.Errorf("desktop: want both wallet buttons")
		}
		doc := de.must(200, "GET", path+"/ticket", nil)
		if !strings.Contains(doc.Body, "window.renderTicket({") || doc.Header.Get("X-Frame-Options") != "SAMEORIGIN" {
			t.Errorf("ticket document: %v\n%.300s", doc.Header, doc.Body[len(doc.Body)-300:])
		}
		// Every page read and post above is billed to the coupon's owner.
		req := e.Do(apitest.Req{Method: "GET", Path: path, NoValidate: true})
		rows := e.UsageRows(req.Header.Get("X-Request-Id"))
		if len(rows) != 1 || rows[0].AccountID != e.AccountID || rows[0].Endpoint != "GET /c/{coupon_id}" {
			t.Errorf("page read billed %+v", rows)
		}
		// An unknown or hostile id: 404, as an HTML page.
		for _, bad := range []string{"farebox-coupon-none", "x%00y", "%ED%A0%80", strings.Repeat("x", 5000)} {
			r := de.do("GET", "/c/"+bad, nil)
			if r.Status != http.StatusNotFound || !strings.Contains(r.Body, "<!DOCTYPE html>") {
				t.Errorf("GET /c/%.20s: %d %.300s", bad, r.Status, r.Body)
			}
		}
	})
}

// TestOperatorConsole: sign-in required, wrong passwords throttled, the
// Secure __Host- cookie behind a trusted TLS proxy, every list, each
// action, CSRF refusals changing nothing, sign-out. Both engines.
func TestOperatorConsole(t *testing.T) {
	t.Parallel()
	feeds := transitOptions(t, time.Time{}, feedSpec{"sample", "sample-gtfs-feed-0.13.0.zip", ""}).Configure
	apitest.ForEachEngine(t, apitest.Options{Configure: all(withOperator(t, "127.0.0.1/32", "::1/128"), feeds)}, func(t *testing.T, e *apitest.Env) {
		v := newVisitor(t, e, "en")
		for _, p := range []string{"/admin", "/admin/accounts", "/admin/jobs", "/admin/catalog", "/admin/feeds", "/admin/inspection-keys"} {
			if r := v.must(http.StatusSeeOther, "GET", p, nil); r.Header.Get("Location") != "/admin/sign-in" {
				t.Errorf("%s without a session: Location %q", p, r.Header.Get("Location"))
			}
		}
		if r := v.do("POST", "/admin/keys/revoke", url.Values{"prefix": {"fbx_test_"}}); r.Status != http.StatusUnauthorized {
			t.Errorf("POST without a session: %d", r.Status)
		}
		form := v.must(200, "GET", "/admin/sign-in", nil)
		// A sign-in without the form's token is refused before the password is checked.
		v.must(http.StatusForbidden, "POST", "/admin/sign-in", url.Values{"user": {"ops"}, "password": {testOperatorPassword}})
		for i := 0; i < 5; i++ {
			// A wrong password keeps the user name in the form (issue 34).
			if r := v.must(http.StatusUnauthorized, "POST", "/admin/sign-in", url.Values{"csrf_token": {form.csrf(t)}, "user": {"ops"}, "password": {"guess" + fmt.Sprint(i)}}); !strings.Contains(r.Body, `name="user" value="ops"`) {
				t.Errorf("the user name is not kept:\n%.2000s", r.Body)
			}
		}
		r := v.must(http.StatusTooManyRequests, "POST", "/admin/sign-in", url.Values{"csrf_token": {form.csrf(t)}, "user": {"ops"}, "password": {testOperatorPassword}})
		if r.Header.Get("Retry-After") == "" || !strings.Contains(r.Body, "Too many failed attempts") || !strings.Contains(r.Body, "wait 15 minutes") {
			t.Errorf("throttled sign-in: %v %.500s", r.Header, r.Body)
		}
		e.Clock.Advance(16 * time.Minute)

		// Behind the trusted proxy over TLS: Secure __Host- cookies.
		s := newVisitor(t, e, "de")
		s.forwarded = "https"
		form = s.must(200, "GET", "/admin/sign-in", nil)
		if !strings.Contains(strings.Join(form.Header.Values("Set-Cookie"), "\n"), "__Host-fbweb_csrf=") {
			t.Errorf("behind TLS: %v", form.Header.Values("Set-Cookie"))
		}
		// The cookie jar does not send Secure cookies over http: send them by hand.
		signIn := url.Values{"csrf_token": {form.csrf(t)}, "user": {"ops"}, "password": {testOperatorPassword}}
		req, _ := http.NewRequest("POST", e.URL+"/admin/sign-in", strings.NewReader(signIn.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-Proto", "https")
		for _, c := range (&http.Response{Header: form.Header}).Cookies() {
			req.AddCookie(c)
		}
		resp, err := s.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var session *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == "__Host-fbweb_session" {
				session = c
			}
		}
		if resp.StatusCode != http.StatusSeeOther || session == nil || !session.Secure || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
			t.Fatalf("sign-in behind TLS: %d %+v", resp.StatusCode, resp.Cookies())
		}
		if n := sessionRows(t, e); n != 1 {
			t.Errorf("%d session rows", n)
		}

		// Plain http from here on.
		form = v.must(200, "GET", "/admin/sign-in", nil)
		v.must(http.StatusSeeOther, "POST", "/admin/sign-in", url.Values{"csrf_token": {form.csrf(t)}, "user": {"ops"}, "password": {testOperatorPassword}})
		acc := v.must(200, "GET", "/admin/accounts", nil)
		// The operator's session is not a dashboard user's.
		if r := v.must(http.StatusSeeOther, "GET", "/dashboard/test/usage", nil); r.Header.Get("Location") != "/dashboard/sign-in" {
			t.Errorf("the operator's session opened the dashboard: %v", r.Header)
		}
		if !strings.Contains(acc.Body, e.AccountID) || !strings.Contains(acc.Body, "Signed in as ops") {
			t.Errorf("accounts page:\n%.2000s", acc.Body)
		}
		tok := acc.csrf(t)
		keysBefore, _ := e.Store.Read().Keys(context.Background(), e.AccountID)

		// CSRF: without, with a wrong token and with a token of the
		// signed-out visitor: 403 and no key made.
		for _, f := range []url.Values{{"environment": {"test"}}, {"environment": {"test"}, "csrf_token": {"x" + tok}},
			{"environment": {"test"}, "csrf_token": {form.csrf(t)}}} {
			v.must(http.StatusForbidden, "POST", "/admin/accounts/"+e.AccountID+"/keys", f)
		}
		if k, _ := e.Store.Read().Keys(context.Background(), e.AccountID); len(k) != len(keysBefore) {
			t.Fatalf("a forged post made a key: %d → %d", len(keysBefore), len(k))
		}
		r = v.postRedirect("/admin/accounts/"+e.AccountID+"/keys", url.Values{"environment": {"test"}, "csrf_token": {tok}})
		secret := regexp.MustCompile(`fbx_test_[A-Za-z0-9_]+`).FindString(r.Body[strings.Index(r.Body, "New test key"):])
		if secret == "" {
			t.Fatalf("no new key shown:\n%.1500s", r.Body)
		}
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: secret})
		v.must(422, "POST", "/admin/accounts/"+e.AccountID+"/keys", url.Values{"environment": {"prod"}, "csrf_token": {tok}})
		prefix := secret[:len("fbx_test_")+8]
		v.must(200, "POST", "/admin/keys/revoke", url.Values{"prefix": {prefix}, "csrf_token": {tok}})
		e.Must(401, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: secret})
		v.must(404, "POST", "/admin/keys/revoke", url.Values{"prefix": {"fbx_test_zzzzzzzzzzzz"}, "csrf_token": {tok}})

		job := "farebox-product-fb474e95-e2f0-4826-ba91-53bde3221553"
		r = v.must(200, "POST", "/admin/accounts/"+e.AccountID+"/grants", url.Values{"product_id": {job}, "csrf_token": {tok}})
		if !strings.Contains(r.Body, "Granted "+job) {
			t.Errorf("grant:\n%.1000s", r.Body)
		}
		if g, _ := e.Store.Read().Grants(context.Background(), e.AccountID); !g[job] {
			t.Errorf("grant not stored: %v", g)
		}
		v.must(404, "POST", "/admin/accounts/farebox-account-none/grants", url.Values{"product_id": {job}, "csrf_token": {tok}})

		// A dead job, retried.
		deadID := deadJob(t, e)
		jp := v.must(200, "GET", "/admin/jobs?state=dead", nil)
		if !strings.Contains(jp.Body, fmt.Sprintf(`id="retry-%d"`, deadID)) || !strings.Contains(jp.Body, "boom") {
			t.Errorf("dead jobs page:\n%.2000s", jp.Body)
		}
		v.must(http.StatusForbidden, "POST", fmt.Sprintf("/admin/jobs/%d/retry", deadID), url.Values{})
		r = v.must(200, "POST", fmt.Sprintf("/admin/jobs/%d/retry", deadID), url.Values{"csrf_token": {tok}})
		if st, _ := e.Store.Read().JobState(context.Background(), "page_test", "x"); st != jobs.StateReady {
			t.Errorf("retried job is %s", st)
		}
		v.must(404, "POST", fmt.Sprintf("/admin/jobs/%d/retry", deadID), url.Values{"csrf_token": {tok}})
		v.must(422, "POST", "/admin/jobs/x/retry", url.Values{"csrf_token": {tok}})
		v.must(422, "GET", "/admin/jobs?state=zombie", nil)

		for path, want := range map[string]string{"/admin/catalog": "Deutschlandticket Job", "/admin/feeds": "sample-gtfs-feed-0.13.0.zip",
			"/admin/inspection-keys": `"keys"`, "/admin/jobs": "ready: 1"} {
			if p := v.must(200, "GET", path, nil); !strings.Contains(p.Body, want) {
				t.Errorf("%s lacks %q:\n%.1500s", path, want, p.Body)
			}
		}

		v.must(http.StatusSeeOther, "POST", "/admin/sign-out", url.Values{"csrf_token": {tok}})
		v.must(http.StatusSeeOther, "GET", "/admin/accounts", nil)
	})
}

// TestConsoleWithoutOperator: no --admin-password-file, no sign-in.
func TestConsoleWithoutOperator(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{})
	v := newVisitor(t, e, "de")
	form := v.must(200, "GET", "/admin/sign-in", nil)
	if !strings.Contains(form.Body, "nicht eingerichtet") {
		t.Errorf("sign-in page:\n%.1000s", form.Body)
	}
	v.must(http.StatusServiceUnavailable, "POST", "/admin/sign-in", url.Values{"csrf_token": {form.csrf(t)}, "user": {"admin"}, "password": {"x"}})
}

func sessionRows(t testing.TB, e *apitest.Env) int {
	n, err := e.Store.Read().CountRows(context.Background(), "web_sessions")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// deadJob enqueues a job and lets it fail for good.
func deadJob(t testing.TB, e *apitest.Env) int64 {
	ctx := context.Background()
	if err := e.Store.Write(ctx, func(q store.Q) error {
		return q.EnqueueJob(ctx, jobs.NewJob{Kind: "page_test", Payload: "x", MaxAttempts: 1}, e.Clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
	js, err := e.Store.Jobs().Claim(ctx, "w", e.Clock.Now(), time.Minute, 10)
	if err != nil || len(js) != 1 {
		t.Fatalf("claim: %v %v", js, err)
	}
	if err := e.Store.Jobs().Retry(ctx, js[0].ID, "w", e.Clock.Now(), e.Clock.Now(), "boom", true); err != nil {
		t.Fatal(err)
	}
	return js[0].ID
}

// TestTravellerPageRenewsMonth: the page of a monthly coupon activated in
// August offers, once the partner has reordered September and its renewal
// window has opened, the next month; a forged renewal is refused; the
// renewal shows September's ticket on the same page. Both engines.
func TestTravellerPageRenewsMonth(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Now: bln(2026, 8, 3, 9), Configure: withWallets(t, false)}, func(t *testing.T, e *apitest.Env) {
		id := str(order(t, e, e.LiveKey, productIDs(t, e)["month/adult"]).Coupons[0]["id"])
		path := "/c/" + id
		v := newVisitor(t, e, "de")
		p := v.must(200, "GET", path, nil)
		v.must(http.StatusSeeOther, "POST", path, url.Values{"csrf_token": {p.csrf(t)}, "medium.first_name": {"Erika"},
			"medium.last_name": {"Mustermann"}, "medium.birth_date": {"1985-03-07"}, "tariff.german_postal_code": {"10115"}})
		p = v.must(200, "GET", path, nil)
		if !strings.Contains(p.Body, "01.08.2026 00:00 CEST – 31.08.2026 23:59 CEST") || strings.Contains(p.Body, `id="renew"`) {
			t.Fatalf("August:\n%.3000s", p.Body)
		}
		subID := str(coupon(t, e, "v9", id)["subscription"].(map[string]any)["id"])
		if r := reorder(e, e.LiveKey, subID, nil); r.Status != 201 {
			t.Fatalf("reorder: %d %s", r.Status, r.Body)
		}
		e.Clock.Set(bln(2026, 8, 26, 8))
		p = v.must(200, "GET", path, nil)
		if !strings.Contains(p.Body, `id="renew"`) || !strings.Contains(p.Body, "Nächsten Monat aktivieren") {
			t.Fatalf("renewal not offered:\n%.3000s", p.Body)
		}
		before := count(t, e, "tickets")
		v.must(http.StatusForbidden, "POST", path, url.Values{"renew": {"1"}})
		if n := count(t, e, "tickets"); n != before {
			t.Fatalf("a forged renewal made a ticket")
		}
		tok := p.csrf(t)
		v.must(http.StatusSeeOther, "POST", path, url.Values{"csrf_token": {tok}, "renew": {"1"}})
		p = v.must(200, "GET", path, nil)
		if !strings.Contains(p.Body, "01.09.2026 00:00 CEST – 30.09.2026 23:59 CEST") || strings.Contains(p.Body, `id="renew"`) {
			t.Errorf("September:\n%.3000s", p.Body)
		}
		if n := count(t, e, "tickets"); n != before+1 {
			t.Errorf("%d tickets after the renewal, want %d", n, before+1)
		}
		// A second renewal post (a reload) changes nothing: October is not
		// ordered, and the page says so.
		if r := v.must(http.StatusUnprocessableEntity, "POST", path, url.Values{"csrf_token": {tok}, "renew": {"1"}}); !strings.Contains(r.Body, `role="alert"`) {
			t.Errorf("repeated renewal:\n%.2000s", r.Body)
		}
		if n := count(t, e, "tickets"); n != before+1 {
			t.Errorf("the repeated renewal made a ticket")
		}
	})
}

// TestTravellerPageForm (issue 34), the form without the page's script,
// as the server answers it: on 29 November a monthly coupon's page says
// that two days of November are left and asks which month (none chosen);
// an empty post comes back 422 with each field marked in the page's words
// (no schema pointer, no raw key) and what was typed kept; the language
// switch holds through the post; "abroad" is a choice that activates with
// the schema's word; "next month" activates December. Both engines.
func TestTravellerPageForm(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Now: bln(2026, 11, 29, 9), Configure: withWallets(t, false)}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		id := str(order(t, e, e.LiveKey, ids["month/adult"]).Coupons[0]["id"])
		path := "/c/" + id
		v := newVisitor(t, e, "de-DE")
		p := v.must(200, "GET", path+"?lang=en", nil)
		for _, want := range []string{`<html lang="en"`, "Only 2 days of November 2026 are left", `id="month-this" value="this" required aria-describedby="late-month">`,
			`id="month-next" value="next" required aria-describedby="late-month">`, "<strong>December 2026</strong>: valid 1 Dec 2026 – 31 Dec 2026",
			"Where do you live?", "Abroad (outside Germany)", `pattern="^(?:[0-9]{5})$"`, "First name", "Date of birth",
			`action="/c/` + id + `?lang=en"`, `href="/c/` + id + `?lang=de" lang="de" hreflang="de" id="lang-switch">Deutsch</a>`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("the English form lacks %s", want)
			}
		}
		for _, raw := range []string{"not-germany bei", "Postleitzahl", "Vorname", "(required)", "photo_id_lite:", "Photo-Id"} {
			if strings.Contains(p.Body, raw) {
				t.Errorf("the English form shows %q", raw)
			}
		}
		// Sent empty but for the first name: every other field marked, the first name kept.
		r := v.must(http.StatusUnprocessableEntity, "POST", path+"?lang=en", url.Values{"csrf_token": {p.csrf(t)}, "medium.first_name": {"Zoë"}})
		for _, want := range []string{`id="form-problems" role="alert"`, `<a href="#m-last_name">Last name: Please fill this in.</a>`,
			`<a href="#m-birth_date">Date of birth: Please fill this in.</a>`, `<a href="#t-german_postal_code">Postal code: Please enter your postal code, or choose “Abroad”.</a>`,
			`id="e-m-last_name" aria-live="polite">Please fill this in.</span>`, `name="medium.first_name" value="Zoë"`, `name="medium.last_name" value="" aria-describedby="e-m-last_name" maxlength="100" required aria-invalid="true">`} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("the refused form lacks %s", want)
			}
		}
		if strings.Contains(r.Body, "/photo_id_lite") || strings.Contains(r.Body, "identification_medium:") ||
			!strings.Contains(r.Body, `value="Zoë" aria-describedby="e-m-first_name" maxlength="100" required>`) {
			t.Errorf("the refused form shows the schema's words or marks the good field:\n%.4000s", r.Body)
		}
		// Wrong formats, in German: the postal code's own words, a date that is none.
		r = v.must(http.StatusUnprocessableEntity, "POST", path, url.Values{"csrf_token": {p.csrf(t)}, "medium.first_name": {"Erika"},
			"medium.last_name": {"Mustermann"}, "medium.birth_date": {"1985-02-30"}, "tariff.german_postal_code": {"1011"}})
		for _, want := range []string{"Geburtsdatum: Bitte geben Sie ein vollständiges, gültiges Datum ein.", "Postleitzahl: Eine Postleitzahl hat fünf Ziffern, z. B. 10115.",
			`name="tariff.german_postal_code" value="1011"`, `<html lang="de"`} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("the German refusal lacks %s", want)
			}
		}
		if c, _ := e.App.Coupon(context.Background(), id); c.Coupon.Activated {
			t.Fatal("a refused form activated the coupon")
		}
		// Abroad, next month: December's ticket with the schema's word.
		r = v.must(http.StatusSeeOther, "POST", path+"?lang=en", url.Values{"csrf_token": {p.csrf(t)}, "medium.first_name": {"Erika"},
			"medium.last_name": {"Mustermann"}, "medium.birth_date": {"1985-03-07"}, "tariff.german_postal_code": {"1"},
			"choice.german_postal_code": {"not-germany"}, "month": {"next"}})
		if loc := r.Header.Get("Location"); loc != path+"?lang=en" {
			t.Errorf("after activation: Location %q", loc)
		}
		ts, err := e.Store.Read().TicketsOfCoupon(context.Background(), id)
		if err != nil || len(ts) != 1 || string(ts[0].TariffSettings) != `{"german_postal_code":"not-germany"}` ||
			!ts[0].ValidFrom.Equal(bln(2026, 12, 1, 0)) {
			t.Fatalf("tickets %+v %v", ts, err)
		}
		p = v.must(200, "GET", path+"?lang=en", nil)
		if !strings.Contains(p.Body, "1 Dec 2026 00:00 CET – 31 Dec 2026 23:59 CET") || !strings.Contains(p.Body, "Your ticket starts on 1 Dec 2026 00:00 CET.") {
			t.Errorf("December's ticket page:\n%.3000s", p.Body)
		}
	})
}
