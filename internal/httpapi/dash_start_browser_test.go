package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/engines/browsertest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

// TestDashboardGettingStartedInChromium drives a new account's getting-
// started path in headless Chromium (internal/engines/testdata/browser/
// dash_start.js): the home with nothing done, a test key made from the
// path, the command shown, at 360 and 1280 px in English and German; then
// the command, copied as the browser shows it, is run in sh with the key
// the page showed, and a second visit finds the order done and listed by
// its product's name. axe-core finds no WCAG 2.1 AA violation, no page is
// wider than its window, the path's targets are 44 px at least.
func TestDashboardGettingStartedInChromium(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Browser)
	e := apitest.New(t, store.SQLite, apitest.Options{})
	accountID, _ := e.NewAccount("Neu Partner GmbH", account.Live)
	const email = "start@partner.example"
	token, err := e.WebUsers.InviteDashboardUser(context.Background(), idempotency.Claim{}, accountID, email)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"base": e.URL, "invite": e.URL + "/dashboard/invite?token=" + token, "email": email, "password": dashPassword}
	var res dashResults
	cfg["phase"] = "new"
	out := browsertest.Run(t, "dash_start.js", cfg, &res)
	t.Logf("screenshots in %s", out)
	if len(res.Errors) != 0 {
		t.Fatalf("browser errors: %v", res.Errors)
	}
	checkBrowserPages(t, res.Pages, []string{"dash-start-new", "dash-start-key-created", "dash-start-key", "dash-start-1280",
		"dash-start-1280-de", "dash-start-de", "dash-keys-de"}, endsDe)
	tx := res.Texts
	checkStartTargets(t, tx["smallTargets"])
	for k, want := range map[string][]string{
		"startNew": {"Getting started", "1. Make a test key", "2. Place a test order", "3. Receive a test webhook", "Add a webhook endpoint"},
		"startKey": {"✓ done", "export FAREBOX_TEST_KEY"},
		"startDe":  {"Erste Schritte", "✓ erledigt", "Webhook-Endpunkt hinzufügen"},
		"keysDe":   {"gerade eben"},
	} {
		for _, w := range want {
			if !strings.Contains(str(tx[k]), w) {
				t.Errorf("%s lacks %q: %v", k, w, tx[k])
			}
		}
	}
	if strings.Contains(str(tx["startNew"]), "✓") {
		t.Errorf("a new account has a step done: %v", tx["startNew"])
	}
	var kt struct{ Text, Title, Datetime string }
	remarshal(t, tx["keyTime"], &kt)
	if kt.Text != "just now" || !strings.Contains(kt.Title, "20") || !strings.HasSuffix(kt.Datetime, "Z") {
		t.Errorf("the key's time: %+v", kt)
	}
	secret := testKeyRe.FindString(str(tx["secret"]))
	if secret == "" || !strings.HasSuffix(str(tx["keyURL"]), "/dashboard/test/keys") {
		t.Fatalf("key made from the path: %v at %v", tx["secret"], tx["keyURL"])
	}
	// The command as the browser shows it, pasted into a shell.
	curl := str(tx["curl"])
	var o struct {
		OrderID string `json:"order_id"`
	}
	if b := runCurl(t, curl, secret); json.Unmarshal(b, &o) != nil || o.OrderID == "" {
		t.Fatalf("the copied command %q answered %s", curl, b)
	}

	res = dashResults{}
	cfg["phase"] = "ordered"
	browsertest.Run(t, "dash_start.js", cfg, &res)
	if len(res.Errors) != 0 {
		t.Fatalf("browser errors: %v", res.Errors)
	}
	checkBrowserPages(t, res.Pages, []string{"dash-start-ordered", "dash-start-orders", "dash-start-ordered-1280"}, endsDe)
	tx = res.Texts
	checkStartTargets(t, tx["smallTargets"])
	if n := strings.Count(str(tx["startOrdered"]), "✓ done"); n != 2 || !strings.Contains(str(tx["startOrdered"]), "Your test order is there.") {
		t.Errorf("after the order %d steps done: %v", n, tx["startOrdered"])
	}
	first, _, err := e.Products.FirstProduct(context.Background(), account.Principal{AccountID: accountID, Environment: account.Test})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(str(tx["orders"]), o.OrderID) || !strings.Contains(str(tx["orders"]), first.LocalTicketName) {
		t.Errorf("orders list lacks %s or %q: %v", o.OrderID, first.LocalTicketName, tx["orders"])
	}
}

// checkStartTargets fails for any of the path's links and buttons under
// 44 x 44 px (a list the browser measured).
func checkStartTargets(t *testing.T, small any) {
	t.Helper()
	if l, _ := small.([]any); len(l) != 0 {
		t.Errorf("targets under 44 px: %v", l)
	}
}
