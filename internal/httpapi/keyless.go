package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/apperr"
)

// KeylessLimits rate-limits the requests that carry no API key: the
// capability endpoints (coupon, activation, tariff settings, ticket,
// rendering options, passes), the invoice downloads, the engines and the
// other public documents. Their requests are billed to the account that
// owns the coupon, ticket or invoice, so without a limit anyone holding
// (or guessing at) an id could run up a partner's bill or the service's
// load. Two token buckets apply, both per instance:
//
//   - per capability: the coupon, ticket or invoice (id and download
//     identifier) named in the path, whatever the client;
//   - per client address: the socket's peer, or behind trusted proxies the
//     first untrusted address of X-Forwarded-For; IPv6 addresses count per
//     /64 (one subscriber's prefix).
//
// A refused request answers 429 rate_limited with Retry-After and is
// recorded in the usage ledger as refused (not billed) for the account the
// capability was last served for. Memory is bounded: each table holds at
// most MaxEntries buckets; when full, the fullest (idlest) quarter is
// dropped, which only ever makes a dropped bucket start full again.
type KeylessLimits struct {
	// PerCapability and PerClient are requests per second and burst;
	// a Rate of 0 disables that limit.
	PerCapability, PerClient Limit
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	// Empty: the socket's peer address is the client.
	TrustedProxies []netip.Prefix
	// MaxEntries bounds each table (default 65,536 buckets: 13 MB with real
	// ids, at most 26 MB with keys cut at 256 bytes; measured after GC).
	MaxEntries int

	caps, clients bucketTable
}

// Limit is a token bucket: Rate requests per second, bursts of Burst.
type Limit struct {
	Rate  float64
	Burst int
}

func (l Limit) on() bool { return l.Rate > 0 && l.Burst > 0 }

// DefaultMaxEntries is KeylessLimits.MaxEntries when unset.
const DefaultMaxEntries = 1 << 16

// capabilityParams are the path parameters that name a capability, in the
// order they are joined into its bucket key. Product ids are public catalog
// entries shared by every client, so they are not limited per id.
// A wallet pass (serial_number) and a wallet device (device_library_id)
// are limited like a ticket.
var capabilityParams = []string{"coupon_id", "ticket_id", "invoice_id", "identifier", "serial_number", "device_library_id"}

// exemptFromClientLimit are keyless routes without a per-client limit:
// probes of load balancers and the scraper come from few addresses.
var exemptFromClientLimit = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}

// capabilityKey is the bucket key of the capability a request names, or "".
func capabilityKey(r *http.Request) string {
	var b strings.Builder
	for _, p := range capabilityParams {
		if v := r.PathValue(p); v != "" {
			if b.Len() > 0 {
				b.WriteByte('/')
			}
			b.WriteString(p)
			b.WriteByte('=')
			b.WriteString(v)
		}
	}
	// Real ids are far shorter; a longer key (garbage) is cut, so memory
	// stays bounded by MaxEntries whatever the path.
	if b.Len() > maxCapabilityKey {
		return b.String()[:maxCapabilityKey]
	}
	return b.String()
}

const maxCapabilityKey = 256

// allow takes a token from the client's and the capability's buckets; a
// refusal is the error to answer (with Retry-After set in h).
func (k *KeylessLimits) allow(route string, r *http.Request, h http.Header, now time.Time) error {
	if k == nil {
		return nil
	}
	capKey := ""
	if k.PerCapability.on() {
		capKey = capabilityKey(r)
	}
	refuse := func(wait time.Duration, what string) error {
		secs := int(math.Ceil(wait.Seconds()))
		if secs < 1 {
			secs = 1
		}
		h.Set("Retry-After", strconv.Itoa(secs))
		return apperr.E("ratelimit", apperr.RateLimited, CodeRateLimited,
			fmt.Sprintf("too many requests %s; retry in %d s", what, secs))
	}
	if k.PerClient.on() && !exemptFromClientLimit[route] {
		if ok, wait := k.clients.take(k.max(), clientKey(r, k.TrustedProxies), k.PerClient, now); !ok {
			return refuse(wait, "from this network address")
		}
	}
	if capKey != "" {
		if ok, wait := k.caps.take(k.max(), capKey, k.PerCapability, now); !ok {
			return refuse(wait, "for this "+capabilityNoun(capKey))
		}
	}
	return nil
}

func (k *KeylessLimits) max() int {
	if k.MaxEntries > 0 {
		return k.MaxEntries
	}
	return DefaultMaxEntries
}

func capabilityNoun(key string) string {
	switch {
	case strings.HasPrefix(key, "coupon_id="):
		return "coupon"
	case strings.HasPrefix(key, "ticket_id="):
		return "ticket"
	case strings.HasPrefix(key, "serial_number="):
		return "wallet pass"
	case strings.HasPrefix(key, "device_library_id="):
		return "wallet device"
	default:
		return "invoice"
	}
}

// clientKey is the client's address as the limit counts it: IPv4 whole,
// IPv6 by /64. Behind trusted proxies it is the last address of
// X-Forwarded-For that is not a trusted proxy itself (the one the nearest
// trusted proxy saw); addresses further left are whatever the client wrote.
func clientKey(r *http.Request, trusted []netip.Prefix) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	addr := peer.Addr()
	if err != nil {
		a, err := netip.ParseAddr(r.RemoteAddr)
		if err != nil {
			return r.RemoteAddr // not an IP (tests, unix sockets): as given
		}
		addr = a
	}
	addr = addr.Unmap()
	if isTrusted(addr, trusted) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // garbage: keep the last trusted hop
			}
			addr = hop.Unmap()
			if !isTrusted(addr, trusted) {
				break
			}
		}
	}
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// bucketTable is a bounded map of token buckets.
type bucketTable struct {
	mu sync.Mutex
	m  map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time // when tokens was computed
}

// level is the bucket's token count at now.
func (b *bucket) level(l Limit, now time.Time) float64 {
	return math.Min(float64(l.Burst), b.tokens+now.Sub(b.at).Seconds()*l.Rate)
}

// take takes one token for key; when none is left it returns false and how
// long until one is.
func (t *bucketTable) take(max int, key string, l Limit, now time.Time) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.m[key]
	if b == nil {
		if t.m == nil {
			t.m = map[string]*bucket{}
		}
		if len(t.m) >= max {
			t.evict(max, l, now)
		}
		b = &bucket{tokens: float64(l.Burst), at: now}
		t.m[key] = b
	}
	tokens := b.level(l, now)
	if now.After(b.at) {
		b.tokens, b.at = tokens, now
	}
	if tokens < 1 {
		return false, time.Duration((1 - tokens) / l.Rate * float64(time.Second))
	}
	b.tokens--
	return true, 0
}

// evict drops the fullest buckets (those idle longest) until a quarter of
// the table is free: a full bucket restarts exactly as it was, and the ones
// an attacker is draining stay. Sorting once per max/4 insertions keeps
// the cost per request logarithmic.
func (t *bucketTable) evict(max int, l Limit, now time.Time) {
	type kv struct {
		key   string
		level float64
	}
	all := make([]kv, 0, len(t.m))
	for k, b := range t.m {
		all = append(all, kv{k, b.level(l, now)})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].level > all[j].level })
	for _, e := range all[:len(all)-max*3/4] {
		delete(t.m, e.key)
	}
}
