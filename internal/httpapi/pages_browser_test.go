package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/engines/browsertest"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

type pagesResults struct {
	Pages    map[string]browserPage
	Wallets  map[string][]string
	Statuses map[string]any
	Texts    map[string]any
	Errors   []string
}

// TestPagesInChromium drives the traveller page and the operator console
// in headless Chromium as a person would (internal/engines/testdata/
// browser/pages.js): at 360 px on an Android phone in German and an iPhone
// in English, the coupon's form typed in and sent, the ticket shown by the
// rendering engine with the wallet button of that platform only; the
// console's sign-in with a forged and a tokenless form (403), a wrong
// password (401), each list, a key made, a product granted, a dead job
// retried, sign-out. axe-core finds no WCAG 2.1 AA violation on any page
// and no page is wider than the phone. SQLite only: the HTTP tests run
// the same flows on both engines. Screenshots stay in
// $FAREBOX_ENGINE_SCREENSHOTS when set.
func TestPagesInChromium(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Browser)
	// The rendering engine's clock is the browser's: tickets valid now.
	now := time.Now().UTC().Truncate(time.Second)
	e := apitest.New(t, store.SQLite, apitest.Options{Now: now, Configure: all(withOperator(t), transitOptions(t, now, caltrainFeeds...).Configure)})
	ids := productIDs(t, e)
	de := str(order(t, e, e.TestKey, ids["month/adult"]).Coupons[0]["id"])
	en := str(order(t, e, e.LiveKey, ids["month/adult"]).Coupons[0]["id"])
	dead := deadJob(t, e)
	var res pagesResults
	out := browsertest.Run(t, "pages.js", map[string]any{
		"base": e.URL, "coupons": map[string]string{"de": de, "en": en}, "user": "ops", "password": testOperatorPassword,
		"deadJob": dead,
		"typed": map[string]string{"medium.first_name": "Erika", "medium.last_name": "Mustermann",
			"medium.birth_date": "1985-03-07", "tariff.german_postal_code": "10115"},
	}, &res)
	t.Logf("screenshots in %s", out)
	if len(res.Errors) != 0 {
		t.Fatalf("browser errors: %v", res.Errors)
	}
	want := []string{"traveller-de-form", "traveller-de-ticket", "traveller-en-form", "traveller-en-ticket", "admin-signin",
		"admin-csrf-refused", "admin-signin-failed", "admin-accounts", "admin-key-created", "admin-catalog", "admin-feeds",
		"admin-jobs", "admin-inspection-keys", "admin-job-retried", "admin-signin-de"}
	checkBrowserPages(t, res.Pages, want, func(name string) bool {
		return endsDe(name) || strings.HasPrefix(name, "traveller-de")
	})
	// The wallet button of the platform only (interface §4).
	if w := res.Wallets["traveller-de"]; len(w) != 1 || w[0] != "wallet-google" {
		t.Errorf("Android sees %v, want the Google button only", w)
	}
	if w := res.Wallets["traveller-en"]; len(w) != 1 || w[0] != "wallet-apple" {
		t.Errorf("iPhone sees %v, want the Apple button only", w)
	}
	for name, text := range map[string]string{"traveller-de": "Ihr Ticket ist aktiv.", "traveller-en": "Your ticket is active."} {
		tx, _ := res.Texts[name].(map[string]any)
		if !strings.Contains(str(tx["page"]), text) || str(tx["frameProduct"]) == "" || !strings.Contains(str(tx["framePassenger"]), "Mustermann") {
			t.Errorf("%s: %v", name, tx)
		}
		if w, _ := tx["barcodeWidth"].(float64); w <= 0 {
			t.Errorf("%s: the engine drew no barcode", name)
		}
	}
	for _, id := range []string{de, en} {
		if c, err := e.App.Coupon(context.Background(), id); err != nil || !c.Coupon.Activated {
			t.Errorf("coupon %s not activated through the page: %v", id, err)
		}
	}
	st := res.Statuses
	num := func(k string) int { f, _ := st[k].(float64); return int(f) }
	if u, _ := st["unsignedAccounts"].(map[string]any); !strings.HasSuffix(str(u["url"]), "/admin/sign-in") {
		t.Errorf("the console without a session: %v", u)
	}
	for k, want := range map[string]int{"forgedSignIn": 403, "tokenlessSignIn": 403, "wrongPassword": 401, "signIn": 200,
		"createKey": 200, "grant": 200, "retry": 200, "signOut": 200} {
		if num(k) != want {
			t.Errorf("%s: %d, want %d", k, num(k), want)
		}
	}
	if !strings.HasSuffix(str(st["afterSignIn"]), "/admin/accounts") || !strings.HasSuffix(str(st["afterSignOut"]), "/admin/sign-in") {
		t.Errorf("after sign-in %v, after sign-out %v", st["afterSignIn"], st["afterSignOut"])
	}
	if !strings.Contains(str(res.Texts["createKey"]), "fbx_test_") || !strings.Contains(str(res.Texts["grant"]), "farebox-product-") ||
		!strings.Contains(str(res.Texts["deadJobs"]), "boom") || !strings.Contains(str(res.Texts["feeds"]), "caltrain-2023-trip-updates.pb") ||
		!strings.Contains(str(res.Texts["feeds"]), "last fetch") || !strings.Contains(str(res.Texts["feeds"]), "stale") {
		t.Errorf("action texts: %v", res.Texts)
	}
	if s, _ := e.Store.Read().JobState(context.Background(), "page_test", "x"); s != jobs.StateReady {
		t.Errorf("the retried job is %s", s)
	}
	if n := sessionRows(t, e); n != 0 {
		t.Errorf("%d sessions left after sign-out", n)
	}
}
