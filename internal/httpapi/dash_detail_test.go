package httpapi_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
)

// detailData is an order of one single ticket in live, activated, its
// billable item invoiced to a customer.
type detailData struct {
	order, coupon, ticket, invoice, invoiceNumber, product string
}

func detailSetup(t *testing.T, e *apitest.Env) detailData {
	t.Helper()
	var d detailData
	ids := productIDs(t, e)
	var o struct {
		OrderID string `json:"order_id"`
		Coupons []struct {
			ID             string  `json:"id"`
			BillableItemID *string `json:"billable_item_id"`
			Product        struct {
				LocalTicketName string `json:"local_ticket_name"`
			} `json:"product"`
		} `json:"coupons"`
	}
	e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey,
		Body: map[string]any{"product_ids": []string{ids["single/adult"]}, "optional_order_reference": "detail-1"}}).JSON(t, &o)
	d.order, d.coupon, d.product = o.OrderID, o.Coupons[0].ID, o.Coupons[0].Product.LocalTicketName
	d.ticket = mustActivate(t, e, "v9", d.coupon, map[string]any{"identification_medium": medium("Max", "Mustermann", "1990-01-01")})
	cust := newCustomer(t, e, e.LiveKey, []string{"Bahn Partner GmbH", "Hauptstraße 1", "01067 Dresden"}, nil)
	put(t, e, e.LiveKey, *o.Coupons[0].BillableItemID, map[string]any{"customer_id": cust})
	inv := issue(t, e, e.LiveKey, *o.Coupons[0].BillableItemID, "", map[string]any{})
	d.invoice, d.invoiceNumber = inv.InvoiceID, inv.InvoiceNumber
	if d.product == "" || d.invoice == "" {
		t.Fatalf("setup: %+v", d)
	}
	return d
}

// TestDashboardDetails: the detail pages of an order, a ticket and an
// invoice (issue 34) on both engines: reached from the lists, names and
// amounts instead of ids, the related records linked both ways, the
// timeline of events, ids with a copy button; another environment's,
// another account's and unknown ids are 404; without a session the
// sign-in form.
func TestDashboardDetails(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		d := detailSetup(t, e)
		v := dashSignedIn(t, e, "ops@partner.example")
		orderPath, ticketPath, invoicePath := "/dashboard/live/orders/"+d.order, "/dashboard/live/tickets/"+d.ticket, "/dashboard/live/invoices/"+d.invoice

		// The lists link to the pages.
		for list, href := range map[string]string{"/dashboard/live/orders": orderPath, "/dashboard/live/tickets": ticketPath, "/dashboard/live/invoices": invoicePath} {
			if p := v.must(200, "GET", list, nil); !strings.Contains(p.Body, `href="`+href+`"`) {
				t.Errorf("%s does not link to %s:\n%.3000s", list, href, p.Body)
			}
		}

		// The order: product by name in the title, reference, the billed
		// amount, the coupon's traveller page (its full link to copy), the
		// ticket and the invoice linked, the timeline.
		p := v.must(200, "GET", orderPath, nil)
		for _, want := range []string{"<h1>Order: " + d.product + "</h1>", "detail-1", `href="/c/` + d.coupon + `"`,
			`data-copy="` + e.URL + `/c/` + d.coupon + `"`, `href="` + ticketPath + `"`, `href="` + invoicePath + `"`,
			`data-copy="` + d.order + `"`, "order.created", "coupon.activated", "ticket.issued", `id="copy-status"`, `src="/assets/dashboard.js"`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("order page lacks %s:\n%.6000s", want, p.Body)
			}
		}
		if !regexp.MustCompile(`<dt>Total</dt><dd>[0-9]+\.[0-9]{2} EUR</dd>`).MatchString(p.Body) {
			t.Errorf("order page: no total:\n%.4000s", p.Body)
		}
		if strings.Index(p.Body, "order.created") > strings.Index(p.Body, "ticket.issued") {
			t.Error("timeline not oldest first")
		}
		// The copy button is hidden without the script, the value is text.
		if !regexp.MustCompile(`<span class="mono copy-value">` + d.order + `</span> <button type="button" class="copy" data-copy="` + d.order + `" hidden>Copy<span class="sr-only"> Order id</span></button>`).MatchString(p.Body) {
			t.Errorf("order page: copy markup:\n%.3000s", p.Body)
		}
		// German.
		if p := v.must(200, "GET", orderPath+"?lang=de", nil); !strings.Contains(p.Body, "<h1>Bestellung: "+d.product) || !strings.Contains(p.Body, "Kopieren") ||
			!regexp.MustCompile(`<dt>Summe</dt><dd>[0-9]+,[0-9]{2} EUR</dd>`).MatchString(p.Body) {
			t.Errorf("German order page:\n%.4000s", p.Body)
		}

		// The ticket: product, state, its order and traveller page.
		p = v.must(200, "GET", ticketPath, nil)
		for _, want := range []string{"<h1>Ticket: " + d.product + "</h1>", "valid", `href="` + orderPath + `"`, `href="/c/` + d.coupon + `"`,
			"ticket.issued", "coupon.activated", `data-copy="` + d.ticket + `"`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("ticket page lacks %s:\n%.5000s", want, p.Body)
			}
		}

		// The invoice: number, kind, customer by name, amounts, the line
		// linked back to its order, files, deliveries, timeline.
		p = v.must(200, "GET", invoicePath, nil)
		for _, want := range []string{"<h1>Invoice " + d.invoiceNumber + "</h1>", "Bahn Partner GmbH", "<dd>Invoice</dd>", `href="` + orderPath + `"`,
			`href="` + invoicePath + `/deliveries"`, "invoice.created", ">PDF</a>", `data-copy="` + d.invoiceNumber + `"`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("invoice page lacks %s:\n%.6000s", want, p.Body)
			}
		}

		// Isolation: the other environment, another account, unknown ids.
		_, otherKey := e.NewAccount("Other Partner", account.Live)
		foreign := order(t, e, otherKey, productIDs(t, e)["single/adult"])
		foreignTicket := mustActivate(t, e, "v9", str(foreign.Coupons[0]["id"]), map[string]any{"identification_medium": medium("Eva", "Other", "1980-01-01")})
		for _, path := range []string{"/dashboard/test/orders/" + d.order, "/dashboard/test/tickets/" + d.ticket, "/dashboard/test/invoices/" + d.invoice,
			"/dashboard/live/orders/" + foreign.OrderID, "/dashboard/live/tickets/" + foreignTicket,
			"/dashboard/live/orders/farebox-order-nope", "/dashboard/live/tickets/nope", "/dashboard/live/invoices/nope", "/dashboard/prod/orders/" + d.order} {
			if p := v.must(http.StatusNotFound, "GET", path, nil); strings.Contains(p.Body, d.product+"</h1>") || strings.Contains(p.Body, "Eva") {
				t.Errorf("%s shows the record", path)
			}
		}
		// Without a session: the sign-in form.
		anon := newVisitor(t, e, "en")
		for _, path := range []string{orderPath, ticketPath, invoicePath} {
			if r := anon.must(http.StatusSeeOther, "GET", path, nil); r.Header.Get("Location") != "/dashboard/sign-in" {
				t.Errorf("%s without a session: %v", path, r.Header)
			}
		}
		// The script is served as a script (the policy allows this origin's).
		if r := anon.must(200, "GET", "/assets/dashboard.js", nil); !strings.Contains(r.Body, "navigator.clipboard") ||
			r.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
			t.Errorf("dashboard.js: %v", r.Header)
		}
	})
}
