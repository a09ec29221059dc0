package httpapi_test

import (
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
// says "Copied" in the status region (the golden screenshots are
// TestGoldenPagesInChromium's). SQLite only:
// TestDashboardDetails runs the pages over HTTP on both engines.
func TestDashboardDetailsInChromium(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Browser)
	e := apitest.New(t, store.SQLite, apitest.Options{})
	d := detailSetup(t, e)
	dashSignedIn(t, e, "ops@partner.example")
	var res dashResults
	shots := browsertest.Run(t, "dash_detail.js", map[string]any{"base": e.URL, "email": "ops@partner.example", "password": dashPassword,
		"orderPath": "/dashboard/live/orders/" + d.order, "ticketPath": "/dashboard/live/tickets/" + d.ticket,
		"invoicePath": "/dashboard/live/invoices/" + d.invoice}, &res)
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
}
