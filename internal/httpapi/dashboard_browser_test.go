package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/engines/browsertest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

type dashResults struct {
	Pages    map[string]browserPage
	Statuses map[string]any
	Texts    map[string]any
	Errors   []string
}

// TestDashboardInChromium drives the partner dashboard in headless
// Chromium at 360 px (internal/engines/testdata/browser/dashboard.js): the
// invitation link and the password, the usage page's chart and table, the
// CSV download, every list in test and live and the switch between them,
// the search by reference, a forged form (403) and a key made, the
// webhooks (a refused form, an endpoint made, its deliveries and a
// redelivery), the users page (another user removed), sign-out, a
// wrong password and sign-in. axe-core finds no WCAG 2.1 AA violation and
// no page is wider than the phone. SQLite only: TestDashboard runs the
// same flows over HTTP on both engines.
func TestDashboardInChromium(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Browser)
	e := apitest.New(t, store.SQLite, apitest.Options{Configure: withWallets(t, true)})
	d := dashSetup(t, e)
	for i := 0; i < 3; i++ {
		e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/orders.json", Key: e.TestKey})
	}
	// An endpoint with a delivered event and a failed one, for the
	// deliveries page; the receiver for the endpoint the browser makes.
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			http.Error(w, "receiver is down for maintenance", http.StatusServiceUnavailable)
		}
	})
	hook := str(createEndpoint(t, e, e.TestKey, rc.URL+"/seeded", "order.created")["id"])
	ids := productIDs(t, e)
	order(t, e, e.TestKey, ids["single/adult"])
	drain(t, e)
	order(t, e, e.TestKey, ids["single/adult"])
	drain(t, e)
	token, err := e.WebUsers.InviteDashboardUser(context.Background(), idempotency.Claim{}, e.AccountID, "ops@partner.example")
	if err != nil {
		t.Fatal(err)
	}
	// A second user of the account, whom the browser removes.
	other, err := e.WebUsers.InviteDashboardUser(context.Background(), idempotency.Claim{}, e.AccountID, "bob@partner.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.WebUsers.AcceptDashboardInvite(context.Background(), idempotency.Claim{}, other, dashPassword, dashPassword); err != nil {
		t.Fatal(err)
	}
	var res dashResults
	out := browsertest.Run(t, "dashboard.js", map[string]any{
		"base": e.URL, "invite": e.URL + "/dashboard/invite?token=" + token, "email": "ops@partner.example",
		"password": dashPassword, "reference": "booking-live-1",
		"receiver": rc.URL + "/made-in-browser", "hook": hook, "otherUser": "bob@partner.example",
	}, &res)
	t.Logf("screenshots in %s", out)
	if len(res.Errors) != 0 {
		t.Fatalf("browser errors: %v", res.Errors)
	}
	want := []string{"dash-signin", "dash-invite", "dash-usage-test", "dash-usage-live", "dash-orders-search",
		"dash-csrf-refused", "dash-key-created", "dash-signin-failed", "dash-usage-de", "dash-usage-1280-de",
		"dash-webhooks-error", "dash-webhooks-created", "dash-webhook-attempts", "dash-webhook-redelivered", "dash-webhooks-de", "dash-webhook-de",
		"dash-users-removed", "dash-orders-1280-de", "dash-subscriptions-1280-de", "dash-customers-1280-de", "dash-keys-1280-de",
		"dash-users-1280-de", "dash-webhooks-1280-de", "dash-webhook-1280-de"}
	for _, env := range []string{"test", "live"} {
		for _, s := range []string{"orders", "coupons", "tickets", "subscriptions", "invoices", "customers", "keys", "webhooks", "users"} {
			want = append(want, "dash-"+s+"-"+env)
		}
	}
	checkBrowserPages(t, res.Pages, want, endsDe)
	st, tx := res.Statuses, res.Texts
	num := func(m map[string]any, k string) int { f, _ := m[k].(float64); return int(f) }
	for k, want := range map[string]int{"unsigned": 200, "setPassword": 200, "switched": 200, "search": 200, "forgedKey": 403,
		"createKey": 200, "keyReload": 200, "removeUser": 200, "signOut": 200, "wrongPassword": 401, "signIn": 200, "hookNoEvents": 400, "createHook": 200, "redeliver": 200} {
		if num(st, k) != want {
			t.Errorf("%s: %d, want %d", k, num(st, k), want)
		}
	}
	for k, suffix := range map[string]string{"unsignedURL": "/dashboard/sign-in", "afterSetPassword": "/dashboard/test/usage",
		"switchedURL": "/dashboard/live/orders", "afterSignOut": "/dashboard/sign-in", "afterSignIn": "/dashboard/test/usage"} {
		if !strings.HasSuffix(str(st[k]), suffix) {
			t.Errorf("%s: %v, want …%s", k, st[k], suffix)
		}
	}
	if !strings.Contains(str(tx["banner"]), "Test environment") || tx["bannerColour"] == tx["liveBannerColour"] {
		t.Errorf("banner %v, colours test %v live %v", tx["banner"], tx["bannerColour"], tx["liveBannerColour"])
	}
	if num(tx, "bars") < 1 || !strings.Contains(str(tx["chartDesc"]), "counted") || num(tx, "chartWidth") > 330 {
		t.Errorf("chart: %v bars, desc %q, %v px wide", tx["bars"], tx["chartDesc"], tx["chartWidth"])
	}
	// Issue 34: the axes' text at the page's size on a phone and at 1280 px
	// (not 10 and 24 px), the scale at round values, days named along the axis.
	type chartFacts struct {
		Cls           string
		Width, TickPx float64
		Ticks         []string
		Days          int
	}
	var narrow, wide chartFacts
	remarshal(t, tx["narrowChart"], &narrow)
	remarshal(t, tx["wideChart"], &wide)
	t.Logf("usage chart: phone %+v; 1280 px %+v", narrow, wide)
	for name, c := range map[string]chartFacts{"phone": narrow, "wide": wide} {
		if c.TickPx < 12 || c.TickPx > 20 || len(c.Ticks) != 5 || c.Ticks[0] != "0" {
			t.Errorf("%s chart: tick text %.1f px, ticks %v", name, c.TickPx, c.Ticks)
		}
	}
	if narrow.Days < 3 || wide.Cls != "wide" || wide.Width < 600 {
		t.Errorf("days named %d; the wide chart %+v", narrow.Days, wide)
	}
	if str(tx["keptEmail"]) != "ops@partner.example" {
		t.Errorf("the sign-in form lost the address after a wrong password")
	}
	if !strings.Contains(str(tx["table"]), "ticketing") {
		t.Errorf("usage table: %v", tx["table"])
	}
	csv, _ := tx["csv"].(map[string]any)
	if num(csv, "status") != 200 || str(csv["type"]) != "text/csv; charset=utf-8" || !strings.Contains(str(csv["disposition"]), "attachment") ||
		!strings.Contains(str(csv["body"]), ",test,ticketing,GET /v9/ticketing/orders.json,3,") || strings.Contains(str(csv["body"]), ",live,") {
		t.Errorf("CSV: %v", csv)
	}
	for k, wantIn := range map[string]string{"orders-live": d.liveOrder, "orders-test": d.testOrder, "coupons-live": d.liveCoupon,
		"subscriptions-live": d.liveSub, "invoices-live": d.invoiceNumber, "customers-live": "Bahn Partner GmbH", "search": d.liveOrder} {
		if !strings.Contains(str(tx[k]), wantIn) {
			t.Errorf("%s lacks %s: %v", k, wantIn, tx[k])
		}
	}
	for k, notIn := range map[string]string{"orders-live": d.testOrder, "orders-test": d.liveOrder, "coupons-test": d.liveCoupon, "search": d.testOrder} {
		if strings.Contains(str(tx[k]), notIn) {
			t.Errorf("%s shows %s of the other environment", k, notIn)
		}
	}
	secret := testKeyRe.FindString(str(tx["createKey"]))
	if secret == "" || !strings.HasSuffix(str(st["createKeyURL"]), "/dashboard/test/keys") {
		t.Errorf("key made: %v at %v", tx["createKey"], st["createKeyURL"])
	}
	// The reload after the redirect shows the secret no more.
	if secret != "" && strings.Contains(str(tx["keyReload"]), secret) || testKeyRe.MatchString(str(tx["keyReload"])) {
		t.Errorf("the reload shows the key again: %v", tx["keyReload"])
	}
	if !strings.Contains(str(tx["removeUser"]), "bob@partner.example removed") || strings.Contains(str(tx["removeUser"]), "Remove bob") {
		t.Errorf("user removed: %v", tx["removeUser"])
	}
	if users, _ := e.WebUsers.DashboardUsers(context.Background(), e.AccountID); len(users) != 1 {
		t.Errorf("users after the removal: %+v", users)
	}
	// Webhooks: the field's error with the typed url kept; the endpoint
	// made (secret once, listed), the seeded deliveries, the redelivery.
	if !strings.Contains(str(tx["hookError"]), "event type") || str(tx["hookURLKept"]) != rc.URL+"/made-in-browser" {
		t.Errorf("webhook form error %v, url %v", tx["hookError"], tx["hookURLKept"])
	}
	if !strings.Contains(str(tx["createHook"]), "whsec_") || !strings.Contains(str(tx["hookList"]), "/made-in-browser") || !strings.Contains(str(tx["hookList"]), "/seeded") {
		t.Errorf("webhook made: %v\n%v", tx["createHook"], tx["hookList"])
	}
	// Times relative to now (issue 34), the exact one in the title.
	for _, want := range []string{"order.created", "200", "503", "receiver is down for maintenance", "just now"} {
		if !strings.Contains(str(tx["attempts"]), want) {
			t.Errorf("deliveries lack %q: %v", want, tx["attempts"])
		}
	}
	if !strings.Contains(str(tx["redeliver"]), "delivered again") {
		t.Errorf("redeliver: %v", tx["redeliver"])
	}
	drain(t, e)
	// The newest row's event (the failed second order's) posted again.
	if got := rc.all(); len(got) != 3 || got[2].EventID != got[1].EventID {
		t.Errorf("the redelivery did not reach the receiver: %v", got)
	}
}
