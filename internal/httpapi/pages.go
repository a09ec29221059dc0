package httpapi

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"html/template"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/console"
	"github.com/farebox/farebox/internal/app/wallets"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/web"
)

// The web pages (docs/web.md): the traveller page of a coupon and the
// operator console. Their rows are in routes.go like every route, so the
// pipeline authenticates, limits, bills and records them; what differs is
// that they answer HTML (errors too: writeError calls writePageError), and
// that every POST carries a CSRF token the pipeline checks before the
// handler runs (checkCSRF).

// Cookie base names (web.CookieName adds __Host- over TLS): one CSRF
// cookie, and a session cookie per area, so that signing in to the console
// does not sign the same browser out of the dashboard (sessionCookie).
const (
	csrfCookie      = "fbweb_csrf"
	consoleCookie   = "fbweb_session"
	dashboardCookie = "fbdash_session"
	dashboardPrefix = "/dashboard"
)

// sessionCookie is the base name of the session cookie of r's area: the
// partner dashboard's below /dashboard, the operator console's elsewhere.
func sessionCookie(r *http.Request) string {
	if r.URL.Path == dashboardPrefix || strings.HasPrefix(r.URL.Path, dashboardPrefix+"/") {
		return dashboardCookie
	}
	return consoleCookie
}

// isPage reports whether a route path is a web page rather than the JSON API.
func isPage(path string) bool {
	return strings.HasPrefix(path, "/c/") || path == "/admin" || strings.HasPrefix(path, "/admin/") ||
		path == "/dashboard" || strings.HasPrefix(path, "/dashboard/") || strings.HasPrefix(path, "/assets/") ||
		path == "/inspect" || strings.HasPrefix(path, "/inspect/")
}

// consoleDownload reports whether a console path is a download (below
// /admin/, ending in .json or .csv: the clearing's reports and
// verification). It is behind the console's session like the pages, but
// it is read by programs: its errors are JSON (a 401, not a redirect to the
// sign-in form), like the API's.
func consoleDownload(path string) bool {
	return strings.HasPrefix(path, "/admin/") && (strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".csv"))
}

// secure reports whether the browser reached us over TLS: directly, by the
// public URL (https: whatever terminates TLS in front of us, the browser
// used it), or through a trusted proxy that says so in X-Forwarded-Proto.
func (s *Server) secure(r *http.Request) bool {
	if r.TLS != nil || s.httpsPublic {
		return true
	}
	if len(s.TrustedProxies) == 0 || !strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https") {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && isTrusted(ap.Addr().Unmap(), s.TrustedProxies)
}

func cookieValue(r *http.Request, name string) string {
	if c, err := r.Cookie(name); err == nil {
		return c.Value
	}
	return ""
}

// csrfBinding is what a form's token is bound to: the visitor's CSRF
// cookie and, when signed in, the session id.
func (s *Server) csrfBinding(r *http.Request) string {
	sec := s.secure(r)
	c := cookieValue(r, web.CookieName(csrfCookie, sec))
	if c == "" {
		return ""
	}
	return c + "|" + cookieValue(r, web.CookieName(sessionCookie(r), sec))
}

// csrfToken returns the token for the page's forms, setting the CSRF
// cookie first when the visitor has none.
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	sec := s.secure(r)
	name := web.CookieName(csrfCookie, sec)
	if cookieValue(r, name) == "" {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		v := base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, web.NewCookie(csrfCookie, v, sec, 0))
		r.AddCookie(&http.Cookie{Name: name, Value: v}) // the binding below sees it
	}
	return web.CSRFToken(s.csrfKey, s.csrfBinding(r))
}

// checkCSRF refuses a page POST whose form lacks the token of the
// visitor's binding (403, nothing changed: it runs before the handler).
func (s *Server) checkCSRF(r *http.Request) error {
	const op = "csrf"
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		return apperr.E(op, apperr.UnsupportedMedia, CodeFormRequired, "a page form is posted as application/x-www-form-urlencoded")
	}
	if err := r.ParseForm(); err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return err
		}
		return apperr.E(op, apperr.Invalid, CodeFormRequired, "the form could not be read")
	}
	if !web.CSRFValid(s.csrfKey, s.csrfBinding(r), r.PostForm.Get(web.CSRFField)) {
		return apperr.E(op, apperr.Forbidden, CodeCSRFTokenInvalid, "the form's security token is missing or wrong; reload the page and try again")
	}
	// The text rule of the JSON bodies (json.go checkStrings): valid
	// UTF-8 (no surrogates) and no NUL, in every field name and value.
	for k, vs := range r.PostForm {
		for _, v := range append([]string{k}, vs...) {
			if !utf8.ValidString(v) {
				return badString(k, "must be valid UTF-8")
			}
			if strings.IndexByte(v, 0) >= 0 {
				return badString(k, "must not contain a NUL character")
			}
		}
	}
	return nil
}

// authOperatorSession resolves the console session of an authOperator row.
func (s *Server) authOperatorSession(r *http.Request) error {
	id := cookieValue(r, web.CookieName(sessionCookie(r), s.secure(r)))
	sess, err := s.WebUsers.OperatorSession(r.Context(), s.Operator, id)
	if apperr.KindOf(err) == apperr.NotFound {
		return apperr.E("auth", apperr.Unauthenticated, CodeSignInRequired, "sign in to the operator console first")
	}
	if err != nil {
		return err
	}
	state(r).operator = &sess
	return nil
}

// render writes page name with status in the visitor's language.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name, titleKey string, p web.Page) error {
	p.Lang = lang(r)
	if p.Title == "" { // a page naming its record sets its own title
		p.Title = web.T(p.Lang, titleKey)
	}
	p.CSRF = s.csrfToken(w, r)
	p.Now = s.app.Now()
	if op := state(r).operator; op != nil {
		p.Operator = op.Subject
	}
	if d := state(r).dashboard; d != nil {
		p.User = d.Subject
	}
	// A one-time notice (a new key or signing secret after a
	// POST-redirect-GET) is shown on the next page read, then gone.
	if sess := s.pageSession(r); r.Method == http.MethodGet && sess != nil && sess.Flash != "" && p.Notice == "" {
		notice, err := s.WebUsers.TakeWebFlash(r.Context(), cookieValue(r, web.CookieName(sessionCookie(r), s.secure(r))))
		if err != nil {
			return err
		}
		p.Notice = notice
	}
	var buf bytes.Buffer
	if err := web.Render(&buf, name, p); err != nil {
		return apperr.Wrap("render", err)
	}
	web.Headers(w.Header())
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// pageSession is the request's console or dashboard session (nil when
// none was resolved).
func (s *Server) pageSession(r *http.Request) *webusers.WebSession {
	if op := state(r).operator; op != nil {
		return op
	}
	return state(r).dashboard
}

// showOnce leaves notice (which holds a secret) for the page after the
// redirect and sends the browser there (303): the POST's answer holds no
// secret, a reload of the page shows it no more and creates nothing.
func (s *Server) showOnce(w http.ResponseWriter, r *http.Request, notice, location string) error {
	if err := s.WebUsers.SetWebFlash(r.Context(), cookieValue(r, web.CookieName(sessionCookie(r), s.secure(r))), notice); err != nil {
		return err
	}
	http.Redirect(w, r, location, http.StatusSeeOther)
	return nil
}

// writePageError answers a page's error as HTML; a console GET without a
// session goes to the sign-in form instead.
func (s *Server) writePageError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if status == http.StatusUnauthorized && r.Method == http.MethodGet {
		for _, area := range []string{"/admin", "/dashboard"} {
			if r.URL.Path == area || strings.HasPrefix(r.URL.Path, area+"/") {
				http.Redirect(w, r, area+"/sign-in", http.StatusSeeOther)
				return
			}
		}
	}
	// The statuses a visitor meets get a text in their language; the
	// others keep the error's own message.
	if key, ok := map[int]string{http.StatusUnauthorized: "error.signin", http.StatusForbidden: "error.csrf", http.StatusNotFound: "error.notfound",
		http.StatusTooManyRequests: "error.toomany", http.StatusServiceUnavailable: "error.unavailable"}[status]; ok {
		msg = web.T(lang(r), key)
	}
	if err := s.render(w, r, status, "error", "error.title", web.Page{Error: msg, Data: state(r).id}); err != nil {
		http.Error(w, msg, status)
	}
}

func (s *Server) webCSS(w http.ResponseWriter, r *http.Request) error {
	return writeAsset(w, "text/css; charset=utf-8", web.CSS())
}

// travellerScript is the traveller page's script (web.TravellerScript).
func (s *Server) travellerScript(w http.ResponseWriter, r *http.Request) error {
	return writeAsset(w, "text/javascript; charset=utf-8", web.TravellerScript())
}

// dashboardScript is the dashboard's script (web.DashboardScript).
func (s *Server) dashboardScript(w http.ResponseWriter, r *http.Request) error {
	return writeAsset(w, "text/javascript; charset=utf-8", web.DashboardScript())
}

// ticketWorker is the service worker keeping a shown ticket for offline
// use; it controls the traveller pages below web.TicketWorkerScope.
func (s *Server) ticketWorker(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Service-Worker-Allowed", web.TicketWorkerScope)
	return writeAsset(w, "text/javascript; charset=utf-8", web.TicketWorker())
}

// walletLink is the add-to-wallet link of kind to href: the operator's
// official badge of the page's language when there is one.
func (s *Server) walletLink(r *http.Request, kind, href string) walletLink {
	badge, _ := s.WalletBadges.Badge(kind, lang(r))
	return walletLink{ID: "wallet-" + kind, Href: href, Label: "coupon." + kind, Kind: kind, Badge: badge}
}

// writeAsset answers a static asset of the pages, cacheable for an hour.
func writeAsset(w http.ResponseWriter, contentType string, body []byte) error {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, err := w.Write(body)
	return err
}

// walletLink is an add-to-wallet button; Kind is apple or google. Badge
// is the platform's official badge the operator supplied (--wallet-badges)
// for the page's language, "" for farebox's own button.
type walletLink struct {
	ID, Href, Label, Kind string
	Badge                 template.URL
}

// couponView is the traveller page's data: the app's view, the wallet
// buttons for the visitor's platform (or why there are none), and after a
// refused post what was typed (Values, by form field) and each refused
// field's message (Problems, by form field; ProblemList in the form's
// order, for the summary above it).
type couponView struct {
	app.CouponPage
	Wallets     []walletLink
	WalletNote  string // a message key: why no wallet button is offered
	Values      map[string]string
	Problems    map[string]string
	ProblemList []formProblem
}

// formProblem is a refused field in the summary: its input's id, its
// label and the message.
type formProblem struct{ ID, Label, Message string }

func (s *Server) couponView(r *http.Request) (couponView, error) {
	p, err := s.app.CouponPage(r.Context(), s.Wallets.Offer, r.PathValue("coupon_id"))
	v := couponView{CouponPage: p}
	if err != nil || p.Ticket == nil {
		return v, err
	}
	if !p.Ticket.Valid {
		v.WalletNote = "coupon.wallet.invalid"
		return v, nil
	}
	apple, google := web.WalletButtons(web.PlatformOf(r.Header.Get("User-Agent")))
	if apple && p.Ticket.Apple {
		v.Wallets = append(v.Wallets, s.walletLink(r, "apple", "/v9/ticketing/passes/apple_wallet/"+p.Ticket.ID+".pkpass"))
	}
	if google && p.Ticket.Google {
		v.Wallets = append(v.Wallets, s.walletLink(r, "google", "/v9/ticketing/passes/google_wallet/"+p.Ticket.ID))
	}
	if len(v.Wallets) == 0 {
		v.WalletNote = "coupon.wallet.none"
	}
	return v, nil
}

// couponPage is GET /c/{coupon_id}: the coupon, its activation form or
// its ticket.
func (s *Server) couponPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.couponView(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "coupon", "coupon.title", travellerPage(r, v, ""))
}

// travellerPage is the traveller page's frame: the language switch, and
// the language kept in the forms' actions once chosen.
func travellerPage(r *http.Request, v couponView, msg string) web.Page {
	p := web.Page{Data: v, Error: msg, Path: r.URL.Path, Switch: true}
	if l := r.URL.Query().Get("lang"); l == "de" || l == "en" {
		p.Query = "?lang=" + l
	}
	return p
}

// couponActivate is POST /c/{coupon_id}: activation (or a subscription's
// renewal) from the page's form, then back to the page (303). A refused
// activation shows the page again with what was typed and the reason, at
// the refused fields when the app names them.
func (s *Server) couponActivate(w http.ResponseWriter, r *http.Request) error {
	res, err := s.app.ActivateFromPage(r.Context(), claimOf(r), r.PathValue("coupon_id"), r.PostForm)
	if err == nil {
		event := "coupon_activated"
		if r.PostForm.Get("renew") != "" {
			event = "subscription_reactivated"
		}
		s.Metrics.Event(event, res.Environment(), 1)
		http.Redirect(w, r, "/c/"+res.CouponID()+travellerPage(r, couponView{}, "").Query, http.StatusSeeOther)
		return nil
	}
	k := apperr.KindOf(err)
	if k != apperr.Invalid && k != apperr.Unprocessable && k != apperr.Conflict {
		return err
	}
	v, verr := s.couponView(r)
	if verr != nil {
		return verr
	}
	v.Values = map[string]string{}
	for key := range r.PostForm {
		if key != web.CSRFField {
			v.Values[key] = r.PostForm.Get(key)
		}
	}
	l, msg := lang(r), ""
	var problems app.FormProblems
	if errors.As(err, &problems) {
		v.Problems = map[string]string{}
		for _, p := range problems {
			m := fieldMessage(l, p)
			v.Problems[p.Input] = m
			v.ProblemList = append(v.ProblemList, formProblem{ID: inputID(p.Input), Label: fieldLabel(l, v.Form, p.Input), Message: m})
		}
	} else {
		msg = web.T(l, "coupon.err.other", apperr.As(err).Msg)
	}
	return s.render(w, r, statusOf(k), "coupon", "coupon.title", travellerPage(r, v, msg))
}

// fieldMessage is a refused field's message in the page's language: the
// field's own words for the reason when there are any (pattern.<field>,
// required.<field>), else the reason's.
func fieldMessage(l string, p app.FormProblem) string {
	_, field, _ := strings.Cut(p.Input, ".")
	if m, ok := web.Lookup(l, p.Reason+"."+field); ok {
		return m
	}
	return web.T(l, "coupon.err."+p.Reason)
}

// inputID is the page's id of a form field's input (coupon.html).
func inputID(input string) string {
	group, field, _ := strings.Cut(input, ".")
	if group == "tariff" {
		return "t-" + field
	}
	return "m-" + field
}

// fieldLabel is the label the page shows for a form field.
func fieldLabel(l string, f app.PageForm, input string) string {
	_, field, _ := strings.Cut(input, ".")
	if m, ok := web.Lookup(l, "field."+field); ok {
		return m
	}
	for _, x := range f.Tariff {
		if x.Name == field {
			return x.Title
		}
	}
	for _, x := range f.Medium {
		if x.Name == field {
			return x.Title
		}
	}
	return field
}

// couponTicket is GET /c/{coupon_id}/ticket: the rendering engine showing
// the coupon's newest ticket, framed by the page.
func (s *Server) couponTicket(w http.ResponseWriter, r *http.Request) error {
	doc, err := s.app.CouponTicketDocument(r.Context(), s.Wallets.Offer, r.PathValue("coupon_id"))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", wallets.EngineContentType)
	// The engine is one self-contained document with inline script and
	// style; it may be framed by our own page only.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'")
	h.Set("X-Frame-Options", "SAMEORIGIN")
	h.Set("X-Robots-Tag", web.RobotsTag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	_, err = w.Write(web.FramedTicket(doc))
	return err
}

// Operator console.

func (s *Server) adminHome(w http.ResponseWriter, r *http.Request) error {
	http.Redirect(w, r, "/admin/accounts", http.StatusSeeOther)
	return nil
}

func (s *Server) adminSignInForm(w http.ResponseWriter, r *http.Request) error {
	p := web.Page{}
	if s.Operator == nil {
		p.Error = web.T(lang(r), "signin.off")
	}
	return s.render(w, r, http.StatusOK, "signin", "signin.title", p)
}

// Sign-in throttling: after signInFailures failures within signInWindow
// from one client address or for one user name, further tries wait until
// the window has passed since the last failure.
const (
	signInFailures = 5
	signInWindow   = 15 * time.Minute
)

func (s *Server) adminSignIn(w http.ResponseWriter, r *http.Request) error {
	user, password := r.PostForm.Get("user"), r.PostForm.Get("password")
	return s.throttledSignIn(w, r, signInPage{
		keys:   []string{"client:" + clientKey(r, s.TrustedProxies), "user:" + user},
		page:   "signin",
		title:  "signin.title",
		failed: "signin.failed",
		home:   "/admin/accounts",
		user:   user,
	}, func() (string, error) {
		return s.WebUsers.OperatorSignIn(r.Context(), claimOf(r), s.Operator, user, password)
	})
}

// signInPage is what the console's and the dashboard's sign-in differ in.
type signInPage struct {
	keys                []string // the throttle's keys: the client address and the user
	page, title, failed string   // the form's template, its title and failure message keys
	home                string   // where a signed-in browser goes
	user                string   // the name or address typed, kept in the form after a failure
}

// throttledSignIn runs signIn unless one of the page's throttle keys is
// waiting (429 with Retry-After), counts an Unauthenticated answer as a
// failure of every key (401, the form again) and starts the session.
func (s *Server) throttledSignIn(w http.ResponseWriter, r *http.Request, p signInPage, signIn func() (string, error)) error {
	l := lang(r)
	now := s.app.Now()
	for _, k := range p.keys {
		if ok, wait := s.signIns.Allow(r.Context(), k, now); !ok {
			secs := int(wait.Seconds()) + 1
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			mins := max(1, (secs+30)/60) // in words a person uses: whole minutes
			return s.render(w, r, http.StatusTooManyRequests, p.page, p.title, web.Page{Error: web.T(l, "signin.throttled", mins), Data: p.user})
		}
	}
	id, err := signIn()
	if apperr.KindOf(err) == apperr.Unauthenticated {
		for _, k := range p.keys {
			s.signIns.Fail(r.Context(), k, now)
		}
		return s.render(w, r, http.StatusUnauthorized, p.page, p.title, web.Page{Error: web.T(l, p.failed), Data: p.user})
	}
	if err != nil {
		return err
	}
	for _, k := range p.keys {
		s.signIns.Succeed(r.Context(), k)
	}
	return s.startSession(w, r, id, p.home)
}

// startSession sets the web session cookie and sends the browser home.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, id, home string) error {
	http.SetCookie(w, web.NewCookie(sessionCookie(r), id, s.secure(r), int(webusers.WebSessionTTL.Seconds())))
	http.Redirect(w, r, home, http.StatusSeeOther)
	return nil
}

func (s *Server) adminSignOut(w http.ResponseWriter, r *http.Request) error {
	return s.signOut(w, r, "/admin/sign-in")
}

// signOut ends the request's web session (console or dashboard), clears its
// cookie and sends the browser to the sign-in page at signIn.
func (s *Server) signOut(w http.ResponseWriter, r *http.Request, signIn string) error {
	sec := s.secure(r)
	if err := s.WebUsers.SignOut(r.Context(), claimOf(r), cookieValue(r, web.CookieName(sessionCookie(r), sec))); err != nil {
		return err
	}
	http.SetCookie(w, web.NewCookie(sessionCookie(r), "", sec, -1))
	http.Redirect(w, r, signIn, http.StatusSeeOther)
	return nil
}

// accountsView is the accounts page's data.
type accountsView struct {
	Accounts   []console.AdminAccount
	Restricted []console.AdminProduct // the products a grant can name
}

func (s *Server) adminAccountsPage(w http.ResponseWriter, r *http.Request, status int, p web.Page) error {
	accs, err := s.Console.Accounts(r.Context())
	if err != nil {
		return err
	}
	v := accountsView{Accounts: accs}
	for _, pr := range s.Console.Catalog() {
		if pr.Restricted {
			v.Restricted = append(v.Restricted, pr)
		}
	}
	p.Nav, p.Data = "accounts", v
	return s.render(w, r, status, "admin_accounts", "admin.accounts", p)
}

func (s *Server) adminAccounts(w http.ResponseWriter, r *http.Request) error {
	return s.adminAccountsPage(w, r, http.StatusOK, web.Page{})
}

// adminResult shows the accounts page after an action: the notice on
// success, the reason (with its status) when the action was refused.
func (s *Server) adminResult(w http.ResponseWriter, r *http.Request, err error, notice string) error {
	if err == nil {
		return s.adminAccountsPage(w, r, http.StatusOK, web.Page{Notice: notice})
	}
	if ae := apperr.As(err); ae != nil && apperr.KindOf(err) != apperr.Internal && apperr.KindOf(err) != apperr.Unavailable {
		return s.adminAccountsPage(w, r, statusOf(apperr.KindOf(err)), web.Page{Error: ae.Msg})
	}
	return err
}

func (s *Server) adminCreateKey(w http.ResponseWriter, r *http.Request) error {
	lang := lang(r)
	env, err := app.ParseEnvironment(r.PostForm.Get("environment"))
	if err != nil {
		return s.adminResult(w, r, err, "")
	}
	k, err := s.Accounts.CreateKey(r.Context(), claimOf(r), r.PathValue("account_id"), env)
	if err != nil {
		return s.adminResult(w, r, err, "")
	}
	return s.showOnce(w, r, web.T(lang, "admin.key.created", string(env), k.Secret), "/admin/accounts")
}

func (s *Server) adminRevokeKey(w http.ResponseWriter, r *http.Request) error {
	// The form names the key's account too: a prefix never reaches past it.
	n, err := s.Accounts.RevokeKeysOf(r.Context(), claimOf(r), r.PostForm.Get("prefix"), r.PostForm.Get("account_id"))
	return s.adminResult(w, r, err, web.T(lang(r), "admin.key.done", n))
}

func (s *Server) adminGrant(w http.ResponseWriter, r *http.Request) error {
	id := r.PostForm.Get("product_id")
	err := s.Products.Grant(r.Context(), claimOf(r), r.PathValue("account_id"), id)
	return s.adminResult(w, r, err, web.T(lang(r), "admin.grant.done", id))
}

// adminRemoveUser removes a dashboard user of the account (the operator
// may remove the last one); the user's sessions end at once.
func (s *Server) adminRemoveUser(w http.ResponseWriter, r *http.Request) error {
	email := r.PostForm.Get("email")
	err := s.WebUsers.RemoveDashboardUser(r.Context(), claimOf(r), r.PathValue("account_id"), email)
	return s.adminResult(w, r, err, web.T(lang(r), "admin.users.removed", email))
}

func (s *Server) adminCatalog(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, "admin_catalog", "admin.catalog", web.Page{Nav: "catalog", Data: s.Console.Catalog()})
}

func (s *Server) adminFeeds(w http.ResponseWriter, r *http.Request) error {
	feeds, err := s.Feeds.Admin(r.Context(), s.Transit)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "admin_feeds", "admin.feeds", web.Page{Nav: "feeds", Data: feeds})
}

// jobsView is the job page's data.
type jobsView struct {
	State  string
	States []stateCount
	Jobs   []console.AdminJob
}

type stateCount struct {
	Name  string
	Count int
}

func (s *Server) adminJobsPage(w http.ResponseWriter, r *http.Request, state string, status int, p web.Page) error {
	list, counts, err := s.Console.Jobs(r.Context(), state)
	if err != nil {
		return err
	}
	v := jobsView{State: state, Jobs: list}
	for _, st := range []string{"ready", "running", "done", "dead"} {
		v.States = append(v.States, stateCount{st, counts[st]})
	}
	p.Nav, p.Data = "jobs", v
	return s.render(w, r, status, "admin_jobs", "admin.jobs", p)
}

func (s *Server) adminJobs(w http.ResponseWriter, r *http.Request) error {
	return s.adminJobsPage(w, r, r.URL.Query().Get("state"), http.StatusOK, web.Page{})
}

func (s *Server) adminRetryJob(w http.ResponseWriter, r *http.Request) error {
	id, err := s.Console.RetryDeadJob(r.Context(), claimOf(r), r.PathValue("job_id"))
	if err != nil {
		if k := apperr.KindOf(err); k == apperr.NotFound || k == apperr.Invalid {
			return s.adminJobsPage(w, r, "dead", statusOf(k), web.Page{Error: apperr.As(err).Msg})
		}
		return err
	}
	return s.adminJobsPage(w, r, "dead", http.StatusOK,
		web.Page{Notice: web.T(lang(r), "admin.jobs.retried", id)})
}

func (s *Server) adminInspectionKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.Wallets.InspectionKeySet()
	if err != nil && apperr.KindOf(err) != apperr.Unavailable {
		return err
	}
	return s.render(w, r, http.StatusOK, "admin_inspection", "admin.inspection", web.Page{Nav: "inspection", Data: keys})
}
