package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
)

// TestEveryIdempotentChangeMarksItsClaim runs every partner and keyless
// POST of the API once with an Idempotency-Key and checks that the
// request's change marked the key's claim committed: the claim is a
// parameter of the write that commits the change (store.WriteClaimed,
// InsertOrderAlone), so a use case that commits with a plain Write would
// leave it unmarked here, and a retry after a crash between its commit and
// the stored answer would run the change again. A POST route of the table
// without a case fails the test, so a new route gets one.
func TestEveryIdempotentChangeMarksItsClaim(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		mine, secret := makeRecords(t, e, e.LiveKey)
		ids := productIDs(t, e)
		live := "account:" + e.AccountID + ":live"
		fresh := order(t, e, e.LiveKey, ids["month/adult"], ids["single/adult"])
		subs, others := fresh.split()
		monthly, single, item := str(subs[0]["id"]), str(others[0]["id"]), str(others[0]["billable_item_id"])
		// An item outside a collection and the spare one get a customer (a
		// PUT, not under test) so they can be invoiced.
		put(t, e, e.LiveKey, item, map[string]any{"customer_id": mine["customer_id"]})
		put(t, e, e.LiveKey, mine["spare_item"], map[string]any{"customer_id": mine["customer_id"]})
		ev := str(e.Must(200, apitest.Req{Method: "GET", Path: "/v1/events.json", Key: e.LiveKey}).Map(t)["data"].([]any)[0].(map[string]any)["id"])
		clk := newClock(t, e, e.TestKey, "2026-09-01T00:00:00Z")
		test := "account:" + e.AccountID + ":test"
		dev, device, err := e.Records.AddInspector(context.Background(), "Claims")
		if err != nil {
			t.Fatal(err)
		}
		deviceID := dev.ID

		type kase struct {
			route string // the route table's "METHOD path"
			path  string
			key   string // the API key; "" for a keyless request
			body  any
			scope string
		}
		cases := []kase{
			{"POST /v9/ticketing/subscriptions/{subscription_id}/reorder.json", "/v9/ticketing/subscriptions/" + mine["subscription_id"] + "/reorder.json", e.LiveKey, nil, live},
			{"POST /v9/ticketing/orders.json", "/v9/ticketing/orders.json", e.LiveKey, map[string]any{"product_ids": []string{ids["single/adult"]}}, live},
			// The test environment has no webhook endpoint: on PostgreSQL the
			// order is one autocommitted statement (InsertOrderAlone).
			{"POST /v9/ticketing/orders.json", "/v9/ticketing/orders.json", e.TestKey, map[string]any{"product_ids": []string{ids["single/adult"]}}, test},
			{"POST /v9/ticketing/orders/{order_id}/restore.json", "/v9/ticketing/orders/" + mine["order_id"] + "/restore.json", e.LiveKey,
				map[string]any{"restore_secret": secret, "coupon_ids": []string{mine["coupon_id"]}}, live},
			{"POST /v9/ticketing/coupons/{coupon_id}/tariff_settings.json", "/v9/ticketing/coupons/" + monthly + "/tariff_settings.json", "",
				map[string]any{"tariff_settings": map[string]any{"german_postal_code": "10115"}}, ""},
			{"POST /v9/ticketing/coupons/{coupon_id}/activate.json", "/v9/ticketing/coupons/" + single + "/activate.json", "",
				map[string]any{"identification_medium": medium("Łukasz", "Ørsted", "1990-01-01")}, ""},
			{"POST /v9/ticketing/customers.json", "/v9/ticketing/customers.json", e.LiveKey,
				map[string]any{"customer": map[string]any{"address_lines": []string{"山田 太郎", "شارع 2", "01067 Dresden"}}}, live},
			{"POST /v5/ticketing/billable_collections.json", "/v5/ticketing/billable_collections.json", e.LiveKey, nil, live},
			{"POST /v5/ticketing/billable_collection/{collection_id}/billable_items.json", "/v5/ticketing/billable_collection/" + mine["collection_id"] + "/billable_items.json", e.LiveKey,
				map[string]any{"billable_item_ids": []string{mine["spare_item"]}}, live},
			{"POST /v5/ticketing/billable_item/{billable_item_id}/invoice.json", "/v5/ticketing/billable_item/" + item + "/invoice.json", e.LiveKey, nil, live},
			{"POST /v5/ticketing/billable_item/{billable_item_id}/invoice/{customer_id}.json", "/v5/ticketing/billable_item/" + mine["spare_item"] + "/invoice/" + mine["customer_id"] + ".json", e.LiveKey, nil, live},
			{"POST /v9/ticketing/billable_collection/{collection_id}/payment_notice.json", "/v9/ticketing/billable_collection/" + mine["collection_id"] + "/payment_notice.json", e.LiveKey,
				map[string]any{"customer_id": mine["customer_id"]}, live},
			{"POST /v9/ticketing/invoices/{invoice_id}/payment_notice.json", "/v9/ticketing/invoices/" + mine["invoice_id"] + "/payment_notice.json", e.LiveKey, nil, live},
			{"POST /v9/ticketing/invoices/{invoice_id}/cancel.json", "/v9/ticketing/invoices/" + mine["invoice_id"] + "/cancel.json", e.LiveKey, nil, live},
			{"POST /v1/webhook_endpoints.json", "/v1/webhook_endpoints.json", e.LiveKey,
				map[string]any{"url": "https://93.184.215.14/hooks", "enabled_events": []string{"*"}}, live},
			{"POST /v1/webhook_endpoints/{endpoint_id}/rotate_secret.json", "/v1/webhook_endpoints/" + mine["endpoint_id"] + "/rotate_secret.json", e.LiveKey,
				map[string]any{"overlap_seconds": 3600}, live},
			{"POST /v1/webhook_endpoints/{endpoint_id}/redeliver.json", "/v1/webhook_endpoints/" + mine["endpoint_id"] + "/redeliver.json", e.LiveKey,
				map[string]any{"event_id": ev}, live},
			{"POST /v1/test_clocks.json", "/v1/test_clocks.json", e.TestKey, map[string]any{"frozen_time": "2026-09-01T00:00:00Z", "name": "🚆 テスト"}, test},
			{"POST /v1/test_clocks/{test_clock_id}/advance.json", "/v1/test_clocks/" + clk + "/advance.json", e.TestKey,
				map[string]any{"frozen_time": "2026-10-01T00:00:00Z"}, test},
			{"POST /v1/privacy/coupons/{coupon_id}/erasure.json", "/v1/privacy/coupons/" + mine["coupon_id"] + "/erasure.json", e.LiveKey, nil, live},
			{"POST /v1/privacy/subscriptions/{subscription_id}/erasure.json", "/v1/privacy/subscriptions/" + mine["subscription_id"] + "/erasure.json", e.LiveKey, nil, live},
			{"POST /v1/privacy/customers/{customer_id}/erasure.json", "/v1/privacy/customers/" + mine["customer_id"] + "/erasure.json", e.LiveKey, nil, live},
			{"POST /v1/inspection/records.json", "/v1/inspection/records.json", device, batch(check("claim-rec", "valid")), "inspector:" + deviceID},
		}
		// The resend of a document needs a relay: TestResendMarksItsClaim.
		covered := map[string]bool{"POST /v9/ticketing/invoices/{invoice_id}/deliveries.json": true,
			// Device binding needs inspection keys and a dynamic product: TestDeviceBindingMarksItsClaims.
			"POST /v9/ticketing/tickets/{ticket_id}/device.json": true, "POST /v9/ticketing/tickets/{ticket_id}/device_move.json": true}
		for i, c := range cases {
			covered[c.route] = true
			key := "claim-" + string(rune('a'+i))
			r := e.Do(apitest.Req{Method: "POST", Path: c.path, Key: c.key, Body: c.body, Header: map[string]string{"Idempotency-Key": key}})
			if r.Status >= 300 || r.Header.Get("Idempotency-Replayed") != "false" {
				t.Errorf("%s: %d %s", c.route, r.Status, r.Body)
				continue
			}
			scope := c.scope
			if scope == "" {
				scope = "path:" + c.path
			}
			if !claimCommitted(t, e, scope, key) {
				t.Errorf("%s committed its change without marking its Idempotency-Key claim", c.route)
			}
		}
		for _, rt := range e.Server.Routes() {
			if rt.Method != "POST" || (rt.Auth != "partner" && rt.Auth != "capability") || strings.HasPrefix(rt.Path, "/c/") {
				continue
			}
			if !covered[rt.Method+" "+rt.Path] && !coveredByVersion(covered, rt.Path) {
				t.Errorf("POST %s: no case in TestEveryIdempotentChangeMarksItsClaim", rt.Path)
			}
		}
	})
}

// coveredByVersion reports whether another API version of path has a case
// (the versions share their use case).
func coveredByVersion(covered map[string]bool, path string) bool {
	for r := range covered {
		_, p, _ := strings.Cut(r, " ")
		if strip(p) == strip(path) {
			return true
		}
	}
	return false
}

// strip drops a path's leading API version ("/v9").
func strip(p string) string {
	if len(p) > 2 && p[1] == 'v' {
		if i := strings.Index(p[1:], "/"); i > 0 {
			return p[i+1:]
		}
	}
	return p
}

// claimCommitted reads the committed flag of the Idempotency-Key (scope,
// key) after its request answered.
func claimCommitted(t *testing.T, e *apitest.Env, scope, key string) bool {
	t.Helper()
	ctx := context.Background()
	var committed bool
	if err := e.Store.Write(ctx, func(q store.Q) error {
		claimed, rec, err := q.ClaimIdempotencyKey(ctx, scope, key, "", e.Clock.Now(), time.Minute)
		if claimed {
			t.Fatalf("%s %s: the key was free", scope, key)
		}
		committed = rec.Committed
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return committed
}
