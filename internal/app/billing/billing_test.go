package billing_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/usage"
)

// TestUsageEventBillingRule is the billing rule of docs/operations.md at
// its edges: every status class, 429 against its neighbours, and a set
// reason that only an otherwise billed request keeps.
func TestUsageEventBillingRule(t *testing.T) {
	now := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	a := billing.New(nil, clocktest.NewFixed(now))
	for _, c := range []struct {
		status    int
		uncounted string
		counted   bool
		reason    string
	}{
		{200, "", true, usage.ReasonCounted},
		{201, "", true, usage.ReasonCounted},
		{302, "", true, usage.ReasonCounted},
		{400, "", true, usage.ReasonCounted},
		{404, "", true, usage.ReasonCounted},
		{428, "", true, usage.ReasonCounted},
		{429, "", false, usage.ReasonRateLimited},
		{430, "", true, usage.ReasonCounted},
		{499, "", true, usage.ReasonCounted},
		{500, "", false, usage.ReasonFailed},
		{503, "", false, usage.ReasonFailed},
		{200, billing.ReasonSession, false, usage.ReasonSession},
		{201, billing.ReasonReplay, false, usage.ReasonReplay},
		{409, billing.ReasonReplay, false, usage.ReasonReplay},
		{503, billing.ReasonSession, false, usage.ReasonFailed},
		{429, billing.ReasonReplay, false, usage.ReasonRateLimited},
	} {
		o := billing.RequestOutcome{RequestID: "req-1", Endpoint: "GET /v1/departures.json", Status: c.status,
			AccountID: "account-1", Environment: account.Test, Uncounted: c.uncounted}
		j := a.UsageEvent(o)
		ev := j.Row
		want := usage.Event{RequestID: "req-1", AccountID: "account-1", Environment: account.Test,
			Endpoint: "GET /v1/departures.json", Status: c.status, Counted: c.counted, Reason: c.reason, At: now}
		if ev != want || j.Counted != c.counted || j.Reason != c.reason {
			t.Errorf("status %d, uncounted %q: %+v, want %+v", c.status, c.uncounted, ev, want)
		}
	}
}

func TestEndpointGroup(t *testing.T) {
	for in, want := range map[string]string{
		"GET /v9/ticketing/orders.json":             "ticketing",
		"POST /v6/ticketing/coupons/{id}/activate":  "ticketing",
		"GET /v1/departures.json":                   "departures",
		"GET /v2/products/search_by_city_name.json": "products",
		"GET /healthz":                              "healthz",
		"GET /":                                     "other",
		"GET /c/{coupon_id}":                        "c",
		"GET /v1/station_map/{tile}.mvt":            "station_map",
	} {
		if got := billing.EndpointGroup(in); got != want {
			t.Errorf("EndpointGroup(%q) = %q, want %q", in, got, want)
		}
	}
}
