package httpapi_test

import (
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
)

// TestEveryCapabilityRouteIsAttributed drives every keyless route of the
// route table that bills a record (a coupon, a ticket, an invoice document)
// against a real record of another account's test environment, and checks
// the usage ledger: the request's one row is that account's, in that
// environment, whatever the handler answered (a 4xx, an unconfigured
// wallet's 503). The same request naming an unknown record is billed to
// nobody. A route added to the table is driven here without a line of this
// test changing; the pipeline, not the handler, attributes it.
func TestEveryCapabilityRouteIsAttributed(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		ownerID, key := e.NewAccount("Besitzer GmbH", account.Test)
		ids := productIDs(t, e)
		o := order(t, e, key, ids["single/adult"], ids["single/adult"], ids["month/adult"])
		coupon, item := str(o.Coupons[0]["id"]), str(o.Coupons[0]["billable_item_id"])
		tkt := mustActivate(t, e, "v9", str(o.Coupons[1]["id"]), map[string]any{"identification_medium": medium("Erika", "Muster", "1990-01-01")})
		inv := issue(t, e, key, item, "", nil)
		u, err := url.Parse(inv.PDFURL)
		if err != nil {
			t.Fatal(err)
		}
		identifier := strings.TrimSuffix(path.Base(u.Path), ".pdf")
		real := map[string]string{"coupon_id": coupon, "ticket_id": tkt, "invoice_id": inv.InvoiceID, "identifier": identifier}
		unknown := map[string]string{"coupon_id": "farebox-coupon-none", "ticket_id": "farebox-ticket-none",
			"invoice_id": inv.InvoiceID, "identifier": strings.Repeat("0", 32)} // a wrong identifier names no document
		bodies := map[string]any{
			"activate.json":        map[string]any{"identification_medium": medium("Max", "Muster", "1990-01-01")},
			"tariff_settings.json": map[string]any{"german_postal_code": "10115"},
		}
		driven := 0
		for _, rt := range e.Server.Routes() {
			if rt.Bills == "key" || rt.Bills == "nobody" {
				continue
			}
			if rt.Auth != "capability" && rt.Auth != "none" {
				t.Errorf("%s %s bills a %s but authenticates as %s", rt.Method, rt.Path, rt.Bills, rt.Auth)
			}
			var body any
			for suffix, b := range bodies {
				if rt.Method == "POST" && strings.HasSuffix(rt.Path, suffix) {
					body = b
				}
			}
			for _, c := range []struct {
				name   string
				values map[string]string
				want   string
			}{{"the owner's record", real, ownerID}, {"an unknown record", unknown, ""}} {
				p := pathParam.ReplaceAllStringFunc(rt.Path, func(p string) string {
					v, ok := c.values[p[1:len(p)-1]]
					if !ok {
						t.Fatalf("%s %s: no record for %s: extend this test", rt.Method, rt.Path, p)
					}
					return v
				})
				r := e.Do(apitest.Req{Method: rt.Method, Path: p, Body: body})
				rows := e.UsageRows(r.Header.Get("X-Request-Id"))
				switch {
				case c.want == "" && len(rows) != 0:
					t.Errorf("%s %s with %s (%d): billed %+v", rt.Method, rt.Path, c.name, r.Status, rows)
				case c.want != "" && (len(rows) != 1 || rows[0].AccountID != c.want || rows[0].Environment != account.Test ||
					rows[0].Endpoint != rt.Method+" "+rt.Path):
					t.Errorf("%s %s with %s (%d %.200s): ledger rows %+v, want one of account %s (test)",
						rt.Method, rt.Path, c.name, r.Status, r.Body, rows, c.want)
				}
			}
			driven++
		}
		// 4 versions × (3 coupon + 5 ticket routes) + 3 downloads.
		if driven < 4*8+3 {
			t.Errorf("only %d billed capability routes driven", driven)
		}
	})
}
