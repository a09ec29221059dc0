// Package web is the HTML side of the transport: the embedded templates and
// stylesheet of the traveller page and the operator console (and, next,
// the partner dashboard), the language a visitor reads (Accept-Language:
// German or English), the visitor's platform (User-Agent: which wallet
// button to show), CSRF tokens, cookies and the throttle of repeated
// sign-in failures. It knows nothing of farebox's domain: the pages are
// handlers in internal/httpapi (pages.go), rows of the one route table,
// that fill these templates with what internal/app returns. docs/web.md.
package web

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/ratelimit"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed web.css
var css []byte

//go:embed traveller.js
var travellerJS []byte

//go:embed ticket-sw.js
var ticketSW []byte

//go:embed dashboard.js
var dashboardJS []byte

// The inspector app (docs/inspect.md): its scripts, service worker,
// manifest, icon and the ZXing decoder (Apache-2.0, inspect/zxing-LICENSE).
//
//go:embed inspect
var inspectFS embed.FS

// InspectAsset is the inspector app's file name (app.js, verify.js,
// sw.js, zxing.min.js, zxing-LICENSE, manifest.webmanifest, icon.svg) and
// its content type; false for any other name.
func InspectAsset(name string) ([]byte, string, bool) {
	types := map[string]string{"app.js": "text/javascript; charset=utf-8", "verify.js": "text/javascript; charset=utf-8",
		"sw.js": "text/javascript; charset=utf-8", "zxing.min.js": "text/javascript; charset=utf-8",
		"zxing-LICENSE": "text/plain; charset=utf-8", "manifest.webmanifest": "application/manifest+json",
		"icon.svg": "image/svg+xml"}
	ct, ok := types[name]
	if !ok {
		return nil, "", false
	}
	b, err := inspectFS.ReadFile("inspect/" + name)
	return b, ct, err == nil
}

// InspectTexts are the keys (after "inspect.") of the texts the inspector
// app's script shows: the verdicts and its messages.
var InspectTexts = []string{"v.valid", "v.not_yet_valid", "v.expired", "v.revoked", "v.replaced", "v.not_genuine", "v.copied",
	"v.test_ticket", "v.unreadable", "v.data_too_old", "age", "age.none", "age.stale", "signin.failed", "throttled", "offline", "camera.denied"}

// InspectPolicy is the inspector app page's Content-Security-Policy: the
// pages' policy, and its manifest and camera.
var InspectPolicy = ContentSecurityPolicy + "; manifest-src 'self'; media-src 'self' blob: mediastream:"

//go:embed ticket-frame.css
var ticketFrameCSS []byte

// FramedTicket is the rendering engine's document doc as the traveller
// page frames it: with ticket-frame.css (barcode first) as the last
// style of its head. A document without </head> is returned unchanged.
func FramedTicket(doc []byte) []byte {
	i := bytes.Index(doc, []byte("</head>"))
	if i < 0 {
		return doc
	}
	out := make([]byte, 0, len(doc)+len(ticketFrameCSS)+16)
	out = append(append(append(append(out, doc[:i]...), "<style>\n"...), ticketFrameCSS...), "</style>\n"...)
	return append(out, doc[i:]...)
}

// CSS is the one stylesheet of every page, served at CSSPath and written
// into every page (one request less on a slow phone network; the policy
// allows exactly this text by its hash).
func CSS() []byte { return css }

// CSSPath is where the stylesheet is served.
const CSSPath = "/assets/web.css"

// The traveller page's scripts (docs/web.md): the page works without
// them; with them it checks the form as the traveller types, sizes the
// ticket frame to the ticket and keeps the ticket for offline use
// through the service worker TicketWorkerPath, whose scope is /c/.
const (
	TravellerScriptPath = "/assets/traveller.js"
	TicketWorkerPath    = "/assets/ticket-sw.js"
	TicketWorkerScope   = "/c/"
)

// DashboardScriptPath is the partner dashboard's one script: the copy
// buttons (the pages work without it: the values stay selectable text).
const DashboardScriptPath = "/assets/dashboard.js"

// DashboardScript is its body.
func DashboardScript() []byte { return dashboardJS }

// TravellerScript and TicketWorker are the bodies of those two scripts.
func TravellerScript() []byte { return travellerJS }
func TicketWorker() []byte    { return ticketSW }

// ContentSecurityPolicy of every page: nothing but this origin, scripts
// only from files of this origin (none inline), the inline stylesheet by
// its hash, no framing by others.
var ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' '" + styleHash() +
	"'; img-src 'self' data:; connect-src 'self'; worker-src 'self'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'"

func styleHash() string {
	sum := sha256.Sum256(css)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// Page is what every template receives.
type Page struct {
	Lang  string // "de" or "en"
	Title string
	// CSRF is the token every form of the page carries (field CSRFField).
	CSRF string
	// Operator is the signed-in operator's name on console pages.
	Operator string
	// User is the signed-in dashboard user's e-mail address on dashboard
	// pages; Env the environment ("live" or "test") the page shows.
	User, Env string
	// Nav is the console's or dashboard's section to mark as current.
	Nav string
	// Error is a message shown above the content.
	Error string
	// Notice is a confirmation shown above the content.
	Notice string
	// Path is the page's path; Switch, when set, shows the language
	// switch (links to Path?lang=…) and Query is what the page's own
	// forms append to their action to keep a chosen language ("" or
	// "?lang=de").
	Path, Query string
	Switch      bool
	Data        any
	// Now is the service clock's time of the request: relative times
	// (ago) count from it.
	Now time.Time
}

// DashboardSections are the partner dashboard's pages below
// /dashboard/{env}/, in the navigation's order.
var DashboardSections = []string{"usage", "orders", "coupons", "tickets", "subscriptions", "invoices", "customers", "keys", "webhooks", "users"}

// CSRFField is the form field carrying the CSRF token.
const CSRFField = "csrf_token"

var pages = map[string]*template.Template{}

func init() {
	names, err := templateFS.ReadDir("templates")
	if err != nil {
		panic(err)
	}
	layout, err := templateFS.ReadFile("templates/layout.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		name := strings.TrimSuffix(n.Name(), ".html")
		if name == "layout" {
			continue
		}
		body, err := templateFS.ReadFile("templates/" + n.Name())
		if err != nil {
			panic(err)
		}
		t := template.New("layout").Funcs(funcs)
		template.Must(t.Parse(string(layout)))
		template.Must(t.Parse(string(body)))
		pages[name] = t
	}
}

var funcs = template.FuncMap{
	// t translates a message key into the page's language.
	"t": func(lang, key string, args ...any) string { return T(lang, key, args...) },
	// when writes a time (in its own zone, which app chose) in the page's
	// language, with the zone's abbreviation.
	"when": When,
	// ago writes a time relative to the page's Now in a <time> element
	// with the absolute time as its title.
	"ago": Ago,
	"day": func(lang string, t time.Time) string {
		if lang == "de" {
			return t.Format("02.01.2006")
		}
		return t.Format("2 Jan 2006")
	},
	"csrf": func() string { return CSRFField },
	"num":  Number,
	"add":  func(a, b int64) int64 { return a + b },
	"list": func(xs ...any) []any { return xs },
	// month is a month's name and year in the page's language.
	"month": func(lang string, t time.Time) string {
		if lang == "de" {
			return germanMonths[t.Month()-1] + " " + strconv.Itoa(t.Year())
		}
		return t.Format("January 2006")
	},
	"assets": func() map[string]string {
		return map[string]string{"worker": TicketWorkerPath, "scope": TicketWorkerScope, "script": TravellerScriptPath}
	},
	"dashScript": func() string { return DashboardScriptPath },
	// inspectTexts are the inspector app's texts its script shows
	// (keys "inspect.<k>").
	"inspectTexts": func() []string { return InspectTexts },
	// css is the stylesheet, written inline (its hash is in the policy).
	"css": func() template.CSS { return template.CSS(css) },
	// label is the page's words for a schema's key (key prefix+name, such
	// as field.first_name), else the schema's own title.
	"label": func(lang, prefix, name, title string) string {
		if m, ok := Lookup(lang, prefix+name); ok {
			return m
		}
		return title
	},
	"has":  slices.Contains[[]string],
	"join": strings.Join,
	"dec":  func(n int) int { return n - 1 },
	// dashSections are the dashboard's pages, in the navigation's order.
	"dashSections": func() []string { return DashboardSections },
	// levels are the colour classes of the clearing map's legend.
	"levels": func() []int { return []int{0, 1, 2, 3, 4} },
}

// Number writes n with the page language's thousands separator.
func Number(lang string, n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	sep := ","
	if lang == "de" {
		sep = "."
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ShortDay writes a date (YYYY-MM-DD) as a chart's axis names it: 29.11.
// or 29 Nov; anything else unchanged.
func ShortDay(lang, day string) string { return dayIn(lang, day, "02.01.", "2 Jan") }

// Day writes a date (YYYY-MM-DD) in full in the page's language:
// 29.11.2026 or 29 Nov 2026; anything else unchanged.
func Day(lang, day string) string { return dayIn(lang, day, "02.01.2006", "2 Jan 2006") }

// dayIn writes day with the German or the English layout.
func dayIn(lang, day, de, en string) string {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return day
	}
	if lang == "de" {
		return t.Format(de)
	}
	return t.Format(en)
}

var germanMonths = [12]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}

// When writes a time (in its own zone, which app chose) in the page's
// language, with the zone's abbreviation.
func When(lang string, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	if lang == "de" {
		return t.Format("02.01.2006 15:04 MST")
	}
	return t.Format("2 Jan 2006 15:04 MST")
}

// Render writes the page template name filled with p.
func Render(w io.Writer, name string, p Page) error {
	t, ok := pages[name]
	if !ok {
		return fmt.Errorf("web: no page %q", name)
	}
	if p.Lang == "" {
		p.Lang = "en"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// RobotsTag keeps every page out of search engines (X-Robots-Tag and the
// layout's meta robots): a traveller page shows a name and a birth date,
// the console and the dashboard are nobody's business.
const RobotsTag = "noindex, nofollow, noarchive"

// Headers sets the headers every page carries.
func Headers(h http.Header) {
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Robots-Tag", RobotsTag)
	h.Add("Vary", "Accept-Language, User-Agent, Cookie")
}

// Language picks "de" or "en": the visitor's choice (the page's language
// switch) when it names one, else from an Accept-Language header by
// quality (RFC 9110 12.5.4); English when neither is asked for.
func Language(choice, accept string) string {
	if choice == "de" || choice == "en" {
		return choice
	}
	best, bestQ := "en", -1.0
	for _, part := range strings.Split(accept, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			q = f
		}
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if primary != "de" && primary != "en" || q <= 0 {
			continue
		}
		if q > bestQ { // equal qualities: the earlier tag wins
			best, bestQ = primary, q
		}
	}
	return best
}

// Platform is the visitor's device family, as far as the User-Agent says.
type Platform string

const (
	IOS     Platform = "ios"
	Android Platform = "android"
	Desktop Platform = "desktop" // anything else
)

// PlatformOf classifies a User-Agent. iPadOS 13+ Safari presents itself as
// a Mac ("Macintosh"), so an iPad is Desktop here and is offered both
// buttons, like a Mac (docs/web.md).
func PlatformOf(ua string) Platform {
	switch {
	case strings.Contains(ua, "Android"):
		return Android
	case strings.Contains(ua, "iPhone"), strings.Contains(ua, "iPad"), strings.Contains(ua, "iPod"):
		return IOS
	}
	return Desktop
}

// WalletButtons says which add-to-wallet buttons a platform may see: never
// the Apple button on Android, never the Google button on iOS (interface
// §4); a desktop browser sees both, since neither platform rule applies
// and the pass may be meant for either phone.
func WalletButtons(p Platform) (apple, google bool) {
	switch p {
	case IOS:
		return true, false
	case Android:
		return false, true
	}
	return true, true
}

// CSRFToken is the token of a form: an HMAC of the visitor's binding (the
// CSRF cookie, and the session id once signed in) under key. A forged
// cross-site post knows neither the cookie (HttpOnly, SameSite) nor the key.
func CSRFToken(key []byte, binding string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("farebox-csrf\x00" + binding))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CSRFValid compares a submitted token with the expected one in constant time.
func CSRFValid(key []byte, binding, token string) bool {
	if binding == "" || token == "" {
		return false
	}
	return hmac.Equal([]byte(CSRFToken(key, binding)), []byte(token))
}

// Cookie names: the __Host- prefix (browser-enforced Secure, host-only,
// path /) when the request came over TLS; plain names on http (local
// development), where browsers refuse __Host- cookies.
func CookieName(base string, secure bool) string {
	if secure {
		return "__Host-" + base
	}
	return base
}

// NewCookie is an HttpOnly, SameSite=Strict cookie for the whole site;
// Secure when secure. maxAge < 0 deletes it.
func NewCookie(base, value string, secure bool, maxAge int) *http.Cookie {
	return &http.Cookie{Name: CookieName(base, secure), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode}
}

// Throttle counts failures per key (a client address, a user name) and
// refuses further tries once Limit failures fell within Window, until the
// window has passed since the last failure. A success clears the key.
// The counts live in Store: shared by every instance (Redis), so a lock
// holds on the next instance and after a restart; nil keeps them in this
// process (at most 100,000 keys, those whose window has passed dropped
// first).
type Throttle struct {
	Limit  int
	Window time.Duration
	Store  ratelimit.Store

	once  sync.Once
	local ratelimit.Local
}

func (t *Throttle) store() ratelimit.Store {
	if t.Store != nil {
		return t.Store
	}
	t.once.Do(func() { t.local.Max = 100_000 })
	return &t.local
}

// Allow reports whether key may try now, and if not for how long it
// waits. A store that cannot answer (one without a fallback) refuses
// nothing.
func (t *Throttle) Allow(ctx context.Context, key string, now time.Time) (bool, time.Duration) {
	f, err := t.store().Failures(ctx, key, t.Window, now)
	if err != nil || f.N < t.Limit {
		return true, 0
	}
	return false, t.Window - now.Sub(f.Last)
}

// Fail records a failure of key.
func (t *Throttle) Fail(ctx context.Context, key string, now time.Time) {
	_ = t.store().Fail(ctx, key, t.Window, now)
}

// Succeed clears key.
func (t *Throttle) Succeed(ctx context.Context, key string) {
	_ = t.store().Forget(ctx, key)
}
