package google

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/wallet"
)

// The Google Wallet REST API (walletobjects v1) and its OAuth2 token
// endpoint. Both are configurable: tests run a local server that speaks the
// same protocol (googletest).
const (
	DefaultAPIURL   = "https://walletobjects.googleapis.com/walletobjects/v1"
	DefaultTokenURL = "https://oauth2.googleapis.com/token"
	// Scope is the OAuth scope of the issuer API.
	Scope = "https://www.googleapis.com/auth/wallet_object.issuer"
	// JWTBearerGrant is the grant type of the service-account token exchange (RFC 7523).
	JWTBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// ClientConfig configures NewClient.
type ClientConfig struct {
	APIURL   string          // default DefaultAPIURL
	TokenURL string          // default the key file's token_uri, else DefaultTokenURL
	Account  *ServiceAccount // the issuer's service account
	HTTP     *http.Client    // default: 30 s timeout
	Now      func() time.Time
}

// Client calls the Google Wallet REST API with a service account: an
// RS256 JWT assertion is exchanged for an access token at the token URL
// (cached until a minute before it expires), which every call presents as
// a Bearer token. It is safe for concurrent use.
type Client struct {
	cfg ClientConfig

	mu      sync.Mutex
	token   string
	expires time.Time
}

// NewClient checks cfg.
func NewClient(cfg ClientConfig) (*Client, error) {
	const op = "google.NewClient"
	if cfg.Account == nil || cfg.Account.key == nil {
		return nil, apperr.E(op, apperr.Invalid, CodeInvalidGoogleWalletConfig, "a parsed service account is required")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if cfg.TokenURL == "" {
		cfg.TokenURL = cfg.Account.TokenURI
	}
	if cfg.TokenURL == "" {
		cfg.TokenURL = DefaultTokenURL
	}
	for _, u := range []string{cfg.APIURL, cfg.TokenURL} {
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
			return nil, apperr.E(op, apperr.Invalid, CodeInvalidGoogleWalletConfig, "Google Wallet API and token URLs must be http(s) URLs: "+u)
		}
	}
	cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg}, nil
}

// APIError is a non-2xx answer of the API or the token endpoint. Its apperr
// kind: NotFound for 404, Conflict for 409, Unavailable otherwise.
type APIError struct {
	Status int
	Body   string
}

func (e *APIError) Error() string {
	return "Google Wallet API: HTTP " + strconv.Itoa(e.Status) + ": " + e.Body
}

func apiErr(op string, status int, body []byte) error {
	kind, code := apperr.Unavailable, CodeGoogleWalletAPIError
	switch status {
	case http.StatusNotFound:
		kind, code = apperr.NotFound, CodeGoogleObjectNotFound
	case http.StatusConflict:
		kind, code = apperr.Conflict, CodeGoogleObjectExists
	}
	e := &APIError{Status: status, Body: strings.TrimSpace(string(body))}
	return apperr.E(op, kind, code, e.Error()).WithCause(e)
}

// assertion is the JWT-bearer assertion's claim set.
type assertion struct {
	Iss   string `json:"iss"`
	Scope string `json:"scope"`
	Aud   string `json:"aud"`
	Iat   int64  `json:"iat"`
	Exp   int64  `json:"exp"`
}

func (a assertion) GetExpirationTime() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(a.Exp, 0)), nil
}
func (a assertion) GetIssuedAt() (*jwt.NumericDate, error) {
	return jwt.NewNumericDate(time.Unix(a.Iat, 0)), nil
}
func (a assertion) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }
func (a assertion) GetIssuer() (string, error)              { return a.Iss, nil }
func (a assertion) GetSubject() (string, error)             { return "", nil }
func (a assertion) GetAudience() (jwt.ClaimStrings, error)  { return jwt.ClaimStrings{a.Aud}, nil }

// Token returns a cached access token, or exchanges a fresh assertion for
// one.
func (c *Client) Token(ctx context.Context) (string, error) {
	const op = "google.Token"
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	if c.token != "" && now.Before(c.expires) {
		return c.token, nil
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, assertion{Iss: c.cfg.Account.ClientEmail, Scope: Scope,
		Aud: c.cfg.TokenURL, Iat: now.Unix(), Exp: now.Add(time.Hour).Unix()})
	if kid := c.cfg.Account.PrivateKeyID; kid != "" {
		tok.Header["kid"] = kid
	}
	signed, err := c.cfg.Account.signJWT(tok)
	if err != nil {
		return "", apperr.Wrap(op, err)
	}
	form := url.Values{"grant_type": {JWTBearerGrant}, "assertion": {signed}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", apperr.Wrap(op, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.cfg.HTTP.Do(req)
	if err != nil {
		return "", apperr.E(op, apperr.Unavailable, CodeGoogleWalletAPIError, "Google OAuth token exchange: "+err.Error())
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusOK {
		return "", apiErr(op, res.StatusCode, body)
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		TokenType   string `json:"token_type"`
	}
	if err := json.Unmarshal(body, &t); err != nil || t.AccessToken == "" || !strings.EqualFold(t.TokenType, "Bearer") {
		return "", apperr.E(op, apperr.Unavailable, CodeGoogleWalletAPIError, "Google OAuth token exchange: no Bearer access_token in the answer")
	}
	c.token = t.AccessToken
	c.expires = now.Add(time.Duration(t.ExpiresIn)*time.Second - time.Minute)
	return c.token, nil
}

// do sends one API call with the Bearer token; a 401 drops the cached
// token and retries once with a fresh one. out (if not nil) receives the
// JSON answer.
func (c *Client) do(ctx context.Context, op, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return apperr.Wrap(op, err)
		}
	}
	for attempt := 0; ; attempt++ {
		tok, err := c.Token(ctx)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, method, c.cfg.APIURL+path, bytes.NewReader(body))
		if err != nil {
			return apperr.Wrap(op, err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		if in != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := c.cfg.HTTP.Do(req)
		if err != nil {
			return apperr.E(op, apperr.Unavailable, CodeGoogleWalletAPIError, "Google Wallet API: "+err.Error())
		}
		rb, _ := io.ReadAll(io.LimitReader(res.Body, 4<<20))
		res.Body.Close()
		if res.StatusCode == http.StatusUnauthorized && attempt == 0 {
			c.mu.Lock()
			if c.token == tok {
				c.token = ""
			}
			c.mu.Unlock()
			continue
		}
		if res.StatusCode/100 != 2 {
			return apiErr(op, res.StatusCode, rb)
		}
		if out != nil {
			if err := json.Unmarshal(rb, out); err != nil {
				return apperr.E(op, apperr.Unavailable, CodeGoogleWalletAPIError, "Google Wallet API: answer is not JSON: "+err.Error())
			}
		}
		return nil
	}
}

// InsertClass creates a TransitClass (POST /transitClass); an existing id
// is an apperr Conflict.
func (c *Client) InsertClass(ctx context.Context, cl TransitClass) error {
	return c.do(ctx, "google.InsertClass", http.MethodPost, "/transitClass", cl, nil)
}

// InsertObject creates a TransitObject (POST /transitObject); an existing
// id is an apperr Conflict.
func (c *Client) InsertObject(ctx context.Context, o TransitObject) error {
	return c.do(ctx, "google.InsertObject", http.MethodPost, "/transitObject", o, nil)
}

// ObjectPatch is what changes on a saved ticket: its state, validity,
// barcode (re-signed after a key revocation) and text modules (status).
type ObjectPatch struct {
	State             string           `json:"state"`
	ValidTimeInterval *TimeInterval    `json:"validTimeInterval,omitempty"`
	Barcode           *Barcode         `json:"barcode,omitempty"`
	RotatingBarcode   *RotatingBarcode `json:"rotatingBarcode,omitempty"`
	TextModulesData   []TextModule     `json:"textModulesData,omitempty"`
}

// PatchObject updates object id (PATCH /transitObject/{id}); an unknown id
// is an apperr NotFound.
func (c *Client) PatchObject(ctx context.Context, id string, p ObjectPatch) error {
	return c.do(ctx, "google.PatchObject", http.MethodPatch, "/transitObject/"+url.PathEscape(id), p, nil)
}

// GetObject reads object id (GET /transitObject/{id}).
func (c *Client) GetObject(ctx context.Context, id string) (TransitObject, error) {
	var o TransitObject
	err := c.do(ctx, "google.GetObject", http.MethodGet, "/transitObject/"+url.PathEscape(id), nil, &o)
	return o, err
}

// Object is the TransitObject of p at now, as the fat save link carries it
// and the API stores it.
func (i *Issuer) Object(p wallet.Pass, now time.Time) TransitObject { return i.transitObject(p, now) }

// Class is the issuer's TransitClass; ok is false without a logo URL (then
// the class must exist already: Google requires a logo).
func (i *Issuer) Class() (TransitClass, bool) { return i.transitClass(), i.cfg.LogoURL != "" }

// Patch is the part of o an update sends.
func Patch(o TransitObject) ObjectPatch {
	return ObjectPatch{State: o.State, ValidTimeInterval: o.ValidTimeInterval, Barcode: o.Barcode, RotatingBarcode: o.RotatingBarcode,
		TextModulesData: o.TextModulesData}
}

// SkinnyJWT is a save JWT that references an object already inserted
// through the API by id (and its class id) only: a few hundred characters
// instead of the 2,000–3,300 of a JWT carrying the object.
func (i *Issuer) SkinnyJWT(ticketID string, now time.Time) (string, error) {
	c := Claims{Iss: i.cfg.Account.ClientEmail, Aud: "google", Iat: now.Unix(), Typ: "savetowallet", Origins: i.cfg.Origins,
		Payload: Payload{TransitObjects: []TransitObject{{ID: i.ObjectID(ticketID), ClassID: i.ClassID()}}}}
	return i.sign(c)
}

// SkinnySaveURL is SaveURLPrefix + SkinnyJWT.
func (i *Issuer) SkinnySaveURL(ticketID string, now time.Time) (string, error) {
	s, err := i.SkinnyJWT(ticketID, now)
	if err != nil {
		return "", err
	}
	return SaveURLPrefix + s, nil
}
