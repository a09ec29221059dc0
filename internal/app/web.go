package app

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/schema"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// The use cases of the web pages (docs/web.md): the traveller page of a
// coupon, the operator's sign-in and sessions, and what the operator
// console lists and changes.

// WebSessionTTL is how long a console session lasts after sign-in.
const WebSessionTTL = 12 * time.Hour

// OperatorCredentials are the operator's user name and argon2id password
// hash, read from --admin-password-file.
type OperatorCredentials struct {
	User string
	hash argon2Hash
	// fingerprint names the credential in the sessions it opens: a changed
	// password (or user) in the file makes the older sessions invalid.
	fingerprint string
}

// Fingerprint identifies the credential (user and password hash) without
// revealing it; a console session opened with another credential is not
// accepted (OperatorSession).
func (c *OperatorCredentials) Fingerprint() string {
	if c == nil {
		return ""
	}
	return c.fingerprint
}

type argon2Hash struct {
	memory  uint32
	time    uint32
	threads uint8
	salt    []byte
	key     []byte
}

// ParseOperatorCredentials reads "user:$argon2id$v=19$m=…,t=…,p=…$salt$key"
// (the PHC string farebox admin-hash writes; salt and key unpadded
// base64). A line without "user:" names the user "admin".
func ParseOperatorCredentials(text string) (*OperatorCredentials, error) {
	line := strings.TrimSpace(text)
	user, phc := "admin", line
	if i := strings.Index(line, ":$argon2id$"); i > 0 {
		user, phc = line[:i], line[i+1:]
	}
	h, err := parsePHC(phc)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte("farebox operator credential\x00" + user + "\x00" + phc))
	return &OperatorCredentials{User: user, hash: h, fingerprint: hex.EncodeToString(sum[:16])}, nil
}

// parsePHC reads an argon2id PHC string "$argon2id$v=19$m=…,t=…,p=…$salt$key".
func parsePHC(phc string) (argon2Hash, error) {
	var h argon2Hash
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != "v=19" {
		return h, fmt.Errorf("not an argon2id hash ($argon2id$v=19$m=…,t=…,p=…$salt$key)")
	}
	var p uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.memory, &h.time, &p); err != nil || p == 0 || p > 255 || h.time == 0 || h.memory < 8*p {
		return h, fmt.Errorf("argon2id parameters %q: want m=<KiB>,t=<passes>,p=<lanes>", parts[3])
	}
	h.threads = uint8(p)
	var err error
	if h.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(h.salt) < 8 {
		return h, fmt.Errorf("argon2id salt: unpadded base64 of at least 8 bytes")
	}
	if h.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(h.key) < 16 {
		return h, fmt.Errorf("argon2id key: unpadded base64 of at least 16 bytes")
	}
	return h, nil
}

// hashPassword is the argon2id PHC string of password with OWASP's
// parameters (HashOperatorPassword): the operator's and the dashboard
// users' passwords are hashed alike.
func hashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	const m, t, p = 19 * 1024, 2, 1
	key := argon2.IDKey([]byte(password), salt, t, m, p, 32)
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", m, t, p,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// matches checks password against h in constant time.
func (h argon2Hash) matches(password string) bool {
	key := argon2.IDKey([]byte(password), h.salt, h.time, h.memory, h.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(key, h.key) == 1
}

// HashOperatorPassword is the line of an --admin-password-file for user
// and password: argon2id with OWASP's parameters (19 MiB, 2 passes, 1
// lane): RFC 9106's 64 MiB took 1.25 s per check on a loaded two-core
// machine, a cost every sign-in attempt would put on the server.
func HashOperatorPassword(user, password string) (string, error) {
	if user == "" || strings.ContainsAny(user, ":\n") {
		return "", fmt.Errorf("the user name must be non-empty, without ':' or a line break")
	}
	phc, err := hashPassword(password)
	if err != nil {
		return "", err
	}
	return user + ":" + phc, nil
}

// verify checks user and password in constant time (the hash runs even for
// a wrong user name, so timing does not tell which was wrong).
func (c *OperatorCredentials) verify(user, password string) bool {
	okKey := c.hash.matches(password)
	okUser := subtle.ConstantTimeCompare([]byte(user), []byte(c.User)) == 1
	return okKey && okUser
}

// OperatorSignIn checks the operator's user name and password and opens a
// session; it returns the session id for the cookie. Wrong credentials are
// Unauthenticated; no credentials configured is Unavailable.
func (a *App) OperatorSignIn(ctx context.Context, c *OperatorCredentials, user, password string) (string, error) {
	const op = "app.OperatorSignIn"
	if c == nil {
		return "", apperr.E(op, apperr.Unavailable, CodeConsoleNotConfigured, "the operator console is not configured (--admin-password-file)")
	}
	if len(user) > 200 || len(password) > 1024 || !c.verify(user, password) {
		return "", apperr.E(op, apperr.Unauthenticated, CodeSignInFailed, "user name or password is wrong")
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", apperr.Wrap(op, err)
	}
	id := base64.RawURLEncoding.EncodeToString(raw)
	now := a.clock.Now()
	s := account.WebSession{IDHash: WebSessionHash(id), Kind: account.WebOperator, Subject: c.User, CreatedAt: now, ExpiresAt: now.Add(WebSessionTTL),
		Credential: c.Fingerprint()}
	return id, a.store.Write(ctx, func(q store.Q) error { return q.InsertWebSession(ctx, s) })
}

// OperatorSession returns the operator's live console session with id:
// NotFound unless it is a console session opened with the credential c
// now configured (a password changed in --admin-password-file ends every
// session opened with the old one, on every instance that reads the new
// file).
func (a *App) OperatorSession(ctx context.Context, c *OperatorCredentials, id string) (account.WebSession, error) {
	s, err := a.WebSession(ctx, id)
	if err != nil {
		return s, err
	}
	if c == nil || s.Kind != account.WebOperator || s.Subject != c.User ||
		subtle.ConstantTimeCompare([]byte(s.Credential), []byte(c.Fingerprint())) != 1 {
		return account.WebSession{}, apperr.NotFoundf("app.OperatorSession", CodeNotFound)
	}
	return s, nil
}

// flashKey is the key that seals a session's one-time notice: derived from
// the session id, which only the browser's cookie holds (the store keeps
// its hash), so the stored notice reveals nothing without the cookie.
func flashKey(sessionID string) []byte {
	m := hmac.New(sha256.New, []byte(sessionID))
	m.Write([]byte("farebox web flash"))
	return m.Sum(nil)
}

// SetWebFlash leaves notice for the session's next page (POST-redirect-GET:
// a new key or signing secret is shown once on the page after the
// redirect). The notice is sealed (AES-256-GCM) under flashKey.
func (a *App) SetWebFlash(ctx context.Context, sessionID, notice string) error {
	const op = "app.SetWebFlash"
	block, err := aes.NewCipher(flashKey(sessionID))
	if err != nil {
		return apperr.Wrap(op, err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return apperr.Wrap(op, err)
	}
	nonce := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(nonce)
	sealed := base64.RawStdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(notice), []byte(WebSessionHash(sessionID))))
	return a.store.Write(ctx, func(q store.Q) error {
		return q.SetWebSessionFlash(ctx, WebSessionHash(sessionID), sealed, a.clock.Now())
	})
}

// TakeWebFlash returns the session's one-time notice and clears it: the
// next page (a reload) shows it no more. "" when there is none.
func (a *App) TakeWebFlash(ctx context.Context, sessionID string) (string, error) {
	var sealed string
	err := a.store.Write(ctx, func(q store.Q) (err error) {
		sealed, err = q.TakeWebSessionFlash(ctx, WebSessionHash(sessionID))
		return
	})
	if err != nil || sealed == "" {
		return "", err
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	block, cerr := aes.NewCipher(flashKey(sessionID))
	if err != nil || cerr != nil {
		return "", nil // not ours to show
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil || len(raw) < gcm.NonceSize() {
		return "", nil
	}
	plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(WebSessionHash(sessionID)))
	if err != nil {
		return "", nil
	}
	return string(plain), nil
}

// WebSessionHash is what the store keeps of a session id.
func WebSessionHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// WebSession returns the live session with id (NotFound when unknown or
// expired).
func (a *App) WebSession(ctx context.Context, id string) (account.WebSession, error) {
	if id == "" || len(id) > 100 {
		return account.WebSession{}, apperr.NotFoundf("app.WebSession", CodeNotFound)
	}
	return a.store.Read().WebSession(ctx, WebSessionHash(id), a.clock.Now())
}

// SignOut ends the session with id.
func (a *App) SignOut(ctx context.Context, id string) error {
	return a.store.Write(ctx, func(q store.Q) error { return q.DeleteWebSession(ctx, WebSessionHash(id)) })
}

// CouponPage is what the traveller page of a coupon shows; its times are
// in the service's calendar zone (App.Loc), as travellers read them.
type CouponPage struct {
	CouponID    string
	ProductName string
	Validity    string // the product's local validity description
	AreaName    string
	Test        bool
	Activated   bool
	// Activatable: not activated and the activation window not over.
	Activatable      bool
	Earliest, Latest time.Time
	// Form holds the inputs built from the product's schemas.
	Form schema.Form
	// Ticket is the coupon's newest ticket (the current month's for a
	// subscription), nil before activation.
	Ticket *PageTicket
	// Renewable: a subscription's next cycle is ordered and can be
	// activated now (by the newest ticket's reactivation key).
	Renewable bool
}

// PageTicket is a ticket as the traveller page lists it.
type PageTicket struct {
	ID                    string
	ValidFrom, ValidUntil time.Time
	Valid                 bool
	// Apple and Google say which passes the server can build.
	Apple, Google bool
}

// CouponPage returns the traveller page's view of coupon id.
func (a *App) CouponPage(ctx context.Context, w *Wallets, id string) (CouponPage, error) {
	const op = "app.CouponPage"
	q := a.store.Read()
	d, err := a.Coupon(ctx, id)
	if err != nil {
		return CouponPage{}, err
	}
	now := a.clock.Now()
	p := CouponPage{CouponID: d.Coupon.ID, ProductName: d.Product.LocalTicketName, Validity: d.Product.LocalValidityDescription,
		AreaName: d.Area.Name, Test: d.Coupon.Environment == account.Test, Activated: d.Coupon.Activated,
		Earliest: d.Window.Earliest.In(a.Loc), Latest: d.Window.Latest.In(a.Loc)}
	p.Activatable = !d.Coupon.Activated && d.Coupon.RestoredCouponID == nil && !now.After(d.Window.Latest)
	if p.Form, err = schema.FormOf(d.Product.IdentificationMediumSchema, d.Product.TariffSettingsSchema); err != nil {
		return p, apperr.E(op, apperr.Internal, CodeCatalogInvalid, err.Error())
	}
	newest, err := newestTicket(ctx, q, id)
	if err != nil || newest == nil {
		return p, err
	}
	td, err := a.ticketDetails(ctx, q, *newest)
	if err != nil {
		return p, err
	}
	_, opts, err := w.Offer(td)
	if err != nil {
		return p, err
	}
	p.Ticket = &PageTicket{ID: newest.ID, ValidFrom: newest.ValidFrom.In(a.Loc), ValidUntil: newest.ValidUntil.In(a.Loc),
		Valid: td.Valid && newest.InvalidatedAt == nil && now.Before(newest.ValidUntil.Add(time.Second))}
	for _, o := range opts {
		p.Ticket.Apple = p.Ticket.Apple || o == "apple_wallet"
		p.Ticket.Google = p.Ticket.Google || o == "google_wallet"
	}
	p.Renewable = d.Subscription != nil && d.Subscription.View.CouponReactivatable && newest.ReactivationKey != nil
	return p, nil
}

// newestTicket is the coupon's ticket with the latest start (nil: none).
func newestTicket(ctx context.Context, q store.Q, couponID string) (*ticketing.Ticket, error) {
	ts, err := q.TicketsOfCoupon(ctx, couponID)
	if err != nil || len(ts) == 0 {
		return nil, err
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].ValidFrom.Before(ts[j].ValidFrom) })
	return &ts[len(ts)-1], nil
}

// ActivateFromPage activates coupon id with the traveller page's form:
// "option" names the identification option, "medium.<field>" its fields,
// "tariff.<field>" the tariff settings, "start" an optional start. With
// "renew" set it reactivates the subscription's next cycle with the newest
// ticket's reactivation key. The values are checked against the product's
// schemas exactly as the API's activation checks them.
func (a *App) ActivateFromPage(ctx context.Context, id string, form map[string][]string) (Activation, error) {
	const op = "app.ActivateFromPage"
	get := func(k string) string {
		if v := form[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	req := ActivationRequest{Version: 9}
	if get("renew") != "" {
		t, err := newestTicket(ctx, a.store.Read(), id)
		if err != nil {
			return Activation{}, err
		}
		if t == nil || t.ReactivationKey == nil {
			return Activation{}, apperr.E(op, apperr.Unprocessable, CodeNothingToRenew, "the coupon has no ticket to renew")
		}
		req.ReactivationKey = *t.ReactivationKey
		return a.ActivateCoupon(ctx, id, req)
	}
	d, err := a.Coupon(ctx, id)
	if err != nil {
		return Activation{}, err
	}
	f, err := schema.FormOf(d.Product.IdentificationMediumSchema, d.Product.TariffSettingsSchema)
	if err != nil {
		return Activation{}, apperr.E(op, apperr.Internal, CodeCatalogInvalid, err.Error())
	}
	option := get("option")
	if option == "" && len(f.Options) == 1 {
		option = f.Options[0].Name
	}
	for _, o := range f.Options {
		if o.Name != option {
			continue
		}
		fields := map[string]string{}
		for _, fl := range o.Fields {
			if v := get("medium." + fl.Name); v != "" {
				fields[fl.Name] = v
			}
		}
		if req.IdentificationMedium, err = json.Marshal(map[string]any{option: fields}); err != nil {
			return Activation{}, apperr.Wrap(op, err)
		}
	}
	if len(f.Options) > 0 && req.IdentificationMedium == nil {
		return Activation{}, apperr.Validation(op, CodeInvalidOption, "/identification_medium", "identification_medium: choose one of the offered options")
	}
	if len(f.Tariff) > 0 {
		ts := map[string]string{}
		for _, fl := range f.Tariff {
			if v := get("tariff." + fl.Name); v != "" {
				ts[fl.Name] = v
			}
		}
		if req.TariffSettings, err = json.Marshal(ts); err != nil {
			return Activation{}, apperr.Wrap(op, err)
		}
	}
	if s := get("start"); s != "" {
		// <input type="datetime-local"> sends local time without zone;
		// the service's calendar zone gives it one.
		t, err := time.ParseInLocation("2006-01-02T15:04", s, a.Loc)
		if err != nil {
			return Activation{}, apperr.Validation(op, CodeInvalidStart, "/activation_start_datetime", "activation_start_datetime: a date and time such as 2026-12-01T08:00")
		}
		req.ActivationStart = t.UTC().Format(time.RFC3339)
	}
	return a.ActivateCoupon(ctx, id, req)
}

// CouponTicketDocument is the rendering engine's document showing the
// coupon's newest ticket: the engine HTML with a last script that calls
// window.renderTicket with the ticket's JSON, as the SDKs do
// (client-contract.md 6.2).
func (a *App) CouponTicketDocument(ctx context.Context, w *Wallets, id string) ([]byte, error) {
	const op = "app.CouponTicketDocument"
	q := a.store.Read()
	if _, err := q.Coupon(ctx, id); err != nil {
		return nil, err
	}
	t, err := newestTicket(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, apperr.E(op, apperr.NotFound, CodeNotActivated, "the coupon has no ticket yet")
	}
	td, err := a.ticketDetails(ctx, q, *t)
	if err != nil {
		return nil, err
	}
	tj, err := w.TicketResponse(td)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(tj) // escapes <, > and &: safe inside <script>
	if err != nil {
		return nil, apperr.Wrap(op, err)
	}
	doc := engines.RenderingEngine().HTML
	call := []byte("<script>window.renderTicket(" + string(js) + ");</script>\n</body>")
	i := bytes.LastIndex(doc, []byte("</body>"))
	if i < 0 {
		return nil, apperr.E(op, apperr.Internal, CodeEngineNotFound, "the rendering engine has no </body>")
	}
	out := make([]byte, 0, len(doc)+len(call))
	out = append(append(append(out, doc[:i]...), call...), doc[i+len("</body>"):]...)
	return out, nil
}

// AdminAccount is an account with its keys and restricted-product grants.
type AdminAccount struct {
	account.Account
	Keys   []account.Key
	Grants []string
	// Users are the account's dashboard users.
	Users []account.DashboardUser
}

// AdminAccounts lists every account for the console.
func (a *App) AdminAccounts(ctx context.Context) ([]AdminAccount, error) {
	q := a.store.Read()
	accs, err := q.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]AdminAccount, 0, len(accs))
	for _, acc := range accs {
		x := AdminAccount{Account: acc}
		if x.Keys, err = q.Keys(ctx, acc.ID); err != nil {
			return nil, err
		}
		if x.Users, err = q.DashboardUsers(ctx, acc.ID); err != nil {
			return nil, err
		}
		g, err := q.Grants(ctx, acc.ID)
		if err != nil {
			return nil, err
		}
		for id := range g {
			x.Grants = append(x.Grants, id)
		}
		sort.Strings(x.Grants)
		out = append(out, x)
	}
	return out, nil
}

// AdminProduct is one catalog product as the console lists it.
type AdminProduct struct {
	ID, Name, Area, Type, Customer, Price string
	Subscription, Restricted              bool
}

// AdminCatalog lists the catalog's products by area and name.
func (a *App) AdminCatalog() []AdminProduct {
	f := a.Catalog().File()
	names := map[string]string{}
	for _, ar := range f.Areas {
		names[ar.ID] = ar.Name
	}
	out := make([]AdminProduct, 0, len(f.Products))
	for _, p := range f.Products {
		out = append(out, AdminProduct{ID: p.ID, Name: p.LocalTicketName, Area: names[p.AreaID], Type: p.TicketType,
			Customer: p.CustomerType, Price: p.PriceInCents.Decimal() + " " + p.Currency,
			Subscription: p.IsSubscription, Restricted: p.Restricted})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Area != out[j].Area {
			return out[i].Area < out[j].Area
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// AdminJobLimit is how many jobs the console lists.
const AdminJobLimit = 200

// AdminJobs lists the newest jobs in state ("" for all) and the count of
// jobs per state.
func (a *App) AdminJobs(ctx context.Context, state string) ([]jobs.Record, map[string]int, error) {
	switch state {
	case "", jobs.StateReady, jobs.StateRunning, jobs.StateDone, jobs.StateDead:
	default:
		return nil, nil, apperr.Validation("app.AdminJobs", CodeInvalidJobState, "state", "state: one of ready, running, done, dead")
	}
	q := a.store.Read()
	list, err := q.JobsInState(ctx, state, AdminJobLimit)
	if err != nil {
		return nil, nil, err
	}
	counts, err := q.JobStates(ctx)
	return list, counts, err
}

// RetryDeadJob makes the dead job id ready to run again now.
func (a *App) RetryDeadJob(ctx context.Context, id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, apperr.Validation("app.RetryDeadJob", CodeInvalidJobID, "job_id", "job_id: a positive integer")
	}
	err = a.store.Write(ctx, func(q store.Q) error { return q.RetryDeadJob(ctx, n, a.clock.Now()) })
	if err == nil && a.Jobs != nil {
		a.Jobs.Notify()
	}
	return n, err
}

// InspectionKeySet is the public inspection key set as indented JSON for
// the console ("" and Unavailable when no keyring is configured).
func (w *Wallets) InspectionKeySet() (string, error) {
	ks, err := w.InspectionKeys()
	if err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(ks, "", "  ")
	return string(b), err
}

// WebSession is a signed-in person on the web pages; WebOperator is the
// kind of the operator's sessions.
type WebSession = account.WebSession

const WebOperator = account.WebOperator

// WebDashboard is the kind of a partner dashboard user's sessions.
const WebDashboard = account.WebDashboard

// DashboardKey is an API key as the dashboard lists it.
type DashboardKey = account.Key

// ParseEnvironment reads "live" or "test".
func ParseEnvironment(s string) (Environment, error) {
	switch Environment(s) {
	case account.Live, account.Test:
		return Environment(s), nil
	}
	return "", apperr.Validation("app.ParseEnvironment", CodeInvalidEnvironment, "environment", "environment: live or test")
}
