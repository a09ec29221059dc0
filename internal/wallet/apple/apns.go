package apple

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/keyref"
)

// APNs pushes pass updates through the Apple Push Notification service:
// HTTP/2, token-based authentication (an ES256 JWT signed with the team's
// .p8 key), topic = the pass type identifier, an empty JSON payload. The
// device answers a push by asking the web service which passes changed.
// It is safe for concurrent use.
type APNs struct {
	cfg APNsConfig
	mu  sync.Mutex
	jwt string
	iat time.Time
}

// APNsConfig configures NewAPNs.
type APNsConfig struct {
	// Endpoint is the APNs base URL (default DefaultAPNsEndpoint; the
	// development server is https://api.sandbox.push.apple.com).
	Endpoint string
	Key      crypto.Signer // the .p8 key (ParseP8, LoadP8): P-256, in memory or a token
	KeyID    string        // the key's 10-character id
	TeamID   string        // the team that owns the key
	Topic    string        // the pass type identifier
	// Client sends the requests (default: an HTTP/2 client, TLS ≥ 1.2).
	Client *http.Client
	// Now is the clock of the token's iat (default time.Now).
	Now func() time.Time
}

// DefaultAPNsEndpoint is Apple's production APNs server.
const DefaultAPNsEndpoint = "https://api.push.apple.com"

// TokenRefresh is how long a provider token is reused: Apple refuses
// tokens older than an hour and more than one new token every 20 minutes.
const TokenRefresh = 50 * time.Minute

// ParseP8 reads the PKCS#8 PEM .p8 key Apple issues for APNs (P-256).
func ParseP8(data []byte) (*ecdsa.PrivateKey, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("APNs key: no PEM block (expected the .p8 file Apple issued)")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("APNs key: %v", err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("APNs key: not a P-256 EC key")
	}
	return ec, nil
}

// LoadP8 opens the APNs key ref: the .p8 file (ParseP8) or the `pkcs11:`
// URI of the key imported into a hardware token.
func LoadP8(ref string) (crypto.Signer, error) {
	if !keyref.IsToken(ref) {
		data, err := os.ReadFile(ref)
		if err != nil {
			return nil, err
		}
		return ParseP8(data)
	}
	k, err := keyref.Open(ref)
	if err != nil {
		return nil, fmt.Errorf("APNs key %w", err)
	}
	if pub, ok := k.Public().(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		return nil, fmt.Errorf("APNs key %s: not a P-256 EC key", keyref.Display(ref))
	}
	return k, nil
}

// NewAPNs checks cfg and returns the client.
func NewAPNs(cfg APNsConfig) (*APNs, error) {
	switch {
	case cfg.Key == nil:
		return nil, errors.New("APNs: a .p8 key is required")
	case strings.TrimSpace(cfg.KeyID) == "" || strings.TrimSpace(cfg.TeamID) == "":
		return nil, errors.New("APNs: key id and team id are required")
	case !passTypeRE.MatchString(cfg.Topic):
		return nil, errors.New("APNs: the topic must be the pass type identifier")
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = DefaultAPNsEndpoint
	}
	cfg.Endpoint = strings.TrimRight(cfg.Endpoint, "/")
	if !strings.HasPrefix(cfg.Endpoint, "https://") {
		return nil, errors.New("APNs: the endpoint must be an https URL")
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost: 4, IdleConnTimeout: 10 * time.Minute}}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &APNs{cfg: cfg}, nil
}

// Topic is the pass type identifier the pushes go to.
func (c *APNs) Topic() string { return c.cfg.Topic }

// Outcome is what APNs made of one push.
type Outcome int

const (
	// Delivered: APNs accepted the push (200).
	Delivered Outcome = iota
	// Unregistered: the token is no longer valid for the topic (410, or 400
	// BadDeviceToken / DeviceTokenNotForTopic); delete its registrations.
	Unregistered
)

// PushError is a push that failed; Retry says whether sending it again
// later can succeed (429, 5xx, network), as opposed to a refusal.
type PushError struct {
	Status int    // 0 for a transport error
	Reason string // APNs "reason", or the transport error
	Retry  bool
}

func (e *PushError) Error() string {
	if e.Status == 0 {
		return "APNs: " + e.Reason
	}
	return "APNs: " + strconv.Itoa(e.Status) + " " + e.Reason
}

// Push sends the empty pass-update notification to one device's push
// token. An expired or refused provider token is replaced once and the push
// repeated.
func (c *APNs) Push(ctx context.Context, pushToken string) (Outcome, error) {
	out, err := c.push(ctx, pushToken, false)
	var pe *PushError
	if errors.As(err, &pe) && pe.Status == http.StatusForbidden &&
		(pe.Reason == "ExpiredProviderToken" || pe.Reason == "InvalidProviderToken") {
		out, err = c.push(ctx, pushToken, true)
	}
	return out, err
}

func (c *APNs) push(ctx context.Context, pushToken string, fresh bool) (Outcome, error) {
	tok, err := c.token(fresh)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.Endpoint+"/3/device/"+pushToken, bytes.NewReader([]byte("{}")))
	if err != nil {
		return 0, &PushError{Reason: err.Error()}
	}
	req.Header.Set("authorization", "bearer "+tok)
	req.Header.Set("apns-topic", c.cfg.Topic)
	// A pass update wakes Wallet, shows nothing: a background push, which
	// APNs wants at priority 5.
	req.Header.Set("apns-push-type", "background")
	req.Header.Set("apns-priority", "5")
	req.Header.Set("content-type", "application/json")
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return 0, &PushError{Reason: err.Error(), Retry: true}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusOK {
		return Delivered, nil
	}
	var r struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(body, &r)
	switch {
	case resp.StatusCode == http.StatusGone,
		resp.StatusCode == http.StatusBadRequest && (r.Reason == "BadDeviceToken" || r.Reason == "DeviceTokenNotForTopic"):
		return Unregistered, nil
	}
	return 0, &PushError{Status: resp.StatusCode, Reason: r.Reason,
		Retry: resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 || resp.StatusCode == http.StatusForbidden}
}

// token is the cached provider token, signed anew after TokenRefresh or
// when fresh is set (APNs said it expired).
func (c *APNs) token(fresh bool) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	if !fresh && c.jwt != "" && now.Sub(c.iat) < TokenRefresh && !now.Before(c.iat) {
		return c.jwt, nil
	}
	jwt, err := SignProviderToken(c.cfg.Key, c.cfg.KeyID, c.cfg.TeamID, now)
	if err != nil {
		return "", err
	}
	c.jwt, c.iat = jwt, now
	return jwt, nil
}

// SignProviderToken is the APNs provider token: a JWT, ES256, header kid =
// keyID, claims iss = teamID and iat.
func SignProviderToken(key crypto.Signer, keyID, teamID string, iat time.Time) (string, error) {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": keyID})
	cl, _ := json.Marshal(map[string]any{"iss": teamID, "iat": iat.Unix()})
	signing := enc.EncodeToString(h) + "." + enc.EncodeToString(cl)
	sum := sha256.Sum256([]byte(signing))
	der, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("APNs token: %v", err)
	}
	var rs struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(der, &rs); err != nil || len(rest) != 0 {
		return "", errors.New("APNs token: the key's ECDSA signature is not DER")
	}
	r, s := rs.R, rs.S
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signing + "." + enc.EncodeToString(sig), nil
}
