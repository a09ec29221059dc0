package httpapi_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/idempotency"
)

const dashPassword = "a long dashboard password"

// dashData is what the dashboard test orders through the API: a monthly
// coupon activated in live (order, coupon, ticket, subscription), an
// invoice of a live single ticket for a customer, a test order, and an
// order of another account.
type dashData struct {
	liveOrder, liveCoupon, liveSub, testOrder, foreignOrder, invoiceNumber, invoicePDF string
	foreignKeyID                                                                       string
}

func dashSetup(t *testing.T, e *apitest.Env) dashData {
	var d dashData
	ids := productIDs(t, e)
	var cid string
	cid, d.liveSub, _ = monthlyCoupon(t, e)
	d.liveCoupon = cid
	d.liveOrder = str(coupon(t, e, "v9", cid)["id"])
	var o orderResp
	e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey,
		Body: map[string]any{"product_ids": []string{ids["single/adult"]}, "optional_order_reference": "booking-live-1"}}).JSON(t, &o)
	d.liveOrder = o.OrderID
	items := orderSingles(t, e, e.LiveKey, 1)
	cust := newCustomer(t, e, e.LiveKey, []string{"Bahn Partner GmbH", "Hauptstraße 1", "01067 Dresden"}, nil)
	put(t, e, e.LiveKey, items[0], map[string]any{"customer_id": cust})
	inv := issue(t, e, e.LiveKey, items[0], "", map[string]any{})
	d.invoiceNumber, d.invoicePDF = inv.InvoiceNumber, inv.PDFURL
	runJobs(t, e)
	e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.TestKey,
		Body: map[string]any{"product_ids": []string{ids["single/adult"]}, "optional_order_reference": "booking-test-1"}}).JSON(t, &o)
	d.testOrder = o.OrderID
	other, otherKey := e.NewAccount("Other Partner", account.Live)
	d.foreignOrder = order(t, e, otherKey, ids["single/adult"]).OrderID
	keys, err := e.Store.Read().Keys(context.Background(), other)
	if err != nil || len(keys) != 1 {
		t.Fatalf("other account's keys: %v %v", keys, err)
	}
	d.foreignKeyID = keys[0].ID
	return d
}

// dashSignedIn is a visitor who accepted an invitation to e's account.
func dashSignedIn(t testing.TB, e *apitest.Env, email string) *visitor {
	t.Helper()
	v, _ := dashAccepted(t, e, e.AccountID, email, dashPassword)
	return v
}

// dashAccepted is a visitor who accepted an invitation of email to
// account accountID, choosing password, and the invitation's form.
func dashAccepted(t testing.TB, e *apitest.Env, accountID, email, password string) (*visitor, page) {
	t.Helper()
	token, err := e.WebUsers.InviteDashboardUser(context.Background(), idempotency.Claim{}, accountID, email)
	if err != nil {
		t.Fatal(err)
	}
	v := newVisitor(t, e, "en")
	form := v.must(200, "GET", "/dashboard/invite?token="+token, nil)
	v.must(http.StatusSeeOther, "POST", "/dashboard/invite", url.Values{"csrf_token": {form.csrf(t)}, "token": {token},
		"password": {password}, "password_repeat": {password}})
	return v, form
}

// TestDashboard drives the partner dashboard as a person would, on both
// engines: the invitation (good once), the password, every page in test
// and in live with nothing of the other environment or of another
// account, the search, the invoice's file, the usage page and its CSV,
// keys (create, last used, revoke), forged forms refused and sign-in
// failures throttled.
func TestDashboard(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: withWallets(t, true)}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		d := dashSetup(t, e)
		v := newVisitor(t, e, "en")

		// Without a session: every page sends to the sign-in form; a post is 401.
		for _, s := range []string{"/dashboard", "/dashboard/test/usage", "/dashboard/live/orders", "/dashboard/test/keys", "/dashboard/live/usage.csv"} {
			if r := v.must(http.StatusSeeOther, "GET", s, nil); r.Header.Get("Location") != "/dashboard/sign-in" {
				t.Errorf("%s without a session: Location %q", s, r.Header.Get("Location"))
			}
		}
		v.must(http.StatusUnauthorized, "POST", "/dashboard/test/keys", url.Values{})

		// The invitation: refused for an unknown account or a bad address;
		// unknown tokens are 404.
		if _, err := e.WebUsers.InviteDashboardUser(ctx, idempotency.Claim{}, "farebox-account-nope", "a@b.example"); err == nil {
			t.Error("invited to an unknown account")
		}
		if _, err := e.WebUsers.InviteDashboardUser(ctx, idempotency.Claim{}, e.AccountID, "not an address"); err == nil {
			t.Error("invited a malformed address")
		}
		token, err := e.WebUsers.InviteDashboardUser(ctx, idempotency.Claim{}, e.AccountID, "Ops@Partner.example")
		if err != nil {
			t.Fatal(err)
		}
		v.must(http.StatusNotFound, "GET", "/dashboard/invite?token=x"+token, nil)
		form := v.must(200, "GET", "/dashboard/invite?token="+token, nil)
		if !strings.Contains(form.Body, "ops@partner.example") {
			t.Errorf("invitation form:\n%.1500s", form.Body)
		}
		set := url.Values{"token": {token}, "password": {dashPassword}, "password_repeat": {dashPassword}}
		v.must(http.StatusForbidden, "POST", "/dashboard/invite", set) // no CSRF token
		set.Set("csrf_token", form.csrf(t))
		short := url.Values{"csrf_token": {form.csrf(t)}, "token": {token}, "password": {"short"}, "password_repeat": {"short"}}
		if r := v.must(http.StatusUnprocessableEntity, "POST", "/dashboard/invite", short); !strings.Contains(r.Body, "at least 12 characters") {
			t.Errorf("short password:\n%.1500s", r.Body)
		}
		mismatch := url.Values{"csrf_token": {form.csrf(t)}, "token": {token}, "password": {dashPassword}, "password_repeat": {dashPassword + "!"}}
		v.must(http.StatusUnprocessableEntity, "POST", "/dashboard/invite", mismatch)
		r := v.must(http.StatusSeeOther, "POST", "/dashboard/invite", set)
		if r.Header.Get("Location") != "/dashboard/test/usage" || !strings.Contains(strings.Join(r.Header.Values("Set-Cookie"), "\n"), "HttpOnly") {
			t.Errorf("accepted invitation: %v", r.Header)
		}
		// Good once.
		v2 := newVisitor(t, e, "en")
		v2.must(http.StatusNotFound, "GET", "/dashboard/invite?token="+token, nil)
		f2 := v2.must(200, "GET", "/dashboard/sign-in", nil)
		set.Set("csrf_token", f2.csrf(t))
		v2.must(http.StatusNotFound, "POST", "/dashboard/invite", set)

		// A dashboard session is not the operator's.
		if r := v.must(http.StatusSeeOther, "GET", "/admin/accounts", nil); r.Header.Get("Location") != "/admin/sign-in" {
			t.Errorf("a dashboard session opened the console: %v", r.Header)
		}

		// Every page in both environments; nothing of the other one, nor
		// of the other account.
		for _, env := range []string{"test", "live"} {
			for _, s := range []string{"usage", "orders", "coupons", "tickets", "subscriptions", "invoices", "customers", "keys"} {
				p := v.must(200, "GET", "/dashboard/"+env+"/"+s, nil)
				if !strings.Contains(p.Body, `id="env-banner"`) || !strings.Contains(p.Body, "env-"+env) || !strings.Contains(p.Body, "ops@partner.example") {
					t.Errorf("%s %s: no %s banner or user", env, s, env)
				}
				if strings.Contains(p.Body, d.foreignOrder) {
					t.Errorf("%s %s shows the other account's order", env, s)
				}
				mine, theirs := d.liveOrder, d.testOrder
				if env == "test" {
					mine, theirs = theirs, mine
				}
				if s == "orders" && (!strings.Contains(p.Body, mine) || strings.Contains(p.Body, theirs)) {
					t.Errorf("%s orders: want %s and not %s:\n%.3000s", env, mine, theirs, p.Body)
				}
			}
		}
		for path, want := range map[string]string{"/dashboard/live/coupons": d.liveCoupon, "/dashboard/live/subscriptions": d.liveSub,
			"/dashboard/live/tickets": "/c/" + d.liveCoupon, "/dashboard/live/invoices": d.invoiceNumber, "/dashboard/live/customers": "Bahn Partner GmbH"} {
			if p := v.must(200, "GET", path, nil); !strings.Contains(p.Body, want) {
				t.Errorf("%s lacks %s", path, want)
			}
		}
		// Names, not ids (issue 34): a subscription's product, a customer
		// by name with its id below.
		if p := v.must(200, "GET", "/dashboard/live/subscriptions", nil); !regexp.MustCompile(`data-label="Product">[^<—]+</td>`).MatchString(p.Body) ||
			strings.Contains(p.Body, "farebox-product-") {
			t.Errorf("subscriptions: no product name:\n%.3000s", p.Body)
		}
		if p := v.must(200, "GET", "/dashboard/live/customers", nil); !regexp.MustCompile(`data-label="Customer">Bahn Partner GmbH<br><span class="small mono">farebox-customer-`).MatchString(p.Body) {
			t.Errorf("customers: not by name:\n%.3000s", p.Body)
		}
		// Created: relative to now in a <time>, the absolute time its title (issue 34).
		if p := v.must(200, "GET", "/dashboard/live/customers", nil); !regexp.MustCompile(`<time datetime="[0-9T:-]+Z" title="[^"]+">just now</time>`).MatchString(p.Body) {
			t.Errorf("customers: no relative time:\n%.3000s", p.Body)
		}
		for _, path := range []string{"/dashboard/test/coupons", "/dashboard/test/subscriptions", "/dashboard/test/invoices", "/dashboard/test/customers"} {
			if p := v.must(200, "GET", path, nil); strings.Contains(p.Body, d.liveCoupon) || strings.Contains(p.Body, d.invoiceNumber) || strings.Contains(p.Body, "Bahn Partner GmbH") {
				t.Errorf("%s shows live records", path)
			}
		}
		// Search by reference and number; state filters.
		if p := v.must(200, "GET", "/dashboard/live/orders?reference=booking-live-1", nil); !strings.Contains(p.Body, d.liveOrder) || strings.Count(p.Body, `<tr role="row">`) != 2 {
			t.Errorf("search by reference:\n%.3000s", p.Body)
		}
		if p := v.must(200, "GET", "/dashboard/test/orders?reference=booking-live-1", nil); strings.Contains(p.Body, d.liveOrder) {
			t.Error("the test environment finds a live order by its reference")
		}
		if p := v.must(200, "GET", "/dashboard/live/invoices?number="+url.QueryEscape(d.invoiceNumber), nil); !strings.Contains(p.Body, d.invoicePDF) {
			t.Errorf("invoice search: no PDF link %s", d.invoicePDF)
		}
		if p := get(t, e, d.invoicePDF, 200); !strings.HasPrefix(string(p.Body), "%PDF") {
			t.Error("the invoice's PDF link does not download a PDF")
		}
		v.must(http.StatusBadRequest, "GET", "/dashboard/live/coupons?state=bogus", nil)
		v.must(200, "GET", "/dashboard/live/coupons?state=activated", nil)
		// A cursor of another account or environment is refused.
		v.must(http.StatusBadRequest, "GET", "/dashboard/live/orders?starting_after="+d.foreignOrder, nil)
		v.must(http.StatusBadRequest, "GET", "/dashboard/live/orders?starting_after="+d.testOrder, nil)
		// An empty search says what to do (issue 34), not "Nothing here yet".
		if r := v.must(200, "GET", "/dashboard/live/orders?reference=no-such-reference", nil); !strings.Contains(r.Body, "Nothing matches this search or filter.") {
			t.Errorf("an empty search:\n%.3000s", r.Body)
		}
		// An unknown environment is 404.
		v.must(http.StatusNotFound, "GET", "/dashboard/prod/orders", nil)

		// Usage: two test requests and the live ones of the setup, each
		// environment on its own; the CSV has the same rows.
		for i := 0; i < 2; i++ {
			e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/orders.json", Key: e.TestKey})
		}
		day := e.Clock.Now().UTC().Format(time.DateOnly)
		u := v.must(200, "GET", "/dashboard/test/usage", nil)
		for _, want := range []string{"<svg", `role="img"`, "<desc", `id="chart-all"`, `id="usage-table"`, day, `id="totals"`,
			`group=ticketing&amp;to=`, `ticketing <span class="count">`, `aria-current="true">All requests`} {
			if !strings.Contains(u.Body, want) {
				t.Errorf("usage page lacks %q:\n%.4000s", want, u.Body)
			}
		}
		// One chart, its group chosen by a link; an unknown group shows all.
		g := v.must(200, "GET", "/dashboard/test/usage?group=ticketing", nil)
		if !strings.Contains(g.Body, `id="chart-ticketing"`) || strings.Contains(g.Body, `id="chart-all"`) || strings.Count(g.Body, "<svg") != 2 {
			t.Errorf("the ticketing chart:\n%.4000s", g.Body)
		}
		if g := v.must(200, "GET", "/dashboard/test/usage?group=%3Cb%3E", nil); !strings.Contains(g.Body, `id="chart-all"`) {
			t.Errorf("an unknown group")
		}
		c := v.must(200, "GET", "/dashboard/test/usage.csv?from="+day+"&to="+day, nil)
		if c.Header.Get("Content-Type") != "text/csv; charset=utf-8" || !strings.Contains(c.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("CSV headers %v", c.Header)
		}
		rows, err := csv.NewReader(strings.NewReader(c.Body)).ReadAll()
		if err != nil || len(rows) < 2 || strings.Join(rows[0], ",") != "date,environment,group,endpoint,counted,uncounted,refused" {
			t.Fatalf("CSV %v %q", err, c.Body)
		}
		var listCount string
		for _, row := range rows[1:] {
			if row[1] != "test" || row[0] != day {
				t.Errorf("test CSV row %v", row)
			}
			if row[3] == "GET /v9/ticketing/orders.json" {
				listCount = row[4]
			}
		}
		if listCount != "2" {
			t.Errorf("the test CSV counts %q list requests, want 2:\n%s", listCount, c.Body)
		}
		lc := v.must(200, "GET", "/dashboard/live/usage.csv", nil)
		if strings.Contains(lc.Body, "GET /v9/ticketing/orders.json") || !strings.Contains(lc.Body, "POST /v9/ticketing/orders.json") {
			t.Errorf("live CSV mixes environments:\n%s", lc.Body)
		}
		v.must(http.StatusBadRequest, "GET", "/dashboard/test/usage?from=2026-13-01", nil)
		v.must(http.StatusBadRequest, "GET", "/dashboard/test/usage?from=2024-01-01&to=2026-01-01", nil)

		// Keys: a forged create is refused; a test key made, shown once,
		// used, listed with its last use, revoked.
		kp := v.must(200, "GET", "/dashboard/test/keys", nil)
		before, _ := e.Store.Read().Keys(ctx, e.AccountID)
		v.must(http.StatusForbidden, "POST", "/dashboard/test/keys", url.Values{})
		v.must(http.StatusForbidden, "POST", "/dashboard/test/keys", url.Values{"csrf_token": {f2.csrf(t)}}) // another visitor's token
		if after, _ := e.Store.Read().Keys(ctx, e.AccountID); len(after) != len(before) {
			t.Fatal("a forged post made a key")
		}
		made := v.postRedirect("/dashboard/test/keys", url.Values{"csrf_token": {kp.csrf(t)}})
		secret := regexp.MustCompile(`fbx_test_[A-Za-z0-9_]+`).FindString(made.Body)
		if secret == "" {
			t.Fatalf("no key shown:\n%.2000s", made.Body)
		}
		if strings.Contains(v.must(200, "GET", "/dashboard/test/keys", nil).Body, secret) {
			t.Error("the secret is shown again")
		}
		if !strings.Contains(made.Body, "never") {
			t.Error("a new key's last use is not 'never'")
		}
		e.Clock.Advance(2 * time.Minute)
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: secret})
		var newKey account.Key
		all, _ := e.Store.Read().Keys(ctx, e.AccountID)
		for _, k := range all {
			if strings.HasPrefix(secret, k.Prefix) {
				newKey = k
			}
		}
		if newKey.LastUsedAt == nil {
			t.Fatal("the used key has no last use")
		}
		var liveKeyID string
		for _, k := range all {
			if k.Environment == account.Live {
				liveKeyID = k.ID
			}
		}
		tok := kp.csrf(t)
		v.must(http.StatusNotFound, "POST", "/dashboard/test/keys/"+d.foreignKeyID+"/revoke", url.Values{"csrf_token": {tok}})
		v.must(http.StatusNotFound, "POST", "/dashboard/test/keys/"+liveKeyID+"/revoke", url.Values{"csrf_token": {tok}})
		v.must(http.StatusForbidden, "POST", "/dashboard/test/keys/"+newKey.ID+"/revoke", url.Values{})
		v.must(200, "POST", "/dashboard/test/keys/"+newKey.ID+"/revoke", url.Values{"csrf_token": {tok}})
		e.Must(401, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: secret})
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.LiveKey})

		// Sign-out ends the session; sign-in failures are throttled.
		out := v.must(200, "GET", "/dashboard/test/usage", nil)
		v.must(http.StatusSeeOther, "POST", "/dashboard/sign-out", url.Values{"csrf_token": {out.csrf(t)}})
		v.must(http.StatusSeeOther, "GET", "/dashboard/test/usage", nil)
		s := newVisitor(t, e, "de")
		sf := s.must(200, "GET", "/dashboard/sign-in", nil)
		s.must(http.StatusForbidden, "POST", "/dashboard/sign-in", url.Values{"email": {"ops@partner.example"}, "password": {dashPassword}})
		for i := 0; i < 5; i++ {
			s.must(http.StatusUnauthorized, "POST", "/dashboard/sign-in", url.Values{"csrf_token": {sf.csrf(t)}, "email": {"ops@partner.example"}, "password": {"wrong password " + string(rune('a'+i))}})
		}
		th := s.must(http.StatusTooManyRequests, "POST", "/dashboard/sign-in", url.Values{"csrf_token": {sf.csrf(t)}, "email": {"ops@partner.example"}, "password": {dashPassword}})
		if th.Header.Get("Retry-After") == "" {
			t.Error("throttled sign-in without Retry-After")
		}
		e.Clock.Advance(16 * time.Minute)
		s.must(http.StatusUnauthorized, "POST", "/dashboard/sign-in", url.Values{"csrf_token": {sf.csrf(t)}, "email": {"nobody@partner.example"}, "password": {dashPassword}})
		in := s.must(http.StatusSeeOther, "POST", "/dashboard/sign-in", url.Values{"csrf_token": {sf.csrf(t)}, "email": {" OPS@partner.example "}, "password": {dashPassword}})
		if in.Header.Get("Location") != "/dashboard/test/usage" {
			t.Errorf("sign-in: %v", in.Header)
		}
		if p := s.must(200, "GET", "/dashboard/live/usage", nil); !strings.Contains(p.Body, "Live-Umgebung") {
			t.Error("the German live banner is missing")
		}

		// The other account's user sees only its own account.
		if _, err := e.WebUsers.InviteDashboardUser(ctx, idempotency.Claim{}, e.AccountID, "ops@partner.example"); err != nil {
			t.Errorf("a second invitation for the same user: %v", err)
		}
	})
}

var _ = httpapi.RouteInfo{}
