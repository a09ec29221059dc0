package httpapi_test

import (
	"context"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/ratelimit"
	"github.com/farebox/farebox/internal/ratelimit/ratelimittest"
	"github.com/farebox/farebox/internal/ratelimit/redislimit"
	"github.com/farebox/farebox/internal/store"
)

// sharedLimits is a store of the limits in the tests' Redis, under a
// prefix of the test's own, as serve builds it with --redis-url.
func sharedLimits(t *testing.T) ratelimit.Store {
	t.Helper()
	c, err := redislimit.Dial(ratelimittest.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis at %s (FAREBOX_TEST_REDIS_URL): %v", ratelimittest.RedisURL(), err)
	}
	prefix := ratelimittest.Prefix(t)
	t.Cleanup(func() {
		keys, _ := c.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
		c.Close()
	})
	ap, err := redislimit.Pipelined(c)
	if err != nil {
		t.Fatal(err)
	}
	return &ratelimit.Fallback{Shared: redislimit.New(ap, prefix, []byte("test")), Local: &ratelimit.Local{},
		OnChange: func(bool, error) { t.Error("Redis stopped answering") }}
}

// TestKeylessLimitsAcrossInstances: two servers on one database and one
// shared store (Redis) hold one coupon's keyless burst and one client's
// between them, and one key's per-key burst, with the same answers and
// headers a single server gives.
func TestKeylessLimitsAcrossInstances(t *testing.T) {
	t.Parallel()
	shared := sharedLimits(t)
	configure := func(d *httpapi.Deps) {
		d.Limits = shared
		d.RateLimits = &httpapi.RateLimits{Rate: 0.001, Burst: 3}
		d.Keyless = &httpapi.KeylessLimits{PerCapability: httpapi.Limit{Rate: 0.001, Burst: 3}, PerClient: httpapi.Limit{Rate: 0.001, Burst: 5}}
	}
	e1 := apitest.New(t, store.SQLite, apitest.Options{Configure: configure})
	e2 := apitest.NewOnStore(t, e1.Store, apitest.Options{Configure: configure})
	ids := productIDs(t, e1)
	coupon := str(order(t, e1, e1.LiveKey, ids["single/adult"]).Coupons[0]["id"])
	other := str(order(t, e2, e1.LiveKey, ids["single/adult"]).Coupons[0]["id"])
	// The per-key burst of 3 went on the two orders and the products:
	// the key's next request, on either server, is refused.
	for _, e := range []*apitest.Env{e1, e2} {
		r := e.Do(apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e1.LiveKey})
		if r.Status != 429 || r.Header.Get("Retry-After") == "" || r.Header.Get("RateLimit-Policy") != `"per-key";q=3;w=3000` {
			t.Errorf("key after its burst on two servers: %d %v", r.Status, r.Header)
		}
	}
	// Coupon: burst 3 over both servers.
	path := "/v9/ticketing/coupons/" + coupon + ".json"
	for _, e := range []*apitest.Env{e1, e2, e1} {
		e.Must(200, apitest.Req{Method: "GET", Path: path})
	}
	for _, e := range []*apitest.Env{e2, e1} {
		if r := e.Do(apitest.Req{Method: "GET", Path: path}); r.Status != 429 || r.Header.Get("Retry-After") == "" {
			t.Errorf("coupon after its burst on two servers: %d %s", r.Status, r.Body)
		}
	}
	// Client: 5 keyless requests of this address so far; the other coupon's
	// first request on either server is refused for the address.
	if r := e2.Do(apitest.Req{Method: "GET", Path: "/v9/ticketing/coupons/" + other + ".json"}); r.Status != 429 {
		t.Errorf("client after its burst on two servers: %d %s", r.Status, r.Body)
	}
}
