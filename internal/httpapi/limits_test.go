package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
)

// TestRateLimitHeadersOnEveryGroup: each keyed endpoint group (account,
// catalog, ordering, subscriptions, invoicing, usage, transit) answers with the
// RateLimit and RateLimit-Policy fields and refuses the request past the
// burst with 429 rate_limited and Retry-After, writing nothing. Keyless
// capability endpoints carry no per-key limit.
func TestRateLimitHeadersOnEveryGroup(t *testing.T) {
	t.Parallel()
	opts := transitOptions(t, apitest.DefaultNow, feedSpec{"sample", "sample-gtfs-feed-0.13.0.zip", ""})
	withTransit := opts.Configure
	opts.Configure = func(d *httpapi.Deps) {
		withTransit(d)
		d.RateLimits = &httpapi.RateLimits{Rate: 0.5, Burst: 2}
	}
	e := apitest.New(t, store.SQLite, opts)
	ids := productIDs(t, e)
	o := order(t, e, e.LiveKey, ids["month/adult"], ids["single/adult"])
	var subID, item, single string
	for _, c := range o.Coupons {
		if s, ok := c["subscription"].(map[string]any); ok {
			subID = str(s["id"])
		} else {
			item, single = str(c["billable_item_id"]), str(c["id"])
		}
	}
	for _, g := range []struct {
		name string
		req  apitest.Req
		ok   int
	}{
		{"account", apitest.Req{Method: "GET", Path: "/v1/account.json"}, 200},
		{"usage", apitest.Req{Method: "GET", Path: "/v1/usage.json"}, 200},
		{"catalog", apitest.Req{Method: "GET", Path: "/v2/products/search_by_city_name.json?city_name=Berlin"}, 200},
		{"ordering", apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Body: map[string]any{"product_ids": []string{ids["single/adult"]}}}, 201},
		{"order lookup", apitest.Req{Method: "GET", Path: "/v9/ticketing/orders/" + o.OrderID + ".json"}, 200},
		{"subscriptions", apitest.Req{Method: "GET", Path: "/v9/ticketing/subscriptions/" + subID + ".json"}, 200},
		{"invoicing", apitest.Req{Method: "GET", Path: "/v5/ticketing/billable_item/" + item + ".json"}, 200},
		{"transit", apitest.Req{Method: "GET", Path: "/v1/attributions.json"}, 200},
		{"customers", apitest.Req{Method: "POST", Path: "/v5/ticketing/customers.json", Body: map[string]any{"customer": map[string]any{"address_lines": []string{"A GmbH"}}}}, 201},
	} {
		// Each group gets a fresh key of the owning account, so its bucket is full.
		k, err := e.Accounts.CreateKey(context.Background(), idempotency.Claim{}, e.AccountID, account.Live)
		if err != nil {
			t.Fatal(err)
		}
		g.req.Key = k.Secret
		for i := 0; i < 2; i++ {
			r := e.Do(g.req)
			if r.Status != g.ok || r.Header.Get("RateLimit-Policy") != `"per-key";q=2;w=4` || !strings.HasPrefix(r.Header.Get("RateLimit"), `"per-key";r=`) {
				t.Errorf("%s request %d: %d RateLimit=%q Policy=%q %s", g.name, i+1, r.Status, r.Header.Get("RateLimit"), r.Header.Get("RateLimit-Policy"), r.Body)
			}
		}
		before := counts(t, e)
		customers := count(t, e, "customers")
		r := e.Do(g.req)
		if r.Status != 429 || r.Map(t)["code"] != "rate_limited" || r.Header.Get("Retry-After") != "2" ||
			r.Header.Get("RateLimit") != `"per-key";r=0;t=4` || r.Header.Get("RateLimit-Policy") == "" {
			t.Errorf("%s past the burst: %d Retry-After=%q RateLimit=%q %s", g.name, r.Status, r.Header.Get("Retry-After"), r.Header.Get("RateLimit"), r.Body)
		}
		if after := counts(t, e); !equalCounts(before, after) || count(t, e, "customers") != customers {
			t.Errorf("%s: a refused request wrote rows", g.name)
		}
	}
	// Capability endpoints have no key and no per-key limit.
	for i := 0; i < 5; i++ {
		r := e.Must(200, apitest.Req{Method: "GET", Path: "/v9/ticketing/coupons/" + single + ".json"})
		if r.Header.Get("RateLimit") != "" {
			t.Errorf("coupon fetch carries RateLimit %q", r.Header.Get("RateLimit"))
		}
	}
}
