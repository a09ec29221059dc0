package httpapi_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/engines/browsertest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

// TestDashboardDetailsInChromium drives the detail pages in headless
// Chromium (internal/engines/testdata/browser/dash_detail.js): from the
// orders list to the order, its ticket and its invoice at 360 and 1280 px
// in English and German, axe-core finding no WCAG 2.1 AA violation, no
// page wider than its window, targets of 44 px; the order id's copy button
// reached by Tab and pressed with Enter puts the id on the clipboard and
// says "Copied" in the status region. Then the golden screenshots
// (goldenPages: the traveller page's states, every dashboard page), on
// the fixed test clock with ids masked, compared with
// testdata/golden/*.png within browsertest.DefaultTolerance (-update
// rewrites them; a mismatch leaves <shot>.diff.png). SQLite only:
// TestDashboardDetails runs the pages over HTTP on both engines.
func TestDashboardDetailsInChromium(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Browser)
	e := apitest.New(t, store.SQLite, apitest.Options{})
	d := detailSetup(t, e)
	dashSignedIn(t, e, "ops@partner.example")
	fresh := order(t, e, e.LiveKey, productIDs(t, e)["single/adult"])
	hook := e.Must(201, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Key: e.LiveKey,
		Body: map[string]any{"url": "https://93.184.215.14/hooks", "enabled_events": []string{"*"}}}).Map(t)
	golden := goldenPages(t.TempDir(), "/c/"+str(fresh.Coupons[0]["id"]), "/c/"+d.coupon, map[string]string{
		"order": d.order, "ticket": d.ticket, "invoice": d.invoice, "webhook": str(hook["id"])})
	var res dashResults
	shots := browsertest.Run(t, "dash_detail.js", map[string]any{"base": e.URL, "email": "ops@partner.example", "password": dashPassword,
		"orderPath": "/dashboard/live/orders/" + d.order, "ticketPath": "/dashboard/live/tickets/" + d.ticket,
		"invoicePath": "/dashboard/live/invoices/" + d.invoice, "golden": golden}, &res)
	t.Logf("screenshots in %s", shots)
	if len(res.Errors) != 0 {
		t.Fatalf("browser errors: %v", res.Errors)
	}
	checkBrowserPages(t, res.Pages, []string{"dash-order", "dash-ticket", "dash-invoice", "dash-order-1280", "dash-ticket-1280",
		"dash-invoice-1280", "dash-order-1280-de", "dash-ticket-1280-de", "dash-invoice-1280-de", "dash-order-de"}, endsDe)
	tx := res.Texts
	for _, k := range []string{"smallOrder", "smallTicket", "smallInvoice"} {
		checkStartTargets(t, tx[k])
	}
	for k, want := range map[string][]string{
		"order":   {"Order: " + d.product, "detail-1", "Traveller's page", "Timeline", "order.created", "ticket.issued"},
		"ticket":  {"Ticket: " + d.product, "Open the order", "ticket.issued"},
		"invoice": {"Invoice " + d.invoiceNumber, "Bahn Partner GmbH", "Open the order", "invoice.created"},
		"orderDe": {"Bestellung: " + d.product},
	} {
		for _, w := range want {
			if !strings.Contains(str(tx[k]), w) {
				t.Errorf("%s lacks %q: %v", k, w, tx[k])
			}
		}
	}
	if str(tx["copyFocused"]) != "copy" || str(tx["copyName"]) != "Copy Order id|"+d.order {
		t.Errorf("the copy button by keyboard: focused %v, %v", tx["copyFocused"], tx["copyName"])
	}
	if str(tx["copyStatus"]) != "Copied|status" || str(tx["clipboard"]) != d.order {
		t.Errorf("copied: status %v, clipboard %v", tx["copyStatus"], tx["clipboard"])
	}
	for _, g := range golden {
		name := g["name"].(string)
		if err := browsertest.CheckGolden(g["out"].(string), filepath.Join("testdata", "golden", name+".png"), *updateGolden, browsertest.DefaultTolerance); err != nil {
			t.Error(err)
		}
	}
}

// goldenPages are the pages and states TestDashboardDetailsInChromium keeps
// as golden screenshots (docs/web.md "Golden screenshots"), each with its
// PNG's path under out: the traveller page at 360 × 640 (the form, the
// form sent empty with its field errors, an activated coupon's ticket
// with the frame's live clock and barcode not drawn), the dashboard at 1280
// × 900 (home, every list, the detail pages, keys with their random
// prefixes not drawn, the sign-in form) and its home at 360 × 740.
func goldenPages(out, freshCoupon, activeCoupon string, id map[string]string) []map[string]any {
	phone := map[string]any{"width": 360, "height": 640}
	wide := map[string]any{"width": 1280, "height": 900}
	golden := []map[string]any{
		{"name": "traveller-form-360x640", "path": freshCoupon, "viewport": phone},
		{"name": "traveller-form-errors-360x640", "path": freshCoupon, "viewport": phone, "click": "#activate", "waitFor": "#form-problems:not([hidden])"},
		{"name": "traveller-ticket-360x640", "path": activeCoupon, "viewport": phone, "frameHide": []string{"#clock", "#clock-date", "#barcode"}},
		{"name": "dashboard-home-1280", "path": "/dashboard/test/usage", "viewport": wide},
		{"name": "dashboard-home-360", "path": "/dashboard/test/usage", "viewport": map[string]any{"width": 360, "height": 740}},
		{"name": "dashboard-order-1280", "path": "/dashboard/live/orders/" + id["order"], "viewport": wide},
		{"name": "dashboard-ticket-1280", "path": "/dashboard/live/tickets/" + id["ticket"], "viewport": wide},
		{"name": "dashboard-invoice-1280", "path": "/dashboard/live/invoices/" + id["invoice"], "viewport": wide},
		{"name": "dashboard-webhook-1280", "path": "/dashboard/live/webhooks/" + id["webhook"], "viewport": wide},
		{"name": "dashboard-keys-1280", "path": "/dashboard/live/keys", "viewport": wide, "hide": []string{"#list td.mono"}},
		{"name": "dashboard-signin-1280", "path": "/dashboard/sign-in", "viewport": wide},
	}
	for _, list := range []string{"orders", "coupons", "tickets", "subscriptions", "invoices", "customers", "webhooks", "users"} {
		golden = append(golden, map[string]any{"name": "dashboard-" + list + "-1280", "path": "/dashboard/live/" + list, "viewport": wide})
	}
	for _, g := range golden {
		g["out"] = filepath.Join(out, g["name"].(string)+".png")
	}
	return golden
}
