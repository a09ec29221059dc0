package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/products"
)

// The dashboard home's getting-started path (issue 34, docs/web.md
// "Getting started"): while the test environment lacks a working key, an
// order or a delivered webhook, the test usage page leads through the
// three, each step read from the use cases the pages already call: the
// keys (and the form that makes one), a pasteable curl that orders the
// first product the account can buy from this very server, the orders
// list where it appears, and the webhook endpoint whose delivery log shows
// the order's event (or the form that makes one).

// startView is the path's data; the bools say which steps are done.
type startView struct {
	Key, Order, Hook bool
	// Curl orders Product (its name) with the key in $FAREBOX_TEST_KEY;
	// "" when nothing is on sale to the account.
	Curl, Product string
	// HookID and HookURL are the first endpoint's ("" for none).
	HookID, HookURL string
}

// ordersPath is the newest order API the curl uses.
var ordersPath = ticketingVersions[len(ticketingVersions)-1] + "/ticketing/orders.json"

// publicBase is the server's URL as a partner reaches it: --public-url,
// else the address this request came to.
func (s *Server) publicBase(r *http.Request) string {
	if s.PublicURL != "" {
		return s.PublicURL
	}
	scheme := "http"
	if s.secure(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// startPath is the path of the test environment's usage page, nil
// elsewhere and once every step is done.
func (s *Server) startPath(r *http.Request) (*startView, error) {
	p := dashPrincipal(r)
	if p.Environment != "test" {
		return nil, nil
	}
	ctx := r.Context()
	v := &startView{}
	keys, err := s.Accounts.DashboardKeys(ctx, p.AccountID, p.Environment)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		v.Key = v.Key || k.RevokedAt == nil
	}
	orders, err := s.app.Orders(ctx, p, app.OrdersRequest{ListRequest: app.ListRequest{Limit: "1"}})
	if err != nil {
		return nil, err
	}
	v.Order = len(orders.Data) > 0
	hooks, err := s.Webhooks.Endpoints(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(hooks.Data) > 0 {
		e := hooks.Data[0]
		v.HookID, v.HookURL = e.ID, e.URL
		log, err := s.Webhooks.Attempts(ctx, p, e.ID, app.ListRequest{Limit: "1"})
		if err != nil {
			return nil, err
		}
		v.Hook = len(log.Data) > 0
	}
	if v.Key && v.Order && v.Hook {
		return nil, nil
	}
	first, ok, err := s.Products.FirstProduct(ctx, p)
	if err != nil {
		return nil, err
	}
	if ok {
		pj := products.ProductView(first)
		v.Product = pj.LocalTicketName
		body := fmt.Sprintf(`{"product_ids": [%q], "optional_order_reference": "first-test-order"}`, pj.ID)
		v.Curl = "curl -sS -H \"Authorization: Bearer $FAREBOX_TEST_KEY\" \\\n  -H 'Content-Type: application/json' \\\n  -d " +
			shellQuote(body) + " \\\n  " + shellQuote(s.publicBase(r)+ordersPath)
	}
	return v, nil
}

// shellQuote is v as one word of a POSIX shell: in single quotes, each
// single quote written as '\”.
func shellQuote(v string) string {
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
