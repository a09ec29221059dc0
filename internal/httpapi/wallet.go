package httpapi

import (
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/engines"
	"github.com/farebox/farebox/internal/wallet"
	"github.com/farebox/farebox/internal/wallet/apple"
)

// This file wires tickets to the inspection barcode, the wallet passes and
// the HTML engines (docs/wallet.md). The barcode is signed when a ticket is
// read: Ed25519 signatures are deterministic, so the same ticket always
// yields the same payload and nothing needs storing.

// engineVersion is the rendering engine version tickets require.
func (s *Server) engineVersion() string { return engines.RenderingEngine().Version }

// walletView copies a ticket into the pass model; the barcode is added by
// ticketWallet.
func walletView(d app.TicketDetails) wallet.TicketView {
	t := d.Ticket
	p := wallet.PassengerFromIdentificationMedium(t.IdentificationMedium)
	if _, err := time.Parse("2006-01-02", p.BirthDate); err != nil {
		p.BirthDate = "" // the payload carries a real date or none
	}
	p.FirstName, p.LastName = fit(p.FirstName), fit(p.LastName)
	v := wallet.TicketView{TicketID: t.ID, ProductID: t.ProductID, ProductName: fit(d.Product.LocalTicketName),
		ValidityDescription: d.Product.LocalValidityDescription, ZoneName: d.Area.LocalZoneName,
		ValidFrom: t.ValidFrom, ValidUntil: t.ValidUntil, Passenger: p, Environment: string(t.Environment),
		Voided: !d.Valid}
	if len(d.Area.CityNames) > 0 {
		v.CityName = d.Area.CityNames[0]
	}
	return v
}

// fit cuts s to the 255 bytes a payload string may hold, on a rune boundary.
func fit(s string) string {
	const max = 255
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// ticketWallet is what a ticket offers: its view with the signed barcode
// (when an inspection keyring is configured), the ticket.properties entries
// carrying that barcode, and available_rendering_options.
func (s *Server) ticketWallet(d app.TicketDetails) (v wallet.TicketView, props map[string]any, options []string, err error) {
	v = walletView(d)
	options = []string{}
	if s.Inspection != nil {
		if v.Barcode, err = barcode.Sign(v.Claims(), s.Inspection); err != nil {
			return v, nil, nil, err
		}
		if props, err = s.barcodes.properties(v.Barcode); err != nil {
			return v, nil, nil, err
		}
	}
	// A restored-away ticket's pass is served voided, but not offered anew.
	if d.Valid {
		options = wallet.RenderingOptions(v, s.availability())
	}
	return v, props, options, nil
}

// availability: a wallet is advertised only when its pass can be installed
// (client-contract 7), i.e. with issued credentials, unless development
// wallets are explicitly advertised.
func (s *Server) availability() wallet.Availability {
	return wallet.Availability{
		Apple:  s.Apple != nil && (s.Apple.Installable() || s.AdvertiseDevelopmentWallets),
		Google: s.Google != nil && (!s.Google.Development() || s.AdvertiseDevelopmentWallets),
	}
}

// passFor loads the ticket of the request and builds
// the validated pass model.
func (s *Server) passFor(r *http.Request, op string, configured bool) (wallet.Pass, error) {
	d, err := s.app.Ticket(r.Context(), r.PathValue("ticket_id"))
	if err != nil {
		return wallet.Pass{}, err
	}
	if !configured {
		return wallet.Pass{}, apperr.E(op, apperr.Unavailable, CodeWalletNotConfigured, "this wallet's passes are not configured on this service")
	}
	v, _, _, err := s.ticketWallet(d)
	if err != nil {
		return wallet.Pass{}, err
	}
	p, err := wallet.NewPass(v)
	if err != nil {
		return wallet.Pass{}, apperr.E(op, apperr.Unavailable, CodePassUnavailable, "a pass cannot be built for this ticket").WithCause(err)
	}
	return p, nil
}

// applePass answers GET …/passes/apple_wallet/{ticket_id}.pkpass with the
// signed pass (voided when the ticket was restored away).
func (s *Server) applePass(w http.ResponseWriter, r *http.Request) error {
	const op = "http.applePass"
	p, err := s.passFor(r, op, s.Apple != nil)
	if err != nil {
		return err
	}
	b, err := s.Apple.Build(p)
	if err != nil {
		return apperr.E(op, apperr.Unavailable, CodePassUnavailable, "the pass could not be signed").WithCause(err)
	}
	h := w.Header()
	h.Set("Content-Type", apple.ContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `attachment; filename="ticket.pkpass"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

func (s *Server) googleSaveURL(r *http.Request) (string, error) {
	const op = "http.googlePass"
	p, err := s.passFor(r, op, s.Google != nil)
	if err != nil {
		return "", err
	}
	u, err := s.Google.SaveURL(p, s.app.Now())
	if err != nil {
		return "", apperr.E(op, apperr.Unavailable, CodePassUnavailable, "the save link could not be signed").WithCause(err)
	}
	return u, nil
}

// googlePassRedirect answers GET …/passes/google_wallet/{ticket_id} with a
// 302 to the save link (browsers, e-mail links).
func (s *Server) googlePassRedirect(w http.ResponseWriter, r *http.Request) error {
	u, err := s.googleSaveURL(r)
	if err != nil {
		return err
	}
	w.Header().Set("Location", u)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusFound)
	return nil
}

// googlePassLink answers GET …/passes/google_wallet/{ticket_id}.json with
// the bare save URL as the whole body: Android splits it on "/save/" and
// takes the rest as the JWT, so no JSON quoting and no newline
// (client-contract 7).
func (s *Server) googlePassLink(w http.ResponseWriter, r *http.Request) error {
	u, err := s.googleSaveURL(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(u))
	return nil
}

// engineRedirect answers …/<engine>/1 with a 302 to the current version's
// three-segment URL under the same version prefix (client-contract 6.1).
func (s *Server) engineRedirect(name, prefix string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		e, redirect, ok := engines.Resolve(name, []string{"1"})
		if !ok || !redirect {
			return apperr.E("http.engine", apperr.NotFound, CodeEngineNotFound, "no such engine")
		}
		w.Header().Set("Location", e.Location(prefix))
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusFound)
		return nil
	}
}

// engineDocument serves the self-contained HTML of one engine version.
func (s *Server) engineDocument(name string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		segs := []string{r.PathValue("major"), r.PathValue("minor"), r.PathValue("patch")}
		e, redirect, ok := engines.Resolve(name, segs)
		if !ok || redirect {
			return apperr.E("http.engine", apperr.NotFound, CodeEngineVersionNotFound,
				"no "+name+" version "+strings.Join(segs, ".")+"; ask for …/"+name+"/1 to be redirected to the current one")
		}
		w.Header().Set("Content-Type", engines.ContentType)
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(e.HTML)
		return nil
	}
}

// inspectionKeys answers GET /v1/inspection/keys.json with the public keys.
func (s *Server) inspectionKeys(w http.ResponseWriter, r *http.Request) error {
	if s.Inspection == nil {
		return apperr.E("http.inspectionKeys", apperr.Unavailable, CodeInspectionKeysNotConfigured, "no inspection keys are configured")
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, s.Inspection.KeySet())
	return nil
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
