package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/farebox/farebox/internal/app/fares"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/accounts"
	billingapp "github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/app/books"
	clearingapp "github.com/farebox/farebox/internal/app/clearing"
	"github.com/farebox/farebox/internal/app/console"
	"github.com/farebox/farebox/internal/app/devices"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/invoicedelivery"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/privacy"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/app/testclock"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/app/webhooks"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/ratelimit"
	"github.com/farebox/farebox/internal/web"
)

// Deps are what the server needs.
type Deps struct {
	App          *app.App
	Log          *slog.Logger
	Ledger       billingapp.Ledger // nil disables the usage ledger
	Metrics      *Metrics
	MaxBodyBytes int64
	// RequestTimeout bounds a request's context.
	RequestTimeout time.Duration
	// Ready reports whether the instance should receive traffic (besides the DB check).
	Ready func(ctx context.Context) error
	// MetricsElsewhere takes GET /metrics off the API listener (404): the
	// operator serves Metrics.Handler on a listener of its own
	// (--metrics-addr), out of the public's reach.
	MetricsElsewhere bool
	// RateLimits is the per-key limit; nil disables it.
	RateLimits *RateLimits
	// Keyless limits the requests without a key per capability and per
	// client address (keyless.go); nil disables it.
	Keyless *KeylessLimits
	// Limits is where the rate limits and the sign-in throttle keep their
	// state when every instance shares it (a ratelimit.Fallback in front
	// of Redis, --redis-url; docs/scaling.md); nil: in this process, each
	// instance on its own.
	Limits ratelimit.Store

	// Wallets signs inspection barcodes, builds wallet passes and publishes
	// the inspection keys (docs/wallet.md); nil: tickets without a barcode,
	// passes and keys answer 503.
	Wallets *wallets.Service

	// Products is the catalog: the product search, products and areas,
	// and the console's grants.
	Products *products.Service
	// Console is what the operator console lists and changes.
	Console *console.Service
	// Billing is the billing rule of the usage rows and the usage reports.
	Billing *billingapp.Service
	// Clearing is the national ticket's revenue clearing (docs/clearing.md):
	// the operator's reports, their verification and the console's map.
	Clearing *clearingapp.Service
	// WebUsers are the operator and the dashboard users, their sign-in and
	// sessions (docs/web.md).
	WebUsers *webusers.Service
	// Accounts resolves API keys and manages accounts and keys.
	Accounts *accounts.Service
	// Privacy exports and erases a partner's personal data (docs/privacy.md).
	Privacy *privacy.Service
	// Invoices is invoicing: customers, billable items, collections, the
	// documents issued for them and their downloads (docs/invoicing.md).
	Invoices *invoices.Service
	// Delivery is the delivery of documents to their buyers: the delivery
	// log and the resend (docs/invoicing.md, "Delivery to the buyer").
	Delivery *invoicedelivery.Service
	// Books are the audit log, the cancellation receipts and the checkpoints
	// of the books with their proofs (docs/books.md).
	Books *books.Books
	// TestClocks are the test clocks of the test environments
	// (docs/test-clocks.md).
	TestClocks *testclock.Service
	// Devices binds dynamic tickets to devices (docs/barcodes.md,
	// "Dynamic barcodes"); nil answers 503.
	Devices *devices.Service
	// Events lists the platform events (docs/events.md).
	Events *events.Service
	// Records are the inspectors and the inspection records their devices
	// post (docs/records.md); nil: the inspection records route answers 503.
	Records *records.Service
	// InspectMaxDataAge is how old the inspector app's cached keys,
	// revocation feed and blocklist may be before it refuses to say
	// "valid" (--inspect-max-data-age; 0: DefaultInspectMaxDataAge).
	InspectMaxDataAge time.Duration
	// InspectWindowTolerance is the clock difference between a traveller's
	// phone and the inspector app accepted on each side of a dynamic code's
	// window (--inspect-window-tolerance; 0: dynamic.DefaultTolerance's 30 s,
	// negative: none), handed over at sign-in.
	InspectWindowTolerance time.Duration
	// InspectorLimit is the rate limit per inspection device; nil:
	// DefaultInspectorLimit.
	InspectorLimit *RateLimits
	// Webhooks are the webhook endpoints and their delivery log
	// (docs/webhooks.md).
	Webhooks *webhooks.Service
	// Feeds are the stored GTFS feeds (the operator console lists them).
	Feeds *transit.Feeds
	// Transit serves departures, stations, trips and attributions (nil: 503).
	Transit *transit.Service
	// Fares publishes the catalog's fares for journey planners (NeTEx,
	// GTFS Fares v2; docs/fares.md).
	Fares *fares.Service
	// SessionKey signs session tokens; every instance must share it
	// (app.SessionKey). Empty: a random key for this process only.
	SessionKey []byte

	// Operator is the operator console's user and argon2id password hash
	// (--admin-password-file); nil: the console refuses every sign-in.
	Operator *webusers.OperatorCredentials
	// TrustedProxies are the peers whose X-Forwarded-Proto (and
	// X-Forwarded-For) the pages believe: cookies are Secure when the
	// browser reached the proxy over TLS (docs/web.md).
	TrustedProxies []netip.Prefix
	// PublicURL is the service's public base URL (--public-url). When it
	// is https, the browser always reaches the service over TLS (a proxy
	// terminates it): the pages' cookies are Secure and __Host- named and
	// every answer carries Strict-Transport-Security, with or without
	// --trusted-proxies (docs/web.md "Security choices").
	PublicURL string
	// WalletBadges are Apple's and Google's official add-to-wallet badges
	// per language (--wallet-badges, web.LoadBadges); without one the
	// traveller page shows farebox's own button.
	WalletBadges web.Badges

	// GzipCacheBytes bounds the cache of gzip-compressed departure boards
	// sent to clients that accept gzip (gzipcache.go): 0 means
	// DefaultGzipCacheBytes, a negative value turns compression off.
	GzipCacheBytes int64
}

// Server is the HTTP handler of farebox.
type Server struct {
	Deps
	app *app.App
	log *slog.Logger
	mux *http.ServeMux
	// owners caches the accounts owning capability records (attribution.go).
	owners ownerCache
	// sessions signs and checks session tokens with SessionKey (transit.go).
	sessions *app.Sessions
	// gz holds compressed copies of boards sent again and again (gzipcache.go; nil: off).
	gz *gzipCache[transit.BoardID]
	// csrfKey signs the pages' CSRF tokens (pages.go); signIns throttles
	// repeated console sign-in failures.
	csrfKey []byte
	signIns web.Throttle
	// perKey and keyless hold the rate limits' buckets (Deps.Limits or
	// in process).
	perKey  ratelimit.Store
	keyless keylessStores
	// inspectorLimit is Deps.InspectorLimit or its default.
	inspectorLimit *RateLimits
	// httpsPublic: PublicURL is https (pages.go secure).
	httpsPublic bool
}

// New builds the server and registers every route of routes.go.
func New(d Deps) *Server {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Metrics == nil {
		d.Metrics = NewMetrics()
	}
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = 1 << 20
	}
	if d.RequestTimeout <= 0 {
		d.RequestTimeout = 30 * time.Second
	}
	s := &Server{Deps: d, app: d.App, log: d.Log, mux: http.NewServeMux(), sessions: d.App.NewSessions(d.SessionKey),
		gz: newGzipCache[transit.BoardID](d.GzipCacheBytes)}
	s.csrfKey = csrfKeyOf(d.SessionKey)
	s.httpsPublic = strings.HasPrefix(strings.ToLower(strings.TrimSpace(d.PublicURL)), "https://")
	s.signIns = web.Throttle{Limit: signInFailures, Window: signInWindow, Store: d.Limits}
	s.perKey, s.keyless = d.Limits, d.Keyless.stores(d.Limits)
	if s.perKey == nil {
		s.perKey = &ratelimit.Local{Max: maxLimiters}
	}
	if s.inspectorLimit = d.InspectorLimit; s.inspectorLimit == nil {
		s.inspectorLimit = &DefaultInspectorLimit
	}
	rs := s.routes()
	for _, rt := range rs {
		if err := rt.check(); err != nil {
			panic("httpapi: " + err.Error())
		}
	}
	s.register(rs)
	return s
}

// muxPattern turns an OpenAPI path into a ServeMux pattern: a segment such
// as "{coupon_id}.json" becomes the wildcard "{coupon_id}" and the suffix is
// checked (and stripped) by dispatch.
func muxPattern(path string) (pattern string, suffixes map[string]string) {
	segs := strings.Split(path, "/")
	suffixes = map[string]string{}
	for i, seg := range segs {
		if strings.HasPrefix(seg, "{") {
			end := strings.IndexByte(seg, '}')
			name := seg[1:end]
			if rest := seg[end+1:]; rest != "" {
				suffixes[name] = rest
			}
			segs[i] = "{" + name + "}"
		}
	}
	return strings.Join(segs, "/"), suffixes
}

type variant struct {
	rt       route
	suffixes map[string]string
	h        http.HandlerFunc
}

// register installs the routes. Routes that differ only in a wildcard's
// suffix (…/{id} and …/{id}.json) share one mux pattern; dispatch picks the
// variant whose suffixes match, longest first.
func (s *Server) register(routes []route) {
	groups := map[string][]variant{}
	var order []string
	for _, rt := range routes {
		p, suf := muxPattern(rt.path)
		key := rt.method + " " + p
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], variant{rt: rt, suffixes: suf, h: s.wrap(rt)})
	}
	for _, key := range order {
		vs := groups[key]
		sort.SliceStable(vs, func(i, j int) bool { return suffixLen(vs[i]) > suffixLen(vs[j]) })
		s.mux.HandleFunc(key, func(w http.ResponseWriter, r *http.Request) {
			for _, v := range vs {
				if v.match(r) {
					v.h(w, r)
					return
				}
			}
			s.writeError(w, r, apperr.E("route", apperr.NotFound, CodeNotFound, "no such resource: "+r.URL.Path))
		})
	}
}

func suffixLen(v variant) int {
	n := 0
	for _, s := range v.suffixes {
		n += len(s)
	}
	return n
}

// match checks the wildcard suffixes and strips them from the path values.
func (v variant) match(r *http.Request) bool {
	vals := map[string]string{}
	for name, suf := range v.suffixes {
		val := r.PathValue(name)
		if !strings.HasSuffix(val, suf) || len(val) == len(suf) {
			return false
		}
		vals[name] = strings.TrimSuffix(val, suf)
	}
	for name, val := range vals {
		r.SetPathValue(name, val)
	}
	return true
}

// ServeHTTP runs the outer pipeline.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := &reqState{id: requestID(r), start: time.Now(), page: isPage(r.URL.Path)}
	ctx, cancel := context.WithTimeout(r.Context(), s.RequestTimeout)
	defer cancel()
	r = withState(ctx, r, st) // one copy of the request for both
	w.Header().Set("X-Request-Id", st.id)
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.LogAttrs(r.Context(), slog.LevelError, "panic", slog.String("request_id", st.id),
				slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
			if !sw.wrote {
				s.writeError(sw, r, apperr.E("panic", apperr.Internal, CodeInternalError, "internal error"))
			}
		}
		s.observe(r, st, sw)
	}()
	if s.secure(r) {
		sw.Header().Set("Strict-Transport-Security", hstsValue)
	}
	// The JSON API is called from any origin (the JS SDK); the HTML pages
	// are not: no CORS headers, and a preflight gets none either.
	if !st.page {
		cors(sw, r)
		if isPreflight(r) {
			sw.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(sw, r.Body, s.MaxBodyBytes)
	}
	if err := checkURLText(r); err != nil {
		s.writeError(sw, r, err)
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.unmatched(sw, r)
		return
	}
	s.mux.ServeHTTP(sw, r)
}

// checkURLText applies the one text rule of the edge to the URL, before any
// route sees it: a path (and so every path id) with NUL or bytes that are not
// UTF-8 names no resource (404); such a query parameter is a 404 when it is
// an id (id, …_id) and a 400 naming it otherwise. The database never sees
// the text (PostgreSQL refuses NUL with SQLSTATE 22021, SQLite would store it).
func checkURLText(r *http.Request) error {
	if !cleanText(r.URL.Path) {
		return apperr.E("route", apperr.NotFound, CodeNotFound, "no such resource: "+r.URL.EscapedPath())
	}
	raw := r.URL.RawQuery
	if !strings.Contains(raw, "%") && cleanText(raw) {
		return nil
	}
	if all, err := url.QueryUnescape(raw); err == nil && cleanText(all) {
		return nil // one decode of the whole query; the pairs only to name a culprit
	}
	for _, p := range transitQuery(raw) {
		for _, text := range []string{p.name, p.value} {
			if cleanText(text) {
				continue
			}
			if p.name == "id" || strings.HasSuffix(p.name, "_id") {
				return apperr.E("route", apperr.NotFound, CodeNotFound, "no such resource: the query parameter "+url.QueryEscape(p.name)+" names none")
			}
			name := url.QueryEscape(p.name)
			return apperr.Param("query", name, "the query parameter "+name+" must be valid UTF-8 without NUL characters")
		}
	}
	return nil
}

// cleanText reports whether s is valid UTF-8 without NUL, the rule every
// string of a request obeys.
func cleanText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// unmatched answers 404 or 405 (with Allow) as JSON.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	h, _ := s.mux.Handler(r)
	probe := &headerProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		s.writeError(w, r, apperr.E("route", apperr.MethodNotAllowed, CodeMethodNotAllowed,
			fmt.Sprintf("method %s is not allowed here; allowed: %s", r.Method, probe.header.Get("Allow"))))
		return
	}
	s.writeError(w, r, apperr.E("route", apperr.NotFound, CodeNotFound, "no such resource: "+r.URL.Path))
}

// headerProbe captures what the mux's own 404/405 handler would send.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) WriteHeader(s int)           { p.status = s }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }

// statusWriter remembers the status for logs and metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
	wrote  bool
}

func (w *statusWriter) WriteHeader(s int) {
	if !w.wrote {
		w.status, w.wrote = s, true
	}
	w.ResponseWriter.WriteHeader(s)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestID honours a sane X-Request-Id from the caller or makes one.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 128 && safeID(id) {
		return id
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func safeID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// observe writes the access log line and the request metrics.
func (s *Server) observe(r *http.Request, st *reqState, w *statusWriter) {
	d := time.Since(st.start)
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	route := st.route
	if route == "" {
		route = "unmatched"
	}
	s.Metrics.observe(route, status, d)
	attrs := []slog.Attr{
		slog.String("request_id", st.id), slog.String("method", r.Method), slog.String("route", route),
		slog.Int("status", status), slog.Int("bytes", w.bytes), slog.Duration("duration", d),
	}
	if st.principal != nil {
		attrs = append(attrs, slog.String("account_id", st.principal.AccountID), slog.String("key_id", st.principal.KeyID))
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
}

// hstsValue is the Strict-Transport-Security of every answer reached over
// TLS: one year, this host only (the operator's other hosts are not ours
// to decide).
const hstsValue = "max-age=31536000"

// cors lets browser clients call every endpoint and read the session token.
func cors(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "session-token, X-Request-Id, Idempotency-Replayed, Retry-After, RateLimit, RateLimit-Policy")
	if isPreflight(r) {
		h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Session-Token, Content-Type, Idempotency-Key, X-Request-Id, Accept")
		h.Set("Access-Control-Max-Age", "600")
	}
}

func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
}

// csrfKeyOf derives the CSRF signing key from the session key every
// instance shares (so a form rendered by one instance posts to another);
// without one, a random key for this process.
func csrfKeyOf(sessionKey []byte) []byte {
	if len(sessionKey) == 0 {
		k := make([]byte, 32)
		_, _ = rand.Read(k)
		return k
	}
	m := hmac.New(sha256.New, sessionKey)
	m.Write([]byte("farebox web csrf"))
	return m.Sum(nil)
}
