package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
)

// rawGet sends one request with the given cookies and no cookie jar (a
// jar does not send Secure cookies over the test's plain http, while a
// browser behind the https public URL does).
func rawDo(t *testing.T, method, u string, form url.Values, cookies []*http.Cookie, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	for _, c := range cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func cookieNamed(cs []*http.Cookie, name string) *http.Cookie {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestPagesSecureFromPublicURL: with an https --public-url and no
// --trusted-proxies, the pages' cookies are Secure and __Host- named, the
// console's sign-in works with them, and every answer (pages and API)
// carries Strict-Transport-Security; with an http public URL (or none)
// neither. Traveller pages (and every other page) carry noindex in a
// header and a meta tag; HTML pages send no Access-Control-Allow-Origin
// (not even to a preflight), while the JSON API keeps its CORS for the
// SDKs. Both engines.
func TestPagesSecureFromPublicURL(t *testing.T) {
	t.Parallel()
	httpsURL := func(d *httpapi.Deps) { d.PublicURL = "https://tickets.example.org" }
	apitest.ForEachEngine(t, apitest.Options{Configure: all(withOperator(t), httpsURL)}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		coupon := "/c/" + str(order(t, e, e.TestKey, ids["month/adult"]).Coupons[0]["id"])
		origin := map[string]string{"Origin": "https://evil.example"}

		// The console over the https public URL: __Host- cookies, Secure.
		form, body := rawDo(t, "GET", e.URL+"/admin/sign-in", nil, nil, origin)
		csrf := cookieNamed(form.Cookies(), "__Host-fbweb_csrf")
		if form.StatusCode != 200 || csrf == nil || !csrf.Secure || !csrf.HttpOnly || csrf.SameSite != http.SameSiteStrictMode || csrf.Path != "/" {
			t.Fatalf("sign-in form: %d, cookies %v", form.StatusCode, form.Header.Values("Set-Cookie"))
		}
		if cookieNamed(form.Cookies(), "fbweb_csrf") != nil {
			t.Error("a cookie without Secure over an https public URL")
		}
		tok := csrfRe.FindStringSubmatch(body)
		if tok == nil {
			t.Fatalf("no CSRF token:\n%.800s", body)
		}
		in, _ := rawDo(t, "POST", e.URL+"/admin/sign-in", url.Values{"csrf_token": {tok[1]}, "user": {"ops"}, "password": {testOperatorPassword}},
			[]*http.Cookie{csrf}, nil)
		sess := cookieNamed(in.Cookies(), "__Host-fbweb_session")
		if in.StatusCode != http.StatusSeeOther || sess == nil || !sess.Secure || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode {
			t.Fatalf("sign-in: %d %v", in.StatusCode, in.Header.Values("Set-Cookie"))
		}
		if acc, _ := rawDo(t, "GET", e.URL+"/admin/accounts", nil, []*http.Cookie{csrf, sess}, nil); acc.StatusCode != 200 {
			t.Errorf("the console with the Secure session: %d", acc.StatusCode)
		}
		// The same session under the plain name is not read.
		plain := &http.Cookie{Name: "fbweb_session", Value: sess.Value}
		if acc, _ := rawDo(t, "GET", e.URL+"/admin/accounts", nil, []*http.Cookie{plain}, nil); acc.StatusCode != http.StatusSeeOther {
			t.Errorf("the console with a plain-named session cookie: %d", acc.StatusCode)
		}

		// Every page: HSTS, noindex, no CORS.
		for _, path := range []string{coupon, coupon + "/ticket", "/c/farebox-coupon-nope", "/admin/sign-in", "/dashboard/sign-in", "/assets/web.css"} {
			r, b := rawDo(t, "GET", e.URL+path, nil, nil, origin)
			if r.Header.Get("Strict-Transport-Security") != "max-age=31536000" {
				t.Errorf("%s: HSTS %q", path, r.Header.Get("Strict-Transport-Security"))
			}
			if v := r.Header.Values("Access-Control-Allow-Origin"); len(v) != 0 {
				t.Errorf("%s: Access-Control-Allow-Origin %v", path, v)
			}
			if path == "/assets/web.css" {
				continue
			}
			if !strings.Contains(r.Header.Get("X-Robots-Tag"), "noindex") {
				t.Errorf("%s (%d): X-Robots-Tag %q", path, r.StatusCode, r.Header.Get("X-Robots-Tag"))
			}
			if strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") && !strings.Contains(b, `<meta name="robots" content="noindex`) {
				t.Errorf("%s: no meta robots noindex", path)
			}
		}
		p, b := rawDo(t, "GET", e.URL+coupon, nil, nil, origin)
		if p.StatusCode != 200 || !strings.Contains(b, `name="medium.first_name"`) {
			t.Errorf("traveller page %d", p.StatusCode)
		}
		pre, _ := rawDo(t, "OPTIONS", e.URL+coupon, nil, nil, map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
		if v := pre.Header.Values("Access-Control-Allow-Origin"); len(v) != 0 || pre.StatusCode == http.StatusNoContent {
			t.Errorf("a page's preflight: %d, Access-Control-Allow-Origin %v", pre.StatusCode, v)
		}

		// The JSON API keeps its CORS, and gets HSTS too.
		api := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.TestKey})
		if api.Header.Get("Access-Control-Allow-Origin") != "*" || api.Header.Get("Strict-Transport-Security") != "max-age=31536000" {
			t.Errorf("API: CORS %q, HSTS %q", api.Header.Get("Access-Control-Allow-Origin"), api.Header.Get("Strict-Transport-Security"))
		}
		apiPre, _ := rawDo(t, "OPTIONS", e.URL+"/v9/ticketing/orders.json", nil, nil, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
		if apiPre.StatusCode != http.StatusNoContent || apiPre.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("API preflight: %d %q", apiPre.StatusCode, apiPre.Header.Get("Access-Control-Allow-Origin"))
		}

		// An http public URL: plain cookies, no HSTS (development).
		for _, pub := range []string{"", "http://127.0.0.1:8080", "https-not.example"} {
			dev := apitest.NewOnStore(t, e.Store, apitest.Options{Configure: all(withOperator(t), func(d *httpapi.Deps) { d.PublicURL = pub })})
			r, _ := rawDo(t, "GET", dev.URL+"/admin/sign-in", nil, nil, nil)
			c := cookieNamed(r.Cookies(), "fbweb_csrf")
			if c == nil || c.Secure || r.Header.Get("Strict-Transport-Security") != "" {
				t.Errorf("public URL %q: cookies %v, HSTS %q", pub, r.Header.Values("Set-Cookie"), r.Header.Get("Strict-Transport-Security"))
			}
			if a := dev.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: dev.TestKey}); a.Header.Get("Strict-Transport-Security") != "" {
				t.Errorf("public URL %q: API HSTS %q", pub, a.Header.Get("Strict-Transport-Security"))
			}
		}
	})
}
