package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
)

func TestPerKeyRateLimit(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, store.SQLite, apitest.Options{Configure: func(d *httpapi.Deps) {
		d.RateLimits = &httpapi.RateLimits{Rate: 1, Burst: 2}
	}})
	get := func(key string) *apitest.Resp {
		return e.Do(apitest.Req{Method: "GET", Path: "/v1/account.json", Key: key})
	}
	r1, r2, r3 := get(e.LiveKey), get(e.LiveKey), get(e.LiveKey)
	if r1.Status != 200 || r2.Status != 200 || r3.Status != 429 {
		t.Fatalf("statuses %d %d %d, want 200 200 429", r1.Status, r2.Status, r3.Status)
	}
	if r1.Header.Get("RateLimit-Policy") != `"per-key";q=2;w=2` || r1.Header.Get("RateLimit") != `"per-key";r=1;t=1` {
		t.Errorf("headers: %q %q", r1.Header.Get("RateLimit-Policy"), r1.Header.Get("RateLimit"))
	}
	m := r3.Map(t)
	if m["code"] != "rate_limited" || r3.Header.Get("Retry-After") != "1" || !strings.HasPrefix(r3.Header.Get("RateLimit"), `"per-key";r=0`) {
		t.Errorf("429: %v Retry-After=%q RateLimit=%q", m, r3.Header.Get("Retry-After"), r3.Header.Get("RateLimit"))
	}
	// Another key has its own bucket; the fake clock refills this one.
	if r := get(e.TestKey); r.Status != 200 {
		t.Errorf("other key limited: %d", r.Status)
	}
	e.Clock.Advance(2 * time.Second)
	if r := get(e.LiveKey); r.Status != 200 {
		t.Errorf("after refill: %d", r.Status)
	}
	// Rate-limited requests are still recorded (counted) in the ledger.
	if rows := e.UsageRows(r3.Header.Get("X-Request-Id")); len(rows) != 1 || rows[0].Status != 429 {
		t.Errorf("ledger for 429: %+v", rows)
	}
}
