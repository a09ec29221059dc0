package httpapi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/engines/browsertest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

// goldenNow is the golden screenshots' clock: the server's test clock and,
// pinned, the browser's. Six days before the month ends, so a monthly
// coupon's page offers the late-month choice.
var goldenNow = time.Date(2026, 6, 24, 10, 0, 0, 0, time.UTC)

// TestGoldenPagesInChromium keeps a golden screenshot of every web page
// and state (docs/web.md "Golden screenshots"): the traveller page (form,
// its errors, the late-month choice, the ticket valid on the pinned
// clock), the partner dashboard (sign-in and its failure keeping the
// address, home, every list, an empty list, the detail pages) and the
// operator console (sign-in and its failure keeping the user name, every
// page, an empty list), in English and German, at 360 and 1280 px. One
// server, one browser (internal/engines/testdata/browser/golden.js), the
// test clock fixed and pinned in the browser, ids masked; each shot
// compared with testdata/golden/<name>.png within
// browsertest.DefaultTolerance (-update rewrites them and the copies in
// docs/img/web; a mismatch leaves <shot>.diff.png). On the 360 px pages
// every interactive target is at least 44 × 44 px. SQLite only.
func TestGoldenPagesInChromium(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Browser)
	e := apitest.New(t, store.SQLite, apitest.Options{Now: goldenNow, Configure: withOperator(t)})
	deadJob(t, e) // first: it claims every job there is
	d := detailSetup(t, e)
	ids := productIDs(t, e)
	dashSignedIn(t, e, "ops@partner.example")
	// A minute between records: lists ordered by time then by (random)
	// id show them in the same order every run.
	e.Clock.Advance(time.Minute)
	fresh := str(order(t, e, e.LiveKey, ids["single/adult"]).Coupons[0]["id"])
	e.Clock.Advance(time.Minute)
	month := str(order(t, e, e.LiveKey, ids["month/adult"]).Coupons[0]["id"])
	e.Clock.Advance(time.Minute)
	hook := e.Must(201, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Key: e.LiveKey,
		Body: map[string]any{"url": "https://93.184.215.14/hooks", "enabled_events": []string{"*"}}}).Map(t)
	pages := goldenPages(t.TempDir(), goldenIDs{fresh: fresh, month: month, active: d.coupon, order: d.order, ticket: d.ticket,
		invoice: d.invoice, webhook: str(hook["id"])})
	var res struct {
		Small  map[string][]string
		URLs   map[string]string
		Errors []string
	}
	started := time.Now()
	shots := browsertest.Run(t, "golden.js", map[string]any{"base": e.URL, "now": e.Clock.Now().Format(time.RFC3339), "golden": pages}, &res)
	t.Logf("screenshots in %s", shots)
	if len(res.Errors) != 0 {
		t.Fatalf("browser errors: %v", res.Errors)
	}
	browsed, kept := time.Since(started), 0
	for _, g := range pages {
		if g.Out == "" {
			continue
		}
		kept++
		// Signed in where it should be: no page but a sign-in's is the sign-in form.
		if u := res.URLs[g.Name]; u == "" || !strings.Contains(g.Name, "signin") && strings.Contains(u, "/sign-in") {
			t.Errorf("%s: shown at %q", g.Name, u)
		}
		if g.Viewport.Width <= 480 {
			if small, ok := res.Small[g.Name]; !ok {
				t.Errorf("%s: targets not measured", g.Name)
			} else if len(small) > 0 {
				t.Errorf("%s: targets under 44 × 44 px: %v", g.Name, small)
			}
		}
		if err := browsertest.CheckGolden(g.Out, filepath.Join("testdata", "golden", g.Name+".png"), *updateGolden, browsertest.DefaultTolerance); err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d golden screenshots: taken in %.1f s, compared in %.1f s", kept, browsed.Seconds(), (time.Since(started) - browsed).Seconds())
	checkNoStaleGoldens(t, pages)
	if *updateGolden {
		if err := writeDocShots(); err != nil {
			t.Fatal(err)
		}
	}
}

// goldenIDs are the records the golden pages show.
type goldenIDs struct{ fresh, month, active, order, ticket, invoice, webhook string }

// goldenPage is one entry of golden.js's list: a page (path, viewport,
// language), what a person does there (steps), what is not drawn (hide,
// frameHide in the ticket frame), and where its screenshot goes (out;
// none: the entry only acts).
type goldenPage struct {
	Name      string              `json:"name"`
	Path      string              `json:"path,omitempty"`
	Lang      string              `json:"lang"`
	Viewport  goldenViewport      `json:"viewport"`
	Full      bool                `json:"full,omitempty"`
	Steps     []map[string]string `json:"steps,omitempty"`
	Hide      []string            `json:"hide,omitempty"`
	FrameHide []string            `json:"frameHide,omitempty"`
	Out       string              `json:"out,omitempty"`
}

type goldenViewport struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

var (
	goldenPhone = goldenViewport{360, 640}  // the traveller's phone: the ticket without scrolling
	goldenTall  = goldenViewport{360, 740}  // a phone, for the dashboard and the console
	goldenWide  = goldenViewport{1280, 900} // a desktop
)

// goldenPages lists the golden screenshots in the order golden.js takes
// them (sign-in failures before the sign-ins), each with its PNG's path
// under out. A name is <page>[-<state>]-<width>[x<height>][-de].
func goldenPages(out string, id goldenIDs) []goldenPage {
	var ps []goldenPage
	// add adds the page in English and German (or in langs).
	add := func(name, path string, vp goldenViewport, g goldenPage, langs ...string) {
		if len(langs) == 0 {
			langs = []string{"en", "de"}
		}
		for _, lang := range langs {
			g := g
			g.Name, g.Path, g.Viewport, g.Lang = fmt.Sprintf("%s-%s", name, goldenSize(vp)), path, vp, lang
			if lang == "de" {
				g.Name += "-de"
			}
			ps = append(ps, g)
		}
	}
	signIn := func(field, user, password string) []map[string]string {
		return []map[string]string{{"fill": "#" + field, "text": user}, {"fill": "#password", "text": password}, {"press": "#signin"}}
	}
	// Signed out: the sign-in forms and a wrong password (the name kept).
	for _, vp := range []goldenViewport{goldenWide, goldenTall} {
		add("dashboard-signin", "/dashboard/sign-in", vp, goldenPage{})
		add("dashboard-signin-failed", "/dashboard/sign-in", vp, goldenPage{Steps: signIn("email", "ops@partner.example", "not the password")})
		add("admin-signin", "/admin/sign-in", vp, goldenPage{})
		add("admin-signin-failed", "/admin/sign-in", vp, goldenPage{Steps: signIn("user", "ops", "not the password")})
	}
	// One session cookie: the dashboard's sign-in now, the console's after the dashboard's pages.
	ps = append(ps, goldenPage{Name: "sign in to the dashboard", Path: "/dashboard/sign-in", Viewport: goldenWide, Lang: "en",
		Steps: signIn("email", "ops@partner.example", dashPassword)})

	// The traveller page: a single ticket's form, sent empty, the ticket
	// (its live clock and barcode not drawn); a monthly coupon late in the
	// month, the whole page with its choice of month.
	noClock := []string{"#clock", "#clock-date", "#barcode"}
	for _, vp := range []goldenViewport{goldenPhone, goldenWide} {
		add("traveller-form", "/c/"+id.fresh, vp, goldenPage{})
		add("traveller-form-errors", "/c/"+id.fresh, vp, goldenPage{Steps: []map[string]string{{"click": "#activate"}, {"waitFor": "#form-problems:not([hidden])"}}})
		add("traveller-ticket", "/c/"+id.active, vp, goldenPage{FrameHide: noClock})
		add("traveller-late-month", "/c/"+id.month, vp, goldenPage{Full: true})
	}

	// The dashboard: home, the lists (test's empty ones too), the detail
	// pages; at 1280 px and on the phone, in both languages.
	for _, vp := range []goldenViewport{goldenWide, goldenTall} {
		add("dashboard-home", "/dashboard/test/usage", vp, goldenPage{})
		add("dashboard-orders", "/dashboard/live/orders", vp, goldenPage{})
		add("dashboard-orders-empty", "/dashboard/test/orders", vp, goldenPage{})
		for _, list := range []string{"coupons", "tickets", "subscriptions", "invoices", "customers", "webhooks", "users"} {
			add("dashboard-"+list, "/dashboard/live/"+list, vp, goldenPage{})
		}
		add("dashboard-keys", "/dashboard/live/keys", vp, goldenPage{Hide: []string{"#list td.mono"}})
		add("dashboard-order", "/dashboard/live/orders/"+id.order, vp, goldenPage{})
		add("dashboard-ticket", "/dashboard/live/tickets/"+id.ticket, vp, goldenPage{})
		add("dashboard-invoice", "/dashboard/live/invoices/"+id.invoice, vp, goldenPage{})
		add("dashboard-invoice-deliveries", "/dashboard/live/invoices/"+id.invoice+"/deliveries", vp, goldenPage{})
		add("dashboard-webhook", "/dashboard/live/webhooks/"+id.webhook, vp, goldenPage{})
	}

	ps = append(ps, goldenPage{Name: "sign in to the console", Path: "/admin/sign-in", Viewport: goldenWide, Lang: "en",
		Steps: signIn("user", "ops", testOperatorPassword)})
	// The operator console: every page, a dead job, no running one; at
	// 1280 px and on the phone, in both languages.
	for _, vp := range []goldenViewport{goldenWide, goldenTall} {
		add("admin-accounts", "/admin/accounts", vp, goldenPage{})
		add("admin-catalog", "/admin/catalog", vp, goldenPage{})
		add("admin-feeds", "/admin/feeds", vp, goldenPage{})
		add("admin-jobs-dead", "/admin/jobs?state=dead", vp, goldenPage{})
		add("admin-jobs-empty", "/admin/jobs?state=running", vp, goldenPage{})
		add("admin-inspection-keys", "/admin/inspection-keys", vp, goldenPage{})
		add("admin-clearing", "/admin/clearing", vp, goldenPage{})
	}
	for i := range ps {
		if !strings.HasPrefix(ps[i].Name, "sign in") {
			ps[i].Out = filepath.Join(out, ps[i].Name+".png")
		}
	}
	return ps
}

// goldenSize names a viewport in a golden's name: its width, and its
// height for the traveller's 360 × 640 phone.
func goldenSize(vp goldenViewport) string {
	if vp == goldenPhone {
		return "360x640"
	}
	return fmt.Sprint(vp.Width)
}

// checkNoStaleGoldens fails for a PNG in testdata/golden that no entry of
// pages makes (a page renamed or dropped); -update removes it.
func checkNoStaleGoldens(t *testing.T, pages []goldenPage) {
	t.Helper()
	made := map[string]bool{}
	for _, g := range pages {
		made[g.Name+".png"] = true
	}
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if made[filepath.Base(f)] {
			continue
		}
		if *updateGolden {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is the golden of no page of goldenPages (-update removes it)", f)
	}
}
