package httpapi

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/ratelimit"
	"github.com/farebox/farebox/internal/ratelimit/ratelimittest"
	"github.com/farebox/farebox/internal/ratelimit/redislimit"
)

func TestClientKey(t *testing.T) {
	t.Parallel()
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	for _, c := range []struct {
		remote, xff string
		trusted     []netip.Prefix
		want        string
	}{
		{"203.0.113.5:1234", "", nil, "203.0.113.5"},
		{"203.0.113.5:1234", "198.51.100.1", nil, "203.0.113.5"},                   // no trusted proxy: the header is the client's word
		{"[::ffff:203.0.113.5]:80", "", nil, "203.0.113.5"},                        // IPv4-mapped
		{"[2001:db8:1:2:3:4:5:6]:443", "", nil, "2001:db8:1:2::/64"},               // IPv6 per /64
		{"[2001:db8:1:2:ffff::1]:443", "", nil, "2001:db8:1:2::/64"},               // same subscriber prefix
		{"10.0.0.1:1", "1.2.3.4, 198.51.100.7, 10.0.0.2", proxies, "198.51.100.7"}, // the nearest untrusted hop
		{"10.0.0.1:1", "", proxies, "10.0.0.1"},                                    // a proxy without the header
		{"10.0.0.1:1", "evil, 10.0.0.3", proxies, "10.0.0.3"},                      // garbage ends the walk
		{"203.0.113.9:1", "198.51.100.7", proxies, "203.0.113.9"},                  // the peer is no proxy
		{"[fd00::1]:1", "2001:db8:9:9::1", proxies, "2001:db8:9:9::/64"},           // IPv6 proxy and client
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := clientKey(r, c.trusted); got != c.want {
			t.Errorf("clientKey(%s, XFF %q, trusted %v) = %s, want %s", c.remote, c.xff, c.trusted != nil, got, c.want)
		}
	}
}

// TestKeylessKeyBounded: a capability named by a long id (garbage) is
// limited under a key cut to maxCapabilityKey bytes, so the in-process
// table (ratelimit.Local, bounded by MaxEntries: TestLocalBounded) stays
// small whatever the path.
func TestKeylessKeyBounded(t *testing.T) {
	t.Parallel()
	r, _ := http.NewRequest("GET", "/", nil)
	long := make([]byte, 10_000)
	for i := range long {
		long[i] = 'x'
	}
	r.SetPathValue("coupon_id", string(long))
	if k := capabilityKey(r); len(k) != maxCapabilityKey {
		t.Errorf("key of a 10,000-byte id has %d bytes", len(k))
	}
}

// BenchmarkLimits is the cost of the limits of one request, in process
// and in Redis (ratelimittest.RedisURL) side by side: the per-key bucket
// of an authenticated request, both keyless buckets of a coupon request.
// A shared store is the Fallback serve builds in front of Redis's
// automatic pipeline.
func BenchmarkLimits(b *testing.B) {
	c, err := redislimit.Dial(ratelimittest.RedisURL())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		b.Fatalf("Redis at %s: %v", ratelimittest.RedisURL(), err)
	}
	prefix := ratelimittest.Prefix(b)
	defer func() {
		keys, _ := c.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
	}()
	ap, err := redislimit.Pipelined(c)
	if err != nil {
		b.Fatal(err)
	}
	shared := &ratelimit.Fallback{Shared: redislimit.New(ap, prefix, []byte("bench")), Local: &ratelimit.Local{},
		OnLocal: func() { panic("Redis stopped answering: the numbers would be the local store's") }}
	k := &KeylessLimits{PerCapability: Limit{Rate: 1e9, Burst: 1 << 30}, PerClient: Limit{Rate: 1e9, Burst: 1 << 30}}
	pk := &RateLimits{Rate: 1e9, Burst: 1 << 30}
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "203.0.113.5:1234"
	r.SetPathValue("coupon_id", "farebox-coupon-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f")
	h := http.Header{}
	for _, store := range []struct {
		name   string
		shared ratelimit.Store
	}{{"local", nil}, {"redis", shared}} {
		st := k.stores(store.shared)
		var perKey ratelimit.Store = &ratelimit.Local{Max: maxLimiters}
		if store.shared != nil {
			perKey = store.shared
		}
		b.Run("keyless/"+store.name, func(b *testing.B) {
			for b.Loop() {
				if k.allow(st, "GET /v9/ticketing/coupons/{coupon_id}.json", r, h, time.Now()) != nil {
					b.Fatal("refused")
				}
			}
		})
		b.Run("per-key/"+store.name, func(b *testing.B) {
			for b.Loop() {
				if pk.allow(r.Context(), perKey, "farebox-key-0190", h, time.Now()) != nil {
					b.Fatal("refused")
				}
			}
		})
	}
}
