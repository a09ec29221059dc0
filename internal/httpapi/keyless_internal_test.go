package httpapi

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

func TestClientKey(t *testing.T) {
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

// TestKeylessTableBounded: an attacker cycling ids (or addresses) cannot
// grow a table past MaxEntries, and the flood does not reset the bucket of
// the capability it is draining: eviction drops the fullest buckets first.
func TestKeylessTableBounded(t *testing.T) {
	const max = 1000
	l := Limit{Rate: 1, Burst: 5}
	var tb bucketTable
	now := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	for i := 0; i < l.Burst; i++ {
		if ok, _ := tb.take(max, "victim", l, now); !ok {
			t.Fatal("victim's burst refused")
		}
	}
	for i := 0; i < 100*max; i++ {
		tb.take(max, fmt.Sprintf("coupon_id=farebox-coupon-%d", i), l, now)
		if n := tb.size(); n > max {
			t.Fatalf("table grew to %d > %d after %d ids", n, max, i+1)
		}
	}
	if ok, wait := tb.take(max, "victim", l, now); ok || wait != time.Second {
		t.Errorf("the drained victim was reset by the flood: ok %v, wait %v", ok, wait)
	}
	// Long ids share one bounded key.
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

// BenchmarkKeylessAllow is the cost of both limits on one request.
func BenchmarkKeylessAllow(b *testing.B) {
	k := &KeylessLimits{PerCapability: Limit{Rate: 1e9, Burst: 1 << 30}, PerClient: Limit{Rate: 1e9, Burst: 1 << 30}}
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "203.0.113.5:1234"
	r.SetPathValue("coupon_id", "farebox-coupon-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f")
	h := http.Header{}
	now := time.Now()
	for b.Loop() {
		if k.allow("GET /v9/ticketing/coupons/{coupon_id}.json", r, h, now) != nil {
			b.Fatal("refused")
		}
	}
}

// size is the number of buckets held (tests).
func (t *bucketTable) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
