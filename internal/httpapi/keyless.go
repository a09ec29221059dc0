package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/ratelimit"
)

// KeylessLimits rate-limits the requests that carry no API key: the
// capability endpoints (coupon, activation, tariff settings, ticket,
// rendering options, passes), the invoice downloads, the engines and the
// other public documents. Their requests are billed to the account that
// owns the coupon, ticket or invoice, so without a limit anyone holding
// (or guessing at) an id could run up a partner's bill or the service's
// load. Two token buckets apply, per instance or, with Deps.Limits
// shared, across instances:
//
//   - per capability: the coupon, ticket or invoice (id and download
//     identifier) named in the path, whatever the client;
//   - per client address: the socket's peer, or behind trusted proxies the
//     first untrusted address of X-Forwarded-For; IPv6 addresses count per
//     /64 (one subscriber's prefix).
//
// A refused request answers 429 rate_limited with Retry-After and is
// recorded in the usage ledger as refused (not billed) for the account the
// capability was last served for. In process, memory is bounded: each
// table holds at most MaxEntries buckets; when full, the fullest (idlest)
// quarter is dropped, which only ever makes a dropped bucket start full
// again (ratelimit.Local). Shared, Redis expires each bucket once full.
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
}

// Limit is a token bucket: Rate requests per second, bursts of Burst.
type Limit = ratelimit.Limit

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

// keylessStores are where the two tables live: in process each its own
// ratelimit.Local of MaxEntries, shared one store for both.
type keylessStores struct{ caps, clients ratelimit.Store }

// stores are the tables of k in process, or shared when shared is set.
func (k *KeylessLimits) stores(shared ratelimit.Store) keylessStores {
	if shared != nil {
		return keylessStores{shared, shared}
	}
	max := DefaultMaxEntries
	if k != nil && k.MaxEntries > 0 {
		max = k.MaxEntries
	}
	return keylessStores{&ratelimit.Local{Max: max}, &ratelimit.Local{Max: max}}
}

// take takes a token of l for key from s; a store that fails (one without
// a fallback) refuses nothing.
func take(r *http.Request, s ratelimit.Store, key string, l Limit, now time.Time) (bool, time.Duration) {
	got, err := s.Take(r.Context(), key, l, now)
	if err != nil {
		return true, 0
	}
	return got.OK, got.Wait(l)
}

// allow takes a token from the client's and the capability's buckets; a
// refusal is the error to answer (with Retry-After set in h).
func (k *KeylessLimits) allow(st keylessStores, route string, r *http.Request, h http.Header, now time.Time) error {
	if k == nil {
		return nil
	}
	capKey := ""
	if k.PerCapability.On() {
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
	if k.PerClient.On() && !exemptFromClientLimit[route] {
		if ok, wait := take(r, st.clients, "client:"+clientKey(r, k.TrustedProxies), k.PerClient, now); !ok {
			return refuse(wait, "from this network address")
		}
	}
	if capKey != "" {
		if ok, wait := take(r, st.caps, "capability:"+capKey, k.PerCapability, now); !ok {
			return refuse(wait, "for this "+capabilityNoun(capKey))
		}
	}
	return nil
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
