package httpapi_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/config/configtest"
	"github.com/farebox/farebox/internal/httpapi"
)

// usageRow is one line of GET /v1/usage.json.
type usageRow struct {
	Date, Endpoint              string
	Counted, Uncounted, Refused int64
}

func usageOf(t *testing.T, e *apitest.Env, key, endpoint string) usageRow {
	t.Helper()
	var rep struct{ Days []usageRow }
	e.Must(200, apitest.Req{Method: "GET", Path: "/v1/usage.json", Key: key}).JSON(t, &rep)
	for _, d := range rep.Days {
		if d.Endpoint == endpoint {
			return d
		}
	}
	return usageRow{Endpoint: endpoint}
}

// keylessDefaults are the limits serve starts with.
func keylessDefaults() *httpapi.KeylessLimits {
	c := configtest.Defaults()
	return &httpapi.KeylessLimits{
		PerCapability: httpapi.Limit{Rate: c.CapabilityRate, Burst: c.CapabilityBurst},
		PerClient:     httpapi.Limit{Rate: c.ClientRate, Burst: c.ClientBurst},
	}
}

// TestCapabilityFloodIsRefusedAndNotBilled: the finding of issue 14 (4,241
// anonymous GETs of one coupon in 5 s, all served and billed) with the
// default limits: one coupon's burst is served, the rest of the flood gets
// 429 with Retry-After, and the usage report bills only the served ones and
// shows the refused ones; a second coupon of the same partner is not
// affected, and after Retry-After the coupon is served again. Both engines.
func TestCapabilityFloodIsRefusedAndNotBilled(t *testing.T) {
	t.Parallel()
	lim := keylessDefaults()
	if lim.PerCapability.Burst < 10 || lim.PerCapability.Rate <= 0 || lim.PerClient.Burst < 10*lim.PerCapability.Burst {
		t.Fatalf("defaults: %+v", lim)
	}
	apitest.ForEachEngine(t, apitest.Options{Configure: func(d *httpapi.Deps) { d.Keyless = keylessDefaults() }}, func(t *testing.T, e *apitest.Env) {
		ids := productIDs(t, e)
		a := str(order(t, e, e.LiveKey, ids["single/adult"]).Coupons[0]["id"])
		b := str(order(t, e, e.LiveKey, ids["single/adult"]).Coupons[0]["id"])
		const flood = 200
		burst := lim.PerCapability.Burst
		served, refused := 0, 0
		for i := 0; i < flood; i++ {
			r := e.Do(apitest.Req{Method: "GET", Path: "/v9/ticketing/coupons/" + a + ".json"})
			switch r.Status {
			case 200:
				served++
			case 429:
				refused++
				if m := r.Map(t); m["code"] != "rate_limited" || !strings.Contains(str(m["message"]), "coupon") || r.Header.Get("Retry-After") != "1" {
					t.Fatalf("429: %s Retry-After %q", r.Body, r.Header.Get("Retry-After"))
				}
			default:
				t.Fatalf("GET coupon: %d %s", r.Status, r.Body)
			}
		}
		if served != burst || refused != flood-burst {
			t.Errorf("flood of %d: %d served, %d refused; want the burst %d served", flood, served, refused, burst)
		}
		coupon(t, e, "v9", b) // another capability of the same partner and client
		e.Clock.Advance(time.Second)
		coupon(t, e, "v9", a) // Retry-After honoured
		// The usage report: the v9 coupon endpoint billed for what was served.
		u := usageOf(t, e, e.LiveKey, "GET /v9/ticketing/coupons/{coupon_id}.json")
		if u.Counted != int64(burst+2) || u.Refused != int64(flood-burst) || u.Uncounted != u.Refused {
			t.Errorf("usage %+v: want counted %d, uncounted = refused = %d", u, burst+2, flood-burst)
		}
		for _, ev := range e.UsageRows("") {
			if ev.Status == 429 && (ev.Counted || ev.Reason != "rate_limited") {
				t.Fatalf("a 429 in the ledger: %+v", ev)
			}
		}
	})
}

// TestBillingRule: which statuses are billed (api/openapi.yaml,
// docs/operations.md "Billing"): 2xx and 4xx other than 429 are counted,
// 429 is refused, 5xx failed; here through the per-key limit and a
// client's mistake on a keyless endpoint. Both engines.
func TestBillingRule(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, apitest.Options{Configure: func(d *httpapi.Deps) {
		d.RateLimits = &httpapi.RateLimits{Rate: 1, Burst: 2}
		d.Keyless = &httpapi.KeylessLimits{PerCapability: httpapi.Limit{Rate: 1, Burst: 3}}
	}}, func(t *testing.T, e *apitest.Env) {
		// Per key: 2 served, 3 refused; the usage request uses the test key.
		for i, want := range []int{200, 200, 429, 429, 429} {
			if r := e.Do(apitest.Req{Method: "GET", Path: "/v1/account.json", Key: e.LiveKey}); r.Status != want {
				t.Fatalf("request %d: %d, want %d", i, r.Status, want)
			}
		}
		if u := usageOf(t, e, e.TestKey, "GET /v1/account.json"); u.Counted != 2 || u.Uncounted != 3 || u.Refused != 3 {
			t.Errorf("per-key usage %+v: want counted 2, refused 3", u)
		}
		// A client's mistake (activation without its required body) is
		// judged and billed; the refusals after the burst are not.
		e.Clock.Advance(time.Minute)
		pid := productIDs(t, e)["single/adult"]
		e.Clock.Advance(time.Minute)
		c := str(order(t, e, e.LiveKey, pid).Coupons[0]["id"])
		path := "/v9/ticketing/coupons/" + c + "/activate.json"
		for i, want := range []int{422, 422, 422, 429} {
			if r := e.Do(apitest.Req{Method: "POST", Path: path, Body: map[string]any{"tariff_settings": "x"}}); r.Status != want {
				t.Fatalf("activation %d: %d, want %d: %s", i, r.Status, want, r.Body)
			}
		}
		u := usageOf(t, e, e.TestKey, "POST /v9/ticketing/coupons/{coupon_id}/activate.json")
		if u.Counted != 3 || u.Refused != 1 || u.Uncounted != 1 {
			t.Errorf("activation usage %+v: want 3 counted 4xx and 1 refused", u)
		}
	})
}

// TestClientAddressLimit: the per-client limit counts a client's requests
// over all capabilities; X-Forwarded-For counts only from a trusted proxy.
func TestClientAddressLimit(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{false, true} {
		lim := &httpapi.KeylessLimits{PerClient: httpapi.Limit{Rate: 1, Burst: 4}}
		if trusted {
			lim.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
		}
		e := apitest.New(t, "sqlite", apitest.Options{Configure: func(d *httpapi.Deps) { d.Keyless = lim }})
		ids := productIDs(t, e)
		var coupons []string
		for i := 0; i < 6; i++ {
			coupons = append(coupons, str(order(t, e, e.LiveKey, ids["single/adult"]).Coupons[0]["id"]))
		}
		refused := 0
		for i, c := range coupons {
			// Each request claims another client; only a trusted proxy's word counts.
			r := e.Do(apitest.Req{Method: "GET", Path: "/v9/ticketing/coupons/" + c + ".json",
				Header: map[string]string{"X-Forwarded-For": "198.51.100." + string(rune('1'+i))}})
			if r.Status == 429 {
				refused++
				if !strings.Contains(str(r.Map(t)["message"]), "network address") {
					t.Errorf("429 message: %s", r.Body)
				}
			}
		}
		if want := map[bool]int{false: 2, true: 0}[trusted]; refused != want {
			t.Errorf("trusted proxy %v: %d of 6 refused, want %d", trusted, refused, want)
		}
		// Health probes are not limited per client.
		for i := 0; i < 10; i++ {
			e.Must(200, apitest.Req{Method: "GET", Path: "/healthz"})
		}
	}
}
