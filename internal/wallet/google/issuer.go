package google

import (
	"encoding/hex"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/dynamic"
	"github.com/farebox/farebox/internal/wallet"
)

// SaveURLPrefix starts every save link; the JWT follows it directly.
const SaveURLPrefix = "https://pay.google.com/gp/v/save/"

// Config is the Google Wallet issuer configuration.
type Config struct {
	IssuerID    string          // numeric issuer id from the Pay & Wallet Console
	IssuerName  string          // shown on the pass; default the brand's organisation
	Brand       wallet.Brand    // operator, colours; the zero Brand is the development brand
	ClassSuffix string          // TransitClass id suffix; default "farebox_ticket"
	Origins     []string        // web origins allowed to render the save button
	LogoURL     string          // https logo for the class; without it the class is not sent (must exist already)
	Account     *ServiceAccount // signing key
	// RotatingSecret derives the TOTP key of each dynamic ticket's
	// rotating barcode (dynamic.TicketKey); without it a dynamic ticket's
	// pass carries its still payload, which inspection refuses.
	RotatingSecret []byte
}

// Issuer mints save links. It is safe for concurrent use.
type Issuer struct {
	cfg Config
}

var (
	issuerIDRE = regexp.MustCompile(`^[0-9]{1,25}$`)
	suffixRE   = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// NewIssuer checks cfg.
func NewIssuer(cfg Config) (*Issuer, error) {
	const op = "google.NewIssuer"
	bad := func(msg string) (*Issuer, error) {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidGoogleWalletConfig, msg)
	}
	if cfg.Brand.Organization == "" {
		cfg.Brand = wallet.DevelopmentBrand()
	}
	if cfg.IssuerName == "" {
		cfg.IssuerName = cfg.Brand.Organization
	}
	if cfg.ClassSuffix == "" {
		cfg.ClassSuffix = "farebox_ticket"
	}
	switch {
	case !issuerIDRE.MatchString(cfg.IssuerID):
		return bad("issuer id must be numeric")
	case !suffixRE.MatchString(cfg.ClassSuffix):
		return bad("class suffix may hold only letters, digits, '.', '_' and '-'")
	case cfg.Account == nil || cfg.Account.key == nil:
		return bad("a parsed service account is required")
	}
	for _, o := range cfg.Origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return bad("origin " + o + " is not a web origin like https://example.com")
		}
	}
	if cfg.LogoURL != "" {
		if u, err := url.Parse(cfg.LogoURL); err != nil || u.Scheme != "https" {
			return bad("logo URL must be https")
		}
	}
	if n := len(cfg.RotatingSecret); n != 0 && n < dynamic.MinSecretLen {
		return bad("the rotating-barcode secret must have at least 32 bytes")
	}
	cfg.Origins = append([]string{}, cfg.Origins...)
	return &Issuer{cfg: cfg}, nil
}

// Development reports a self-generated service account (Google rejects its links).
func (i *Issuer) Development() bool { return i.cfg.Account.Development }

// Account is the issuer's service account.
func (i *Issuer) Account() *ServiceAccount { return i.cfg.Account }

// RotatingSecret is a copy of the rotating-barcode secret the TOTP keys
// are derived from (nil: none configured), for the inspection devices that
// check the codes (docs/inspect.md).
func (i *Issuer) RotatingSecret() []byte {
	if i == nil || len(i.cfg.RotatingSecret) == 0 {
		return nil
	}
	return append([]byte(nil), i.cfg.RotatingSecret...)
}

// ClassID is "<issuerId>.<classSuffix>".
func (i *Issuer) ClassID() string { return i.cfg.IssuerID + "." + i.cfg.ClassSuffix }

// ObjectID is the stable object id of a ticket: "<issuerId>.<ticket id>"
// with characters outside [A-Za-z0-9._-] replaced by '_'.
func (i *Issuer) ObjectID(ticketID string) string {
	return i.cfg.IssuerID + "." + strings.Map(func(r rune) rune {
		if r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, ticketID)
}

// Claims is the save JWT's claim set. aud is a plain string, as Google's
// examples send it (jwt.RegisteredClaims would encode an array).
type Claims struct {
	Iss     string   `json:"iss"`
	Aud     string   `json:"aud"`
	Typ     string   `json:"typ"`
	Iat     int64    `json:"iat"`
	Origins []string `json:"origins"`
	Payload Payload  `json:"payload"`
}

// The jwt.Claims methods; the save JWT has no exp, nbf or sub.

func (c Claims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }
func (c Claims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c Claims) GetSubject() (string, error)                  { return "", nil }
func (c Claims) GetIssuer() (string, error)                   { return c.Iss, nil }
func (c Claims) GetAudience() (jwt.ClaimStrings, error)       { return jwt.ClaimStrings{c.Aud}, nil }
func (c Claims) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(c.Iat, 0)), nil
}

// Payload carries the classes and objects to save ("fat" JWT).
type Payload struct {
	TransitClasses []TransitClass  `json:"transitClasses,omitempty"`
	TransitObjects []TransitObject `json:"transitObjects"`
}

// SaveJWT returns the signed save JWT for p at now: RS256, header kid = the
// service account's private_key_id, claims iss, aud "google", typ
// "savetowallet", iat, origins and the transit object (and class when a logo
// URL is configured).
func (i *Issuer) SaveJWT(p wallet.Pass, now time.Time) (string, error) {
	c := Claims{
		Iss:     i.cfg.Account.ClientEmail,
		Aud:     "google",
		Iat:     now.Unix(),
		Typ:     "savetowallet",
		Origins: i.cfg.Origins,
		Payload: Payload{TransitObjects: []TransitObject{i.transitObject(p, now)}},
	}
	if i.cfg.LogoURL != "" {
		c.Payload.TransitClasses = []TransitClass{i.transitClass()}
	}
	return i.sign(c)
}

// sign signs save-JWT claims: RS256, header kid = private_key_id.
func (i *Issuer) sign(c Claims) (string, error) {
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	if kid := i.cfg.Account.PrivateKeyID; kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := i.cfg.Account.signJWT(tok)
	if err != nil {
		return "", apperr.Wrap("google.SaveJWT", err)
	}
	return s, nil
}

// SaveURL is the save link: SaveURLPrefix + JWT. It is also the exact body
// of the .json endpoint (no quoting, no newline).
func (i *Issuer) SaveURL(p wallet.Pass, now time.Time) (string, error) {
	s, err := i.SaveJWT(p, now)
	if err != nil {
		return "", err
	}
	return SaveURLPrefix + s, nil
}

// state maps the ticket to a TransitObject state at now.
func state(p wallet.Pass, now time.Time) string {
	switch {
	case p.Voided:
		return "INACTIVE"
	case !now.Before(p.ValidUntil):
		return "EXPIRED"
	}
	return "ACTIVE"
}

// Text values shown in German with English translations.
func localized(de, en string) *LocalizedString {
	ls := &LocalizedString{DefaultValue: TranslatedString{Language: "de", Value: de}}
	if en != "" && en != de {
		ls.TranslatedValues = []TranslatedString{{Language: "en", Value: en}}
	}
	return ls
}

func (i *Issuer) transitObject(p wallet.Pass, now time.Time) TransitObject {
	w3c := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	o := TransitObject{
		ID:                i.ObjectID(p.TicketID),
		ClassID:           i.ClassID(),
		State:             state(p, now),
		TripType:          "ONE_WAY",
		PassengerType:     "SINGLE_PASSENGER",
		PassengerNames:    p.Passenger.Name(),
		TicketNumber:      p.ShortRef(),
		TicketLeg:         &TicketLeg{FareName: localized(p.ProductName, "")},
		ValidTimeInterval: &TimeInterval{Start: &DateTime{Date: w3c(p.ValidFrom)}, End: &DateTime{Date: w3c(p.ValidUntil)}},
		HexBackgroundColor: func() string {
			if p.Test() {
				return "#8a1c1c"
			}
			return i.cfg.Brand.Background.Hex()
		}(),
	}
	o.Barcode, o.RotatingBarcode = i.barcode(p)
	if a := p.Area(); a != "" {
		o.TicketLeg.OriginName = localized(a, "")
	}
	if p.Passenger.BirthDate != "" {
		o.TextModulesData = append(o.TextModulesData, TextModule{ID: "birth_date", Header: "Geburtsdatum / Date of birth", Body: wallet.GermanDate(p.Passenger.BirthDate)})
	}
	if p.Voided {
		status := "Ungültig / Revoked – not valid"
		if p.Replaced {
			status = "Ersetzt / Replaced by a new ticket"
		}
		o.TextModulesData = append(o.TextModulesData, TextModule{ID: "status", Header: "Status", Body: status})
	}
	if p.Test() {
		o.TextModulesData = append(o.TextModulesData, TextModule{ID: "environment", Header: "TEST", Body: "Testticket – nicht gültig / test ticket – not valid for travel"})
	}
	if p.ValidityDescription != "" {
		o.TextModulesData = append(o.TextModulesData, TextModule{ID: "validity", Header: "Gültigkeit / Validity", Body: p.ValidityDescription})
	}
	return o
}

// barcode is the pass's code: the payload's text, or for a dynamic ticket
// (payload flag) with a rotating secret configured Google's rotating
// barcode, whose TOTP key is the ticket's (docs/wallet.md "Rotating
// barcodes of dynamic tickets").
func (i *Issuer) barcode(p wallet.Pass) (*Barcode, *RotatingBarcode) {
	c, err := barcode.Parse(p.Barcode)
	if err != nil || !c.Dynamic || len(i.cfg.RotatingSecret) == 0 {
		return &Barcode{Type: "AZTEC", Value: barcode.Text(p.Barcode), AlternateText: p.ShortRef()}, nil
	}
	return nil, &RotatingBarcode{Type: "QR_CODE", ValuePattern: dynamic.ValuePattern(p.Barcode), AlternateText: p.ShortRef(),
		TotpDetails: TotpDetails{PeriodMillis: strconv.Itoa(c.WindowSeconds * 1000), Algorithm: "TOTP_SHA1",
			Parameters: []TotpParameters{{Key: hex.EncodeToString(dynamic.TicketKey(i.cfg.RotatingSecret, c.TicketID)), ValueLength: dynamic.TOTPDigits}}}}
}

func (i *Issuer) transitClass() TransitClass {
	return TransitClass{
		ID:                  i.ClassID(),
		IssuerName:          i.cfg.IssuerName,
		ReviewStatus:        "UNDER_REVIEW",
		TransitType:         "OTHER",
		TransitOperatorName: localized(i.cfg.Brand.Operator, ""),
		Logo:                &Image{SourceURI: ImageURI{URI: i.cfg.LogoURL}},
		HexBackgroundColor:  i.cfg.Brand.Background.Hex(),
	}
}
