// Package webhook holds the rules of webhook endpoints and their deliveries
// (docs/webhooks.md): which events an endpoint wants, how a delivery is
// signed, when it is retried and when an endpoint that keeps failing is
// disabled, and which addresses an endpoint may point to. It does no I/O:
// internal/webhook/sender posts, internal/store keeps the rows, app runs
// the deliveries as jobs.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
)

// Wildcard as an enabled event type subscribes to every type, also those
// added to the catalogue later.
const Wildcard = "*"

// Limits and periods (docs/webhooks.md).
const (
	// RetryWindow: a delivery is retried with exponential backoff until
	// this long after its first attempt, then it has failed.
	RetryWindow = 3 * 24 * time.Hour
	// DisableAfter: an endpoint all of whose attempts failed for this long
	// (no success since its first failure) is disabled.
	DisableAfter = 3 * 24 * time.Hour
	// FirstBackoff and MaxBackoff bound the delay between two attempts of
	// a delivery (before jitter).
	FirstBackoff = 10 * time.Second
	MaxBackoff   = 6 * time.Hour
	// MaxOverlap bounds the period during which a rotated-out secret still
	// signs; DefaultOverlap is taken when none is given.
	MaxOverlap     = 7 * 24 * time.Hour
	DefaultOverlap = 24 * time.Hour
	// Timeout bounds one attempt: connect, send, first byte and excerpt.
	Timeout = 10 * time.Second
	// ExcerptBytes is how much of a receiver's answer the log keeps.
	ExcerptBytes = 1024
	// MaxURLLength and MaxDescription bound an endpoint's texts;
	// MaxEndpoints bounds an account's endpoints per environment.
	MaxURLLength   = 2048
	MaxDescription = 500
	MaxEndpoints   = 16
	// SignatureHeader carries t=<unix seconds>,v1=<hex HMAC>[,v1=…];
	// EventIDHeader the event id, DeliveryHeader the delivery id.
	SignatureHeader = "Farebox-Signature"
	EventIDHeader   = "Farebox-Event-Id"
	DeliveryHeader  = "Farebox-Delivery-Id"
	// SecretPrefix starts every signing secret.
	SecretPrefix = "whsec_"
)

// Endpoint is a stored webhook endpoint.
type Endpoint struct {
	ID          string
	AccountID   string
	Environment account.Environment
	URL         string
	Description string
	EventTypes  []string // event types or Wildcard
	Secret      string
	// OldSecret signs too until OldSecretExpires (a rotation's overlap).
	OldSecret        string
	OldSecretExpires *time.Time
	DisabledAt       *time.Time
	DisabledReason   string
	// FailingSince is the first failed attempt since the last success.
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Wants says whether the endpoint subscribes to events of type t.
func (e Endpoint) Wants(t event.Type) bool {
	return slices.Contains(e.EventTypes, Wildcard) || slices.Contains(e.EventTypes, string(t))
}

// Secrets are the secrets that sign at now: the current one first, then a
// rotated-out one still in its overlap.
func (e Endpoint) Secrets(now time.Time) []string {
	out := []string{e.Secret}
	if e.OldSecret != "" && e.OldSecretExpires != nil && now.Before(*e.OldSecretExpires) {
		out = append(out, e.OldSecret)
	}
	return out
}

// States of a delivery.
const (
	StatePending   = "pending"   // an attempt is scheduled (a job exists)
	StateWaiting   = "waiting"   // an earlier event of the same object is not finished yet
	StateSucceeded = "succeeded" // a 2xx answer was received
	StateFailed    = "failed"    // retries exhausted, or the endpoint was disabled or deleted
)

// Work is what an attempt needs: the delivery, its endpoint and its
// event (EventFound false when the event was pruned).
type Work struct {
	Delivery   Delivery
	Endpoint   Endpoint
	Event      event.Event
	EventFound bool
}

// Delivery is one event to deliver to one endpoint (or a manual
// redelivery of one).
type Delivery struct {
	ID          string
	EndpointID  string
	AccountID   string
	Environment account.Environment
	EventID     string
	ObjectID    string
	State       string
	Attempts    int
	Manual      bool
	HasNext     bool // a later delivery of the object waits behind this one
	CreatedAt   time.Time
}

// Attempt is one row of an endpoint's delivery log.
type Attempt struct {
	ID         string
	N          int64 // log order
	EndpointID string
	DeliveryID string
	EventID    string
	EventType  string
	Attempt    int // 1 for the first attempt of the delivery
	At         time.Time
	StatusCode int // 0: no HTTP answer
	Latency    time.Duration
	Excerpt    string
	Error      string
	Succeeded  bool
	Manual     bool
	// NextAttemptAt is when the delivery is tried again, nil when this
	// attempt was its last.
	NextAttemptAt *time.Time
}

// AttemptRecord is an attempt to log and the state its delivery moves to
// (pending for a retry, succeeded or failed).
type AttemptRecord struct {
	Attempt Attempt
	State   string
}

// Result is what a POST to an endpoint produced.
type Result struct {
	StatusCode int
	Latency    time.Duration
	Excerpt    string
	Err        string // transport error, or why the answer is a failure
}

// OK says whether the receiver accepted the delivery (any 2xx).
func (r Result) OK() bool { return r.Err == "" && r.StatusCode >= 200 && r.StatusCode < 300 }

// NewSecret returns a fresh signing secret.
func NewSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// Sign returns the signature header value for body sent at t: one v1 per
// secret, HMAC-SHA256 over "<unix seconds>.<body>" keyed with the whole
// secret string, in hex.
func Sign(secrets []string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, s := range secrets {
		m := hmac.New(sha256.New, []byte(s))
		m.Write([]byte(ts))
		m.Write([]byte{'.'})
		m.Write(body)
		b.WriteString(",v1=" + hex.EncodeToString(m.Sum(nil)))
	}
	return b.String()
}

// Backoff is the delay after failed attempt n (1-based) before jitter:
// FirstBackoff·2^(n−1), capped at MaxBackoff.
func Backoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	f := float64(FirstBackoff) * math.Pow(2, float64(n-1))
	if f >= float64(MaxBackoff) {
		return MaxBackoff
	}
	return time.Duration(f)
}

// NextAttempt is when a delivery first tried at first is tried again after
// failed attempt n at now, with jitter j in [0, 1) adding up to a quarter;
// false when the retry window is over (the delivery has failed). The last
// attempt is made at the end of the window, so an endpoint that failed
// throughout is tried once more when DisableAfter has passed.
func NextAttempt(first, now time.Time, n int, j float64) (time.Time, bool) {
	end := first.Add(RetryWindow)
	if !now.Before(end) {
		return time.Time{}, false
	}
	d := Backoff(n)
	next := now.Add(d + time.Duration(float64(d)/4*j))
	if next.After(end) {
		next = end
	}
	return next, true
}

// ShouldDisable says whether an endpoint failing since since is disabled
// at now.
func ShouldDisable(since *time.Time, now time.Time) bool {
	return since != nil && !now.Before(since.Add(DisableAfter))
}

// Policy says which addresses an endpoint may reach.
type Policy struct {
	// AllowLoopback: 127.0.0.0/8 and ::1 (test endpoints).
	AllowLoopback bool
	// AllowPrivate: every address and plain http (the operator's
	// on-premises setting, --webhooks-allow-private).
	AllowPrivate bool
	// AllowHTTP: http as well as https.
	AllowHTTP bool
}

// PolicyFor is the policy of an endpoint in env: live endpoints reach only
// public addresses over https, test endpoints may also use http and
// loopback; allowPrivate (the operator's setting) lifts both.
func PolicyFor(env account.Environment, allowPrivate bool) Policy {
	return Policy{AllowLoopback: allowPrivate || env == account.Test, AllowPrivate: allowPrivate,
		AllowHTTP: allowPrivate || env == account.Test}
}

// AddrProblem says why p refuses addr, "" when it may be reached: a live
// endpoint reaches only globally reachable unicast addresses (NotGlobal:
// IANA's special-purpose registries, IPv4 embedded in IPv6 judged by the
// IPv4 address); a test endpoint also loopback (127.0.0.0/8, ::1 and
// ::ffff:127.0.0.0/104, not other embeddings of it); AllowPrivate lifts
// every rule.
func (p Policy) AddrProblem(addr netip.Addr) string {
	addr = addr.Unmap()
	switch {
	case p.AllowPrivate:
		return ""
	case addr.IsLoopback():
		if p.AllowLoopback {
			return ""
		}
		return "resolves to a loopback address"
	}
	if kind, why := NotGlobal(addr); kind != "" {
		article := "a"
		if strings.ContainsAny(kind[:1], "aeiou") {
			article = "an"
		}
		return fmt.Sprintf("resolves to %s %s address (%s)", article, kind, why)
	}
	return ""
}

// CheckURL checks an endpoint URL's text under p: absolute http(s) without
// user info or fragment, https unless p allows http, and a literal IP host
// allowed by p. It returns the parsed URL or why it is refused. Host names
// are resolved by the sender, at creation and at every connection.
func (p Policy) CheckURL(raw string) (*url.URL, string) {
	if raw == "" {
		return nil, "url is required"
	}
	if len(raw) > MaxURLLength {
		return nil, fmt.Sprintf("url is longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		return nil, "url must be an absolute http or https URL with a host"
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !p.AllowHTTP {
			return nil, "a live endpoint must use https"
		}
	default:
		return nil, "url must use https (or http for a test endpoint)"
	}
	if u.User != nil {
		return nil, "url must not contain user information"
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, "url must not contain a fragment"
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, "url has an invalid port"
		}
	}
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if msg := p.AddrProblem(a); msg != "" {
			return nil, "url " + msg
		}
	} else if h := strings.ToLower(u.Hostname()); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		if !p.AllowLoopback {
			return nil, "url resolves to a loopback address"
		}
	}
	return u, ""
}

// CheckTypes checks an endpoint's event types: at least one, each in the
// catalogue or Wildcard, none twice. It returns the problem, "" if none.
func CheckTypes(types []string) string {
	if len(types) == 0 {
		return "name at least one event type, or \"*\" for all"
	}
	seen := map[string]bool{}
	for _, t := range types {
		if t != Wildcard && !event.Known(event.Type(t)) {
			return fmt.Sprintf("unknown event type %q (see docs/events.md)", t)
		}
		if seen[t] {
			return fmt.Sprintf("event type %q given twice", t)
		}
		seen[t] = true
	}
	return ""
}
