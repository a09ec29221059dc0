// Package wallets is the wallets and passes capability (docs/wallet.md):
// a ticket's signed inspection barcode and its rendering options (Offer),
// the Apple Wallet pass and Apple's PassKit web service, the Google Wallet
// save link, the pass-update jobs (Apple pushes, Google object patches),
// the published inspection key set and the signed revocation feed, the HTML
// engines. The keyring it signs with is the instance's (reloaded while it
// runs); managing the stored keys is package inspection's. What it needs of
// a ticket comes as passes.TicketDetails, read through a function the
// wiring hands it (App.Ticket); the catalog likewise. It reaches the
// database only through Queries.
package wallets

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
	"github.com/farebox/farebox/internal/barcode/uic"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/wallet"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/google"
)

// Queries are the store methods the wallets use (store.Q implements
// them; the wiring passes store.NewView[Queries]).
type Queries interface {
	// Apple's web service (applewebservice.go).
	ApplePass(ctx context.Context, serial string) (wallet.ApplePassRecord, bool, error)
	EnsureApplePass(ctx context.Context, rec wallet.ApplePassRecord, at time.Time) (wallet.ApplePassRecord, error)
	RegisterAppleDevice(ctx context.Context, device, serial, pushToken string, at time.Time) (bool, error)
	UnregisterAppleDevice(ctx context.Context, device, serial string) (bool, error)
	ApplePassLastTag(ctx context.Context) (int64, error)
	AppleDevicePasses(ctx context.Context, device string) (map[string]int64, error)
	TicketsOfCoupon(ctx context.Context, couponID string) ([]ticketing.Ticket, error)
	Coupon(ctx context.Context, id string) (ticketing.Coupon, error)
	TestClockTime(ctx context.Context, id string) (time.Time, error)
	// The Apple pass-update job (passupdates.go).
	MarkTicketsApplePassesUpdated(ctx context.Context, ticketIDs []string, at time.Time) (map[string][]string, error)
	DeleteApplePushToken(ctx context.Context, token string) (int64, error)
	CompleteJobs(ctx context.Context, ids []int64, worker string, at time.Time) error
	// The revocation feed (revocations.go).
	Revocations(ctx context.Context, since int64, now time.Time) ([]ticketing.Revocation, int64, error)
	// The exported blocklist (blocklist.go).
	BlocklistRevocations(ctx context.Context, since int64, limit int, now time.Time) ([]ticketing.RevokedTicket, int64, error)
	BlocklistDeviceMoves(ctx context.Context, since, upTo int64, limit int, now time.Time) ([]ticketing.DeviceMove, error)
	// The VDV ticket numbers (BackfillVDVNumbers).
	UnnumberedVDVTickets(ctx context.Context, products []string, now time.Time, limit int) ([]string, error)
	SetVDVNumbers(ctx context.Context, numbers map[string]uint32) error
}

// DB is the database as the wallets see it (store.View).
type DB = kit.DB[Queries]

// TicketFunc reads a ticket with its coupon and catalog entries by id
// (App.Ticket).
type TicketFunc func(ctx context.Context, id string) (passes.TicketDetails, error)

// Service wires tickets to the inspection barcode, the wallet passes and
// the HTML engines (docs/wallet.md). The barcode is signed when a ticket is
// read: Ed25519 signatures are deterministic, so the same ticket always
// yields the same payload and nothing needs storing. A nil *Service is a
// service without keys or wallets: tickets carry no barcode and passes
// answer wallet_not_configured.
type Service struct {
	kit.Base[DB]
	o      Options
	ticket TicketFunc
	// barcodes caches ticket.properties barcode entries by payload.
	barcodes barcodeCache
	// brand is ticket.properties.brand (engines.BrandProperty), built once.
	brand map[string]any
	// inspection is the current keyring (o.Inspection at first; replaced
	// by SetInspectionKeys when the keys change: rotation, revocation).
	inspection atomic.Pointer[barcode.Keyring]
	// googleClass is set once the TransitClass exists at Google.
	googleClass atomic.Bool
}

// Options configure New.
type Options struct {
	// Inspection signs the barcode in ticket.properties and is published at
	// /v1/inspection/keys.json; nil leaves tickets without a barcode.
	Inspection *barcode.Keyring
	// Apple builds .pkpass files; nil answers 503.
	Apple *apple.Builder
	// Google mints save links; nil answers 503.
	Google *google.Issuer
	// GoogleAPI, with Google, keeps saved objects current through the
	// Google Wallet REST API (googleupdates.go) and makes save links short:
	// class and object are inserted first and the JWT names only their
	// ids. nil: save links carry the whole object and nothing is updated.
	GoogleAPI *google.Client
	// AdvertiseDevelopmentWallets lists a wallet in
	// available_rendering_options even when its credentials are
	// self-generated (tests, demo apps). Never on a service real phones use:
	// iOS crashes on a pass it cannot install.
	AdvertiseDevelopmentWallets bool
	// Brand names, colours and images of passes and the rendering engine
	// (wallet.LoadBrand); the zero Brand is the development brand.
	Brand wallet.Brand
	// AppleWebServiceURL is the webServiceURL of Apple passes (the public
	// base URL + "/wallet/apple"); "" builds static passes without
	// webServiceURL and authenticationToken (docs/wallet.md, "Apple Wallet
	// updates").
	AppleWebServiceURL string
	// Log receives the messages devices send to the web service's log.
	Log *slog.Logger
	// UIC returns the issuer that signs the barcodes of products with the
	// uic-918-3-uflex profile (docs/barcodes.md); nil makes a development
	// issuer on first use, kept in memory (its barcodes are specimens).
	UIC func() (*uic.Issuer, error)
	// VDV returns the issuer that signs the barcodes of products with the
	// vdv-ka-static profile; nil makes a development PKI on first use, kept
	// in memory (its barcodes say test).
	VDV func() (*vdv.Issuer, error)
	// Pusher sends the Apple pass-update pushes (apple.APNs); nil only
	// tags the passes as updated, so a device sees the change when it next
	// asks on its own.
	Pusher PassPusher
	// DynamicWindow is the time window of the barcodes of dynamic tickets
	// (inspection_profile dynamic; docs/barcodes.md): 1..255 s, default
	// dynamic.DefaultWindow (30 s).
	DynamicWindow time.Duration
	// PublicURL is the service's public base URL: the rendering engine
	// binds a dynamic ticket at PublicURL + the path in
	// ticket.properties.device_binding ("" gives the path alone, which the
	// engine resolves against its own location).
	PublicURL string
}

// New returns the wallets of o over db; c is the service clock (nil: the
// system clock), ticket reads a ticket (App.Ticket).
func New(db DB, c clock.Clock, ticket TicketFunc, o Options) *Service {
	if o.Brand.Organization == "" {
		o.Brand = wallet.DevelopmentBrand()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var logo []byte
	if o.Brand.Logo != nil {
		// The engine's logo: Apple's logo@2x, 100 pixels high.
		if imgs, err := apple.PassImages(o.Brand); err == nil {
			logo = imgs["logo@2x.png"]
		}
	}
	if o.UIC == nil {
		o.UIC = sync.OnceValues(func() (*uic.Issuer, error) { return uic.GenerateDevIssuer(1, nil) })
	}
	w := &Service{Base: kit.NewBase(db, c, ""), ticket: ticket}
	if o.VDV == nil {
		o.VDV = sync.OnceValues(func() (*vdv.Issuer, error) {
			p, err := vdv.GenerateDevPKI(nil, w.Clock.Now())
			if err != nil {
				return nil, err
			}
			return p.Issuer, nil
		})
	}
	if o.DynamicWindow <= 0 {
		o.DynamicWindow = dynamic.DefaultWindow
	}
	w.o, w.brand = o, engines.BrandProperty(o.Brand, logo)
	w.inspection.Store(o.Inspection)
	return w
}

// keyring is the current inspection keyring (nil: none configured).
func (w *Service) keyring() *barcode.Keyring {
	if w == nil {
		return nil
	}
	return w.inspection.Load()
}

// feedKeyring is the keyring that signs a feed read after since (the
// revocation feed, the blocklist): 503 without inspection keys, 400 for a
// negative since.
func (w *Service) feedKeyring(op string, since int64) (*barcode.Keyring, error) {
	kr := w.keyring()
	if kr == nil {
		return nil, apperr.E(op, apperr.Unavailable, CodeInspectionKeysNotConfigured, "no inspection keys are configured")
	}
	if since < 0 {
		return nil, apperr.Param("query", "since", "since must be a feed sequence number (0 or more)")
	}
	return kr, nil
}

// SetInspectionKeys replaces the inspection keyring, e.g. after `farebox
// keys rotate` or `keys revoke` changed the stored keys (serve reloads
// them every few seconds). nil is ignored.
func (w *Service) SetInspectionKeys(kr *barcode.Keyring) {
	if w != nil && kr != nil {
		w.inspection.Store(kr)
	}
}

// signBarcode encodes and signs v's claims in the barcode profile of d's
// product: farebox's Ed25519 payload, a UIC 918.3 container or a VDV-KA
// static barcode.
func (w *Service) signBarcode(d passes.TicketDetails, v wallet.TicketView, kr *barcode.Keyring) ([]byte, error) {
	profile := catalog.BarcodeFarebox
	if d.Product != nil {
		profile = d.Product.Barcode()
	}
	if profile != catalog.BarcodeUIC && profile != catalog.BarcodeVDV {
		// The ticket's own key while the keyring holds it (rotation keeps
		// barcodes already on phones); unstamped, the key that signed when
		// it was issued (a key published ahead does not re-sign tickets
		// issued before it starts), else the active one.
		kid := d.Ticket.InspectionKeyID
		if kid == 0 {
			if k, ok := kr.SignerAt(v.Claims().Environment, d.Ticket.CreatedAt); ok {
				kid = k.ID
			}
		}
		b, _, err := barcode.SignWith(v.Claims(), kr, kid)
		return b, err
	}
	// Issued when the ticket was made, the real time, also when its
	// validity started earlier (a monthly ticket bought on the 28th is valid
	// from the 1st): an inspector must see a late purchase (issue 28).
	issued := d.Ticket.CreatedAt
	if issued.IsZero() {
		issued = v.ValidFrom
	}
	area := ""
	if d.Area != nil {
		area = d.Area.LocalZoneName
	}
	if profile == catalog.BarcodeVDV {
		iss, err := w.o.VDV()
		if err != nil {
			return nil, err
		}
		return vdv.Issue(v.Claims(), vdv.Product{Number: d.Product.BarcodeProductNumber, Area: area,
			PriceCents: int64(d.Product.PriceInCents), VATBP: int(d.Product.VATRateBP), TicketNumber: d.Ticket.VDVNumber}, iss, issued)
	}
	iss, err := w.o.UIC()
	if err != nil {
		return nil, err
	}
	return uic.Issue(v.Claims(), uic.Product{Number: d.Product.BarcodeProductNumber, Area: area}, iss, issued)
}

// options are w's settings (none for a nil w).
func (w *Service) options() Options {
	if w == nil {
		return Options{}
	}
	return w.o
}

// walletView copies a ticket into the pass model; the barcode is added by
// Offer.
func walletView(d passes.TicketDetails) wallet.TicketView {
	t := d.Ticket
	p := wallet.PassengerFromIdentificationMedium(t.IdentificationMedium)
	if _, err := time.Parse("2006-01-02", p.BirthDate); err != nil {
		p.BirthDate = "" // the payload carries a real date or none
	}
	// Passenger names are carried whole: activation refuses names longer
	// than a payload carries (checkNameLengths).
	v := wallet.TicketView{TicketID: t.ID, ProductID: t.ProductID, ProductName: fit(d.Product.LocalTicketName),
		ValidityDescription: d.Product.LocalValidityDescription, ZoneName: d.Area.LocalZoneName,
		ValidFrom: t.ValidFrom, ValidUntil: t.ValidUntil, Passenger: p, Environment: string(t.Environment),
		Voided: !d.Valid, Replaced: !d.Valid && passes.RevocationKind(d.Ticket) == ticketing.RevocationRestored}
	if len(d.Area.CityNames) > 0 {
		v.CityName = d.Area.CityNames[0]
	}
	return v
}

// fit cuts a product name (operator data from the catalog) to the bytes a
// payload text may hold, on a rune boundary.
func fit(s string) string {
	const max = barcode.MaxTextBytes
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Offer is what a ticket offers: the ticket.properties entries carrying its
// signed barcode (when an inspection keyring is configured) and the brand,
// its available_rendering_options and the wallets withheld from it.
func (w *Service) Offer(d passes.TicketDetails) (passes.Offer, error) {
	v, props, options, err := w.offer(d)
	if err != nil {
		return passes.Offer{}, err
	}
	return passes.Offer{Properties: props, Options: options, Unavailable: w.unavailableOptions(d), WindowSeconds: v.WindowSeconds}, nil
}

// offer is Offer with the pass model it signed.
func (w *Service) offer(d passes.TicketDetails) (v wallet.TicketView, props map[string]any, options []string, err error) {
	v = w.dynamicView(walletView(d), d)
	options = []string{}
	if kr := w.keyring(); kr != nil {
		if v.Barcode, err = w.signBarcode(d, v, kr); err != nil {
			return v, nil, nil, err
		}
		if props, err = w.barcodes.properties(v.Barcode); err != nil {
			return v, nil, nil, err
		}
	}
	if w != nil {
		merged := make(map[string]any, len(props)+1)
		for k, val := range props {
			merged[k] = val // props may be the shared cache entry: never written
		}
		merged[engines.PropBrand] = w.brand
		if v.WindowSeconds > 0 && d.Valid {
			merged[engines.PropDeviceBinding] = engines.DeviceBindingProperty(w.o.PublicURL, d.Ticket.ID, v.WindowSeconds, v.DeviceKey != nil)
		}
		props = merged
	}
	// A restored-away ticket's pass is served voided, but not offered anew.
	if d.Valid {
		av := w.availability()
		av.Google = av.Google && passes.GoogleCarries(d.Product)
		options = wallet.RenderingOptions(v, av)
	}
	return v, props, options, nil
}

// dynamicView marks v as a dynamic ticket when d's product says so: the
// window length and the bound device's key go into its payload.
func (w *Service) dynamicView(v wallet.TicketView, d passes.TicketDetails) wallet.TicketView {
	if w == nil || !d.Product.Dynamic() {
		return v
	}
	v.WindowSeconds = int(w.o.DynamicWindow / time.Second)
	if d.Ticket.DeviceKey != "" {
		if k, err := base64.RawURLEncoding.DecodeString(d.Ticket.DeviceKey); err == nil {
			v.DeviceKey = k
		}
	}
	return v
}

// googleRefusal is the error of a Google Wallet request for a ticket whose
// barcode a Google pass cannot carry (passes.GoogleCarries).
func googleRefusal(op string, d passes.TicketDetails) error {
	return apperr.E(op, apperr.Conflict, CodeWalletBarcodeUnsupported, googleRefusalMessage(d))
}

func googleRefusalMessage(d passes.TicketDetails) string {
	return "Google Wallet cannot carry this ticket's " + d.Product.Barcode() + " barcode: its passes show text barcodes only, " +
		"which inspection devices cannot read; use the Apple Wallet pass or the ticket in the app"
}

// unavailableOptions are the wallets withheld from valid ticket d that the
// service has configured: Google for a binary barcode profile. nil when
// none (the key is then left out of the ticket).
func (w *Service) unavailableOptions(d passes.TicketDetails) []passes.UnavailableOption {
	if !d.Valid || !w.availability().Google || passes.GoogleCarries(d.Product) {
		return nil
	}
	return []passes.UnavailableOption{{Option: wallet.OptionGoogleWallet, Code: CodeWalletBarcodeUnsupported, Message: googleRefusalMessage(d)}}
}

// availability: a wallet is advertised only when its pass can be installed
// (client-contract 7), i.e. with issued credentials, unless development
// wallets are explicitly advertised.
func (w *Service) availability() wallet.Availability {
	o := w.options()
	return wallet.Availability{
		Apple:  o.Apple != nil && (o.Apple.Installable() || o.AdvertiseDevelopmentWallets),
		Google: o.Google != nil && (!o.Google.Development() || o.AdvertiseDevelopmentWallets),
	}
}

// pass builds the validated pass model of the ticket d.
func (w *Service) pass(d passes.TicketDetails, op string, configured bool) (wallet.Pass, error) {
	if !configured {
		return wallet.Pass{}, apperr.E(op, apperr.Unavailable, CodeWalletNotConfigured, "this wallet's passes are not configured on this service")
	}
	v, _, _, err := w.offer(d)
	if err != nil {
		return wallet.Pass{}, err
	}
	p, err := wallet.NewPass(v)
	if err != nil {
		return wallet.Pass{}, apperr.E(op, apperr.Unavailable, CodePassUnavailable, "a pass cannot be built for this ticket").WithCause(err)
	}
	return p, nil
}

// ApplePassContentType is the media type of a .pkpass file.
const ApplePassContentType = apple.ContentType

// ApplePass is the signed .pkpass of ticket d (voided when the ticket was
// restored away). With the web service configured the pass is updatable:
// its record (serial number = the ticket id, authenticationToken) is
// created on the first download.
func (w *Service) ApplePass(ctx context.Context, d passes.TicketDetails) ([]byte, error) {
	const op = "http.applePass"
	if !w.appleUpdates() {
		return w.buildApplePass(d, op, nil)
	}
	rec, err := w.applePassRecord(ctx, d.Ticket.ID, d.Ticket.CouponID)
	if err != nil {
		return nil, err
	}
	// The same serial number always shows the same: a subscription's pass
	// downloaded again after its next cycle started shows that cycle, as
	// the web service does (a stale copy would replace the updated one).
	cur, err := w.currentTicket(ctx, rec)
	if err != nil {
		return nil, err
	}
	if cur.ID != d.Ticket.ID {
		if d, err = w.ticket(ctx, cur.ID); err != nil {
			return nil, err
		}
	}
	return w.buildApplePass(d, op, &rec)
}

// GoogleInsertTimeout bounds the API calls a save link makes before it
// falls back to a link that carries the whole object.
const GoogleInsertTimeout = 5 * time.Second

// GoogleSaveURL is the Google Wallet save link of ticket d. With the
// Google Wallet API configured, the class and the ticket's object are
// inserted (or brought up to date) first and the link only names the
// object: under 1,800 characters. If the API cannot be reached the link
// carries the whole object, as without the API.
func (w *Service) GoogleSaveURL(ctx context.Context, d passes.TicketDetails) (string, error) {
	const op = "http.googlePass"
	g := w.options().Google
	if g != nil && !passes.GoogleCarries(d.Product) {
		return "", googleRefusal(op, d)
	}
	p, err := w.pass(d, op, g != nil)
	if err != nil {
		return "", err
	}
	now := w.Clock.Now()
	if api := w.options().GoogleAPI; api != nil {
		// Bounded: a slow Google costs the traveller a long link, not the request.
		actx, cancel := context.WithTimeout(ctx, GoogleInsertTimeout)
		err := w.putGoogleObject(actx, api, g.Object(p, now))
		cancel()
		if err == nil {
			if u, err := g.SkinnySaveURL(p.TicketID, now); err == nil {
				return u, nil
			}
		}
	}
	u, err := g.SaveURL(p, now)
	if err != nil {
		return "", apperr.E(op, apperr.Unavailable, CodePassUnavailable, "the save link could not be signed").WithCause(err)
	}
	return u, nil
}

// InspectionKeys is the public key set inspectors verify barcodes with.
func (w *Service) InspectionKeys() (any, error) {
	kr := w.keyring()
	if kr == nil {
		return nil, apperr.E("http.inspectionKeys", apperr.Unavailable, CodeInspectionKeysNotConfigured, "no inspection keys are configured")
	}
	return kr.KeySet(), nil
}

// RotatingSecret is what an inspection device needs to check the Google
// Wallet rotating codes ("FR1.…") of dynamic tickets offline
// (docs/wallet.md "Rotating barcodes of dynamic tickets", docs/inspect.md):
// the service's rotating-barcode secret and how a ticket's TOTP key and
// value are made from it (dynamic.TicketKey, dynamic.TOTP). Whoever holds
// it can make the live code of any ticket whose payload it has, so only
// inspectors get it (GET /v1/inspection/rotating-secret.json).
type RotatingSecret struct {
	Secret        string `json:"secret"`         // hex
	KeyDerivation string `json:"key_derivation"` // HMAC-SHA256(secret, key_context ‖ ticket id), cut to key_length bytes
	KeyContext    string `json:"key_context"`
	KeyLength     int    `json:"key_length"`
	Algorithm     string `json:"algorithm"` // Google's TOTP_SHA1 (RFC 6238), the ticket's window as the time step
	Digits        int    `json:"digits"`
}

// RotatingSecret is the rotating-barcode secret of the Google Wallet
// issuer, for an inspector's device; 503 when none is configured (no
// Google issuer, or one without a secret: dynamic tickets' Google passes
// then carry no rotating code).
func (w *Service) RotatingSecret() (RotatingSecret, error) {
	secret := w.options().Google.RotatingSecret()
	if len(secret) == 0 {
		return RotatingSecret{}, apperr.E("wallets.RotatingSecret", apperr.Unavailable, CodeRotatingSecretNotConfigured,
			"this instance has no rotating-barcode secret (Google Wallet rotating codes)")
	}
	return RotatingSecret{Secret: hex.EncodeToString(secret), KeyDerivation: "HMAC-SHA256", KeyContext: dynamic.TOTPContext,
		KeyLength: dynamic.TOTPKeyLen, Algorithm: "TOTP_SHA1", Digits: dynamic.TOTPDigits}, nil
}

// The HTML engines (client-contract 6.1).
const (
	RenderingEngineName    = engines.RenderingEngineName
	IdentificationViewName = engines.IdentificationViewName
	EngineContentType      = engines.ContentType
)

// EngineLocation is where …/<engine>/1 redirects: the current version's
// three-segment URL under the version prefix.
func EngineLocation(name, prefix string) (string, error) {
	e, redirect, ok := engines.Resolve(name, []string{"1"})
	if !ok || !redirect {
		return "", apperr.E("http.engine", apperr.NotFound, CodeEngineNotFound, "no such engine")
	}
	return e.Location(prefix), nil
}

// EngineDocument is the self-contained HTML of one engine version.
func EngineDocument(name string, segs []string) ([]byte, error) {
	e, redirect, ok := engines.Resolve(name, segs)
	if !ok || redirect {
		return nil, apperr.E("http.engine", apperr.NotFound, CodeEngineVersionNotFound,
			"no "+name+" version "+strings.Join(segs, ".")+"; ask for …/"+name+"/1 to be redirected to the current one")
	}
	return e.HTML, nil
}

// barcodeCache keeps the ticket.properties entries of recently read tickets.
// Drawing the Aztec PNG costs about 2 ms (signing 33 µs); the payload of a
// ticket never changes (Ed25519 is deterministic), so the entries are keyed
// by the payload itself and shared read-only. Bounded: it is emptied when
// full.
type barcodeCache struct {
	mu sync.Mutex
	m  map[string]map[string]any
}

const barcodeCacheSize = 8192

func (c *barcodeCache) properties(payload []byte) (map[string]any, error) {
	c.mu.Lock()
	props, ok := c.m[string(payload)]
	c.mu.Unlock()
	if ok {
		return props, nil
	}
	props, err := engines.BarcodeProperties(payload)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= barcodeCacheSize {
		c.m = make(map[string]map[string]any, 64)
	}
	c.m[string(payload)] = props
	c.mu.Unlock()
	return props, nil
}

// BackfillVDVNumbers stores the hash-derived VDV ticket number
// (vdv.TicketNumber) of every still-valid ticket of a vdv-ka-static
// product that has none (issued before the counter, or while its product
// had another profile), so the counter never hands out a number such a
// ticket's barcode carries. The barcodes do not change. serve runs it at
// start, over the loaded catalog's products, before the workers start and
// the service answers; it returns how many tickets it numbered.
func BackfillVDVNumbers(ctx context.Context, db DB, c clock.Clock, catalogProducts []catalog.Product) (int, error) {
	var products []string
	for _, p := range catalogProducts {
		if p.Barcode() == catalog.BarcodeVDV {
			products = append(products, p.ID)
		}
	}
	total := 0
	for {
		ids, err := db.Read().UnnumberedVDVTickets(ctx, products, c.Now(), 1000)
		if err != nil || len(ids) == 0 {
			return total, err
		}
		numbers := make(map[string]uint32, len(ids))
		for _, id := range ids {
			numbers[id] = vdv.TicketNumber(id)
		}
		if err := db.Write(ctx, func(q Queries) error { return q.SetVDVNumbers(ctx, numbers) }); err != nil {
			return total, err
		}
		total += len(ids)
	}
}

// InspectionKeySet is the public inspection key set as indented JSON for
// the console ("" and Unavailable when no keyring is configured).
func (w *Service) InspectionKeySet() (string, error) {
	ks, err := w.InspectionKeys()
	if err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(ks, "", "  ")
	return string(b), err
}
