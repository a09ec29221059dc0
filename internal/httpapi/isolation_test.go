package httpapi_test

import (
	"context"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// tenantRecords are one account's records of every kind, by path parameter.
type tenantRecords map[string]string

// makeRecords creates an order (with a restore secret), a subscription, a
// customer, billable items, a collection and an invoice with key.
func makeRecords(t *testing.T, e *apitest.Env, key string) (tenantRecords, string) {
	t.Helper()
	ids := productIDs(t, e)
	o := order(t, e, key, ids["month/adult"], ids["single/adult"], ids["single/adult"], ids["single/adult"])
	monthly, singles := o.split()
	tkt := mustActivate(t, e, "v9", str(monthly[0]["id"]), map[string]any{"identification_medium": medium("Max", "Muster", "1990-01-01"),
		"tariff_settings": map[string]any{"german_postal_code": "10115"}})
	sub := coupon(t, e, "v9", str(monthly[0]["id"]))["subscription"].(map[string]any)
	cust := newCustomer(t, e, key, []string{"Muster GmbH", "Hauptstraße 1", "10115 Berlin"}, nil)
	coll := e.Must(201, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collections.json", Key: key}).Map(t)["id"].(string)
	item1, item2 := str(singles[0]["billable_item_id"]), str(singles[1]["billable_item_id"])
	e.Must(200, apitest.Req{Method: "POST", Path: "/v5/ticketing/billable_collection/" + coll + "/billable_items.json", Key: key,
		Body: map[string]any{"billable_item_ids": []string{item2}}})
	put(t, e, key, item1, map[string]any{"customer_id": cust})
	inv := issue(t, e, key, item1, cust, nil)
	ep := e.Must(201, apitest.Req{Method: "POST", Path: "/v1/webhook_endpoints.json", Key: key,
		Body: map[string]any{"url": "https://93.184.215.14/hooks", "enabled_events": []string{"*"}}}).Map(t)
	return tenantRecords{"endpoint_id": str(ep["id"]), "order_id": o.OrderID, "subscription_id": str(sub["id"]), "customer_id": cust,
		"billable_item_id": item1, "collection_id": coll, "invoice_id": inv.InvoiceID,
		"spare_item": str(singles[2]["billable_item_id"]), "single_coupon": str(singles[0]["id"]), "coupon_id": str(monthly[0]["id"]), "ticket_id": tkt}, o.RestoreSecret
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// TestTenantIsolationEveryEndpoint walks the route table: every partner
// endpoint that takes a record id answers 404 not_found for another
// account's record (with a valid body, even the right restore secret), and
// for the same account's record of the other environment (test key on live
// records); nothing changes, and neither usage report shows the other's
// requests. Capability endpoints (coupon and ticket ids are the
// credential), the public catalog and test clocks (test environment only,
// TestTestClockRefusals) are the documented exceptions. Every inspector
// route (an inspector's token only) refuses partners' keys and anonymous
// callers with 401.
func TestTenantIsolationEveryEndpoint(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		mine, secret := makeRecords(t, e, e.LiveKey)
		otherID, otherKey := e.NewAccount("Fremd AG", account.Live)
		theirs, _ := makeRecords(t, e, otherKey)
		bodies := map[string]any{
			"PUT billable_item/{billable_item_id}.json":                    map[string]any{"customer_id": theirs["customer_id"]},
			"POST billable_collection/{collection_id}/billable_items.json": map[string]any{"billable_item_ids": []string{theirs["billable_item_id"]}},
			"POST orders/{order_id}/restore.json":                          map[string]any{"restore_secret": secret, "coupon_ids": []string{mine["single_coupon"]}},
			"PATCH webhook_endpoints/{endpoint_id}.json":                   map[string]any{"description": "theirs now"},
			"POST webhook_endpoints/{endpoint_id}/redeliver.json":          map[string]any{"event_id": "farebox-event-x"},
		}
		tables := []string{"orders", "coupons", "billable_items", "subscriptions", "subscription_cycles", "tickets",
			"customers", "billable_collections", "billable_item_assignments", "invoices", "invoice_claims", "jobs",
			"webhook_endpoints", "webhook_deliveries", "webhook_attempts"}
		snapshot := func() map[string]int {
			m := map[string]int{}
			for _, tb := range tables {
				m[tb] = count(t, e, tb)
			}
			return m
		}
		usageTotal := func(key string) (string, int64) {
			u := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/usage.json", Key: key}).Map(t)
			var n int64
			for _, d := range u["days"].([]any) {
				m := d.(map[string]any)
				n += int64(m["counted"].(float64) + m["uncounted"].(float64))
			}
			return str(u["account_id"]), n
		}
		_, mineBefore := usageTotal(e.LiveKey)
		before := snapshot()
		checked := 0
		for _, caller := range []struct{ name, key string }{{"another account", otherKey}, {"own test key", e.TestKey}} {
			_, callerBefore := usageTotal(caller.key)
			calls := 0
			for _, rt := range e.Server.Routes() {
				if rt.Auth != "partner" || !strings.Contains(rt.Path, "{") {
					continue
				}
				if strings.Contains(rt.Path, "{area_id}") {
					continue // the catalog is public to every partner
				}
				if strings.Contains(rt.Path, "{test_clock_id}") {
					// Clocks exist only in the test environment, so neither
					// caller here has one to miss: TestTestClockRefusals walks
					// every clock route with another account's test key (404)
					// and with live keys (403).
					continue
				}
				path := pathParam.ReplaceAllStringFunc(rt.Path, func(p string) string {
					name := p[1 : len(p)-1]
					id, ok := mine[name]
					if !ok {
						t.Fatalf("%s %s: no record for %s: extend makeRecords", rt.Method, rt.Path, name)
					}
					return id
				})
				var body any
				for suffix, b := range bodies {
					if method, s, _ := strings.Cut(suffix, " "); method == rt.Method && strings.HasSuffix(rt.Path, s) {
						body = b
					}
				}
				r := e.Do(apitest.Req{Method: rt.Method, Path: path, Key: caller.key, Body: body})
				calls++
				if r.Status != 404 || !strings.HasSuffix(str(r.Map(t)["code"]), "not_found") {
					t.Errorf("%s: %s %s with %s: %d %s", caller.name, rt.Method, rt.Path, "the owner's id", r.Status, r.Body)
				}
				checked++
			}
			// Mixed: the caller's own item with the owner's customer.
			if caller.key == otherKey {
				r := e.Do(apitest.Req{Method: "POST", Key: otherKey,
					Path: "/v5/ticketing/billable_item/" + theirs["billable_item_id"] + "/invoice/" + mine["customer_id"] + ".json"})
				calls++
				if r.Status != 404 {
					t.Errorf("own item, foreign customer: %d %s", r.Status, r.Body)
				}
				r = e.Do(apitest.Req{Method: "PUT", Key: otherKey, Path: "/v5/ticketing/billable_item/" + theirs["spare_item"] + ".json",
					Body: map[string]any{"billablable_collection_id": mine["collection_id"]}})
				calls++
				if r.Status != 404 && r.Status != 422 {
					t.Errorf("own item into a foreign collection: %d %s", r.Status, r.Body)
				}
			}
			// The caller's usage report holds exactly its own requests.
			id, after := usageTotal(caller.key)
			if want := otherID; caller.key == otherKey && id != want {
				t.Errorf("usage of %s reports account %s", caller.name, id)
			}
			if caller.key == otherKey && after-callerBefore != int64(calls)+1 {
				t.Errorf("usage of %s grew by %d for %d requests", caller.name, after-callerBefore, calls+1)
			}
		}
		if checked < 2*20 {
			t.Errorf("only %d endpoint checks ran", checked)
		}
		if after := snapshot(); !equalCounts(before, after) {
			t.Errorf("requests with foreign ids changed rows: %v → %v", before, after)
		}
		// The owner's usage grew only by its own requests (the two reports
		// and the test key's calls, which belong to the same account).
		if _, mineAfter := usageTotal(e.LiveKey); mineAfter < mineBefore+1 {
			t.Errorf("owner usage %d → %d", mineBefore, mineAfter)
		}
		// The owner's records are untouched: the subscription is active, the
		// invoice stands, the item keeps its customer.
		s := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions/" + mine["subscription_id"] + ".json", Key: e.LiveKey}).Map(t)
		if s["active"] != true {
			t.Errorf("owner's subscription after the attempts: %v", s)
		}
		inv := e.Must(200, apitest.Req{Method: "GET", Path: "/v5/ticketing/invoices/" + mine["invoice_id"] + ".json", Key: e.LiveKey}).Map(t)
		if inv["cancelled_by_invoice_id"] != nil {
			t.Errorf("owner's invoice cancelled: %v", inv["cancelled_by_invoice_id"])
		}
		if it := item(t, e, e.LiveKey, mine["billable_item_id"]); it["customer_id"] != mine["customer_id"] {
			t.Errorf("owner's item changed: %v", it)
		}
		// Inspectors' routes (records, the rotating-barcode secret) take an
		// inspector's token only: a partner's key of either environment,
		// another account's and none are 401, whatever the route holds.
		inspectorRoutes := 0
		for _, rt := range e.Server.Routes() {
			if rt.Auth != "inspector" {
				continue
			}
			inspectorRoutes++
			var body any
			if rt.Method == "POST" {
				body = batch(check("iso-1", "valid"))
			}
			for _, caller := range []struct{ name, key string }{{"live key", e.LiveKey}, {"test key", e.TestKey}, {"another account", otherKey}, {"anonymous", ""}} {
				r := e.Do(apitest.Req{Method: rt.Method, Path: rt.Path, Key: caller.key, Body: body})
				if r.Status != 401 {
					t.Errorf("%s %s as %s: %d %s", rt.Method, rt.Path, caller.name, r.Status, r.Body)
				}
			}
		}
		if inspectorRoutes < 2 {
			t.Errorf("only %d inspector routes walked", inspectorRoutes)
		}
	})
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// TestEveryCapabilityRouteIsAttributed drives every keyless route of the
// route table that bills a record (a coupon, a ticket, an invoice document)
// against a real record of another account's test environment, and checks
// the usage ledger: the request's one row is that account's, in that
// environment, whatever the handler answered (a 4xx, an unconfigured
// wallet's 503). The same request naming an unknown record is billed to
// nobody. A route added to the table is driven here without a line of this
// test changing; the pipeline, not the handler, attributes it.
func TestEveryCapabilityRouteIsAttributed(t *testing.T) {
	t.Parallel()
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
				r := e.Do(apitest.Req{Method: rt.Method, Path: p, Body: body, NoValidate: rt.Page})
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

// BenchmarkCapabilityOwner is what the pipeline adds to the first keyless
// request naming a coupon (later ones hit the server's owner cache): one
// indexed point read, on each engine.
func BenchmarkCapabilityOwner(b *testing.B) {
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		e := apitest.New(b, engine, apitest.Options{})
		o := order(b, e, e.LiveKey, productIDs(b, e)["single/adult"])
		id, ctx := str(o.Coupons[0]["id"]), context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, found, err := e.App.CapabilityOwner(ctx, app.CapabilityCoupon, id, ""); err != nil || !found {
				b.Fatal(found, err)
			}
		}
	})
}
