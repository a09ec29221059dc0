package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestRouteRowsDeclareFittingBilling: New refuses a row whose billing does
// not fit its auth mode or names a record its path lacks, so a route cannot
// be added unbilled (or billed to a key it does not take).
func TestRouteRowsDeclareFittingBilling(t *testing.T) {
	t.Parallel()
	h := func(http.ResponseWriter, *http.Request) error { return nil }
	for _, c := range []struct {
		rt   route
		want string // "" when the row is fine
	}{
		{route{"GET", "/v9/ticketing/coupons/{coupon_id}.json", authCapability, billCoupon, h}, ""},
		{route{"GET", "/v9/ticketing/products/{product_id}.json", authCapability, billNobody, h}, ""},
		{route{"GET", "/v1/account.json", authPartner, billKey, h}, ""},
		{route{"GET", "/v1/departures.json", authTransit, billKey, h}, ""},
		{route{"GET", "/v9/ticketing/invoices/{invoice_id}/{identifier}.pdf", authNone, billInvoice, h}, ""},
		{route{"GET", "/v1/account.json", authPartner, billNobody, h}, "bills"},
		{route{"GET", "/v1/departures.json", authTransit, billTicket, h}, "bills"},
		{route{"GET", "/v9/ticketing/coupons/{coupon_id}.json", authCapability, billKey, h}, "bills"},
		{route{"GET", "/v9/ticketing/coupons/{coupon_id}.json", authCapability, billTicket, h}, "{ticket_id}"},
		{route{"GET", "/v9/ticketing/invoices/{invoice_id}.json", authNone, billInvoice, h}, "{identifier}"},
	} {
		err := c.rt.check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: refused: %v", c.rt.method, c.rt.path, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s (auth %d, bill %d): %v, want an error naming %s", c.rt.method, c.rt.path, c.rt.auth, c.rt.bill, err, c.want)
		}
	}
	for _, rt := range (&Server{}).routes() {
		if err := rt.check(); err != nil {
			t.Error(err)
		}
	}
}
