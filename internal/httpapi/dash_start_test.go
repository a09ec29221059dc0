package httpapi_test

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/idempotency"
)

var startCurlRe = regexp.MustCompile(`(?s)<pre class="code copy-value" id="start-curl"[^>]*>(.*?)</pre>`)

// startCurl is the getting-started command of a usage page, as a person
// copies it (the page's text, entities decoded).
func startCurl(t *testing.T, body string) string {
	t.Helper()
	m := startCurlRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no curl on the page:\n%.4000s", body)
	}
	return html.UnescapeString(m[1])
}

// runCurl runs a pasted command in sh with the test key in
// FAREBOX_TEST_KEY and returns what it printed.
func runCurl(t *testing.T, command, key string) []byte {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Env = append(os.Environ(), "FAREBOX_TEST_KEY="+key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", command, err, out)
	}
	return out
}

// TestDashboardGettingStarted: a new account's test usage page leads
// through a test key, a first order by a pasteable curl against this
// server (run here as pasted, in sh) and a webhook; each step is marked
// done as it is, the path is gone once all are; the live page never shows
// it; both languages.
func TestDashboardGettingStarted(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed: the test runs the page's command as a partner would")
	}
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		accountID, _ := e.NewAccount("Neu Partner GmbH", account.Live)
		v, _ := dashAccepted(t, e, accountID, "start@partner.example", dashPassword)

		p := v.must(200, "GET", "/dashboard/test/usage", nil)
		for _, want := range []string{`id="start"`, "Getting started", "Make a test key", `action="/dashboard/test/keys"`,
			`href="/dashboard/test/webhooks"`, "Add a webhook endpoint"} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("new account's home lacks %q:\n%.4000s", want, p.Body)
			}
		}
		if strings.Contains(p.Body, `class="done-mark"`) {
			t.Errorf("a new account has a step done:\n%.4000s", p.Body)
		}
		first, ok, err := e.Products.FirstProduct(ctx, account.Principal{AccountID: accountID, Environment: account.Test})
		if err != nil || !ok {
			t.Fatalf("FirstProduct: %v %v", ok, err)
		}
		curl := startCurl(t, p.Body)
		if !strings.Contains(curl, e.URL+"/v9/ticketing/orders.json") || !strings.Contains(curl, first.ID) || !strings.Contains(curl, "$FAREBOX_TEST_KEY") {
			t.Errorf("curl: %s", curl)
		}
		if de := v.must(200, "GET", "/dashboard/test/usage?lang=de", nil); !strings.Contains(de.Body, "Erste Schritte") || !strings.Contains(de.Body, "Testschlüssel erstellen") {
			t.Errorf("German home:\n%.4000s", de.Body)
		}
		if live := v.must(200, "GET", "/dashboard/live/usage", nil); strings.Contains(live.Body, `id="start"`) {
			t.Error("the live environment shows the test path")
		}

		// Step 1: a key (as the page's button makes it); step 2: the
		// command, pasted.
		k, err := e.Accounts.CreateKey(ctx, idempotency.Claim{}, accountID, account.Test)
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			OrderID string `json:"order_id"`
			Ref     string `json:"optional_order_reference"`
		}
		if out := runCurl(t, curl, k.Secret); json.Unmarshal(out, &o) != nil || o.OrderID == "" || o.Ref != "first-test-order" {
			t.Fatalf("the pasted curl answered %s", out)
		}
		p = v.must(200, "GET", "/dashboard/test/usage", nil)
		if n := strings.Count(p.Body, `class="done-mark"`); n != 2 || !strings.Contains(p.Body, "Your test order is there.") {
			t.Errorf("after a key and an order: %d steps done:\n%.4000s", n, p.Body)
		}
		if orders := v.must(200, "GET", "/dashboard/test/orders", nil); !strings.Contains(orders.Body, o.OrderID) || !strings.Contains(orders.Body, html.EscapeString(first.LocalTicketName)) {
			t.Errorf("the order or its product's name is not listed (%s, %s):\n%.4000s", o.OrderID, first.LocalTicketName, orders.Body)
		}

		// Step 3: an endpoint; its log once the next order's event came.
		rc := newReceiver(t, nil)
		hook := str(createEndpoint(t, e, k.Secret, rc.URL+"/start", "order.created")["id"])
		p = v.must(200, "GET", "/dashboard/test/usage", nil)
		if !strings.Contains(p.Body, `href="/dashboard/test/webhooks/`+hook+`"`) || !strings.Contains(p.Body, rc.URL+"/start") {
			t.Errorf("with an endpoint, no link to its log:\n%.4000s", p.Body)
		}
		runCurl(t, curl, k.Secret)
		drain(t, e)
		if len(rc.all()) != 1 {
			t.Fatalf("the receiver got %d events", len(rc.all()))
		}
		if p = v.must(200, "GET", "/dashboard/test/usage", nil); strings.Contains(p.Body, `id="start"`) {
			t.Errorf("every step done, the path is still shown:\n%.3000s", p.Body)
		}
	})
}
