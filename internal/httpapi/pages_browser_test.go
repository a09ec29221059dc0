package httpapi_test

import (
	"context"
	"encoding/json"
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
// retried, the clearing page (also at 1280 px), sign-out. axe-core finds no WCAG 2.1 AA violation on any page
// and no page is wider than the phone. SQLite only: the HTTP tests run
// the same flows on both engines. Screenshots stay in
// $FAREBOX_ENGINE_SCREENSHOTS when set.
func TestPagesInChromium(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Browser)
	// The rendering engine's clock is the browser's: tickets valid now.
	now := time.Now().UTC().Truncate(time.Second)
	e := apitest.New(t, store.SQLite, apitest.Options{Now: now, Configure: all(withOperator(t), transitOptions(t, now, caltrainFeeds...).Configure)})
	ids := productIDs(t, e)
	de := str(order(t, e, e.TestKey, ids["month/adult"]).Coupons[0]["id"])
	en := str(order(t, e, e.LiveKey, ids["month/adult"]).Coupons[0]["id"])
	fresh := str(order(t, e, e.TestKey, ids["month/adult"]).Coupons[0]["id"])
	dead := deadJob(t, e)
	var res pagesResults
	out := browsertest.Run(t, "pages.js", map[string]any{
		"base": e.URL, "coupons": map[string]string{"de": de, "en": en, "fresh": fresh}, "user": "ops", "password": testOperatorPassword,
		"deadJob": dead,
		"typed": map[string]string{"medium.first_name": "Erika", "medium.last_name": "Mustermann",
			"medium.birth_date": "1985-03-07", "tariff.german_postal_code": "10115"},
		// The German traveller lives abroad: a choice, not a word to type.
		"typedDe": map[string]string{"medium.first_name": "Erika", "medium.last_name": "Mustermann",
			"medium.birth_date": "1985-03-07", "choice": "#c-german_postal_code-not-germany"},
	}, &res)
	t.Logf("screenshots in %s", out)
	if len(res.Errors) != 0 {
		t.Fatalf("browser errors: %v", res.Errors)
	}
	want := []string{"traveller-de-form", "traveller-de-form-errors", "traveller-de-ticket", "traveller-en-form", "traveller-en-form-errors",
		"traveller-en-ticket", "traveller-de-ticket-switched", "traveller-en-ticket-switched", "traveller-de-ticket-1280",
		"traveller-en-ticket-1280", "traveller-de-form-1280", "traveller-en-form-1280", "admin-signin",
		"admin-csrf-refused", "admin-signin-failed", "admin-accounts", "admin-key-created", "admin-catalog", "admin-feeds",
		"admin-jobs", "admin-inspection-keys", "admin-clearing", "admin-clearing-1280", "admin-job-retried", "admin-signin-de"}
	checkBrowserPages(t, res.Pages, want, func(name string) bool {
		if strings.HasSuffix(name, "-switched") { // the switch leads to the other language
			return strings.HasPrefix(name, "traveller-en")
		}
		return endsDe(name) || strings.HasPrefix(name, "traveller-de")
	})
	for _, name := range []string{"admin-clearing", "admin-clearing-1280"} {
		if p := res.Pages[name]; p.Status != 200 || p.Title == "" {
			t.Errorf("%s: status %d, title %q: want the page itself", name, p.Status, p.Title)
		}
	}
	checkTravellerInChromium(t, e, res, map[string]string{"traveller-de": de, "traveller-en": en})
	// The wallet button of the platform only (interface §4).
	if w := res.Wallets["traveller-de"]; len(w) != 1 || w[0] != "wallet-google" {
		t.Errorf("Android sees %v, want the Google button only", w)
	}
	if w := res.Wallets["traveller-en"]; len(w) != 1 || w[0] != "wallet-apple" {
		t.Errorf("iPhone sees %v, want the Apple button only", w)
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

// checkTravellerInChromium asserts what pages.js measured on the
// traveller pages (issue 34): the empty form marked at its fields with a
// summary that takes the focus, the postal code checked as typed, the
// residence as a choice, the late month's warning and choice, the ticket
// with its barcode in the first 640 px of a 360 px phone and the wallet
// button right under it (at 1280 px beside it), every target at least
// 44 px, the ticket offline, the language switch, and the first load's
// weight (at most 100 KB) and first paint (logged) on "Slow 4G".
func checkTravellerInChromium(t *testing.T, e *apitest.Env, res pagesResults, coupons map[string]string) {
	t.Helper()
	for name, w := range map[string]struct{ active, summary, required, postal, switchedH1 string }{
		"traveller-de": {"Ihr Ticket ist aktiv.", "Bitte prüfen Sie diese Angaben:", "Bitte ausfüllen.", "fünf Ziffern", "Your ticket"},
		"traveller-en": {"Your ticket is active.", "Please check these entries:", "Please fill this in.", "five digits", "Ihr Ticket"},
	} {
		var tx travellerFacts
		remarshal(t, res.Texts[name], &tx)
		if !strings.Contains(tx.Page, w.active) || tx.FrameProduct == "" || !strings.Contains(tx.FramePassenger, "Mustermann") || tx.BarcodeWidth <= 0 {
			t.Errorf("%s: the ticket %+v", name, tx)
		}
		if !strings.Contains(tx.Empty.Summary, w.summary) || tx.Empty.Focused != "form-problems" || len(tx.Empty.Invalid) < 4 ||
			!strings.Contains(strings.Join(tx.Empty.AtFields, "\n"), "e-m-first_name: "+w.required) || strings.Contains(tx.Empty.Summary, "/photo_id_lite") {
			t.Errorf("%s: the empty form %+v", name, tx.Empty)
		}
		if !strings.Contains(tx.PostalShort, w.postal) || tx.PostalFixed != "" || tx.PostalInvalid != "" {
			t.Errorf("%s: postal code as typed: %q, then %q (aria-invalid %q)", name, tx.PostalShort, tx.PostalFixed, tx.PostalInvalid)
		}
		if len(tx.Months) == 0 {
			t.Errorf("%s: no month to choose", name)
		}
		if late := len(tx.Months) == 2 && !tx.Months[0].Checked && !tx.Months[1].Checked; late != (tx.LateWarning != "") {
			t.Errorf("%s: months %+v, warning %q", name, tx.Months, tx.LateWarning)
		}
		if tx.BarcodeBottom > 640 || tx.BarcodeTop < 0 {
			t.Errorf("%s: the barcode spans %d–%d px on a 360 × 640 phone, want it all within 640", name, tx.BarcodeTop, tx.BarcodeBottom)
		}
		if len(tx.Wallets) != 1 || tx.Wallets[0].Height < 44 || tx.Wallets[0].Top > tx.FrameTop+tx.FrameHeight+60 {
			t.Errorf("%s: wallet buttons %+v (frame %d px)", name, tx.Wallets, tx.FrameHeight)
		}
		for state, small := range tx.Small {
			if len(small) > 0 {
				t.Errorf("%s %s: targets under 44 × 44 px: %v", name, state, small)
			}
		}
		if tx.Offline.Product == "" || tx.Offline.BarcodeWidth <= 0 || !strings.Contains(tx.Offline.Page, w.active) {
			t.Errorf("%s offline: %+v", name, tx.Offline)
		}
		if !strings.Contains(tx.Switched.H1, w.switchedH1) || !strings.Contains(tx.Switched.URL, "?lang=") {
			t.Errorf("%s: after the language switch %+v", name, tx.Switched)
		}
		if c, err := e.App.Coupon(context.Background(), coupons[name]); err != nil || !c.Coupon.Activated {
			t.Errorf("coupon %s not activated through the page: %v", coupons[name], err)
		}
	}
	for _, name := range []string{"traveller-de-ticket-1280", "traveller-en-ticket-1280"} {
		var tx travellerFacts
		remarshal(t, res.Texts[name], &tx)
		if len(tx.Wallets) != 2 || tx.BarcodeBottom > 800 || tx.Wallets[0].Top > tx.BarcodeBottom {
			t.Errorf("%s: beside the ticket, both wallet buttons: %+v", name, tx)
		}
	}
	// The German traveller chose "abroad": the ticket carries the schema's word.
	ts, err := e.Store.Read().TicketsOfCoupon(context.Background(), coupons["traveller-de"])
	if err != nil || len(ts) != 1 || !strings.Contains(string(ts[0].TariffSettings), `"not-germany"`) {
		t.Errorf("the abroad choice: %v %v", ts, err)
	}
	var load struct {
		Bytes, Fcp, Loaded float64
		Requests           []string
	}
	remarshal(t, res.Texts["firstLoad"], &load)
	t.Logf("first load of a ticket page on Slow 4G: %.0f bytes transferred, first contentful paint %.0f ms, loaded with its ticket %.0f ms, requests %v",
		load.Bytes, load.Fcp, load.Loaded, load.Requests)
	// The weight is the page's own and is held to 100 KB; the time is
	// measured and reported (docs/web.md), not asserted: on a shared
	// machine it says as much about the load as about the page.
	if load.Bytes <= 0 || load.Bytes > 100*1024 || load.Fcp <= 0 {
		t.Errorf("first load: %.0f bytes, first paint %.0f ms; want under 100 KB and a paint", load.Bytes, load.Fcp)
	}
}

// travellerFacts is what pages.js records of a traveller page.
type travellerFacts struct {
	Page, FrameProduct, FramePassenger string
	BarcodeWidth                       float64
	Empty                              struct {
		Summary, Focused, URL string
		Invalid, AtFields     []string
	}
	PostalShort, PostalFixed, PostalInvalid, LateWarning string
	Months                                               []struct {
		Value, Label string
		Checked      bool
	}
	FrameTop, BarcodeTop, BarcodeBottom, FrameHeight int
	Wallets                                          []struct {
		ID                 string
		Top, Width, Height int
	}
	Small   map[string][]string
	Offline struct {
		Product, Page string
		BarcodeWidth  float64
	}
	Switched struct{ Lang, H1, URL string }
}

// remarshal decodes a results.json value into out.
func remarshal(t *testing.T, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		t.Fatal(err)
	}
}
