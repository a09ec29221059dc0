// Package apnstest runs a local server that speaks the APNs provider API
// (HTTP/2 over TLS, token-based authentication) in place of
// api.push.apple.com, which tests cannot reach. It checks every request
// as APNs would — HTTP/2, POST /3/device/<hex token>, apns-topic,
// apns-push-type, a bearer ES256 JWT that verifies with the .p8 key's
// public key and names the key id and team — and answers like APNs: 200,
// or the status and {"reason"} a test scripts.
package apnstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/wallet/apple"
)

// Server is a local APNs.
type Server struct {
	URL    string       // https://127.0.0.1:port
	Client *http.Client // trusts the server's certificate, speaks HTTP/2
	Key    *ecdsa.PrivateKey
	P8     []byte // Key as the PKCS#8 PEM .p8 file Apple issues
	KeyID  string
	TeamID string
	Topic  string

	srv       *httptest.Server
	mu        sync.Mutex
	pushes    []Push
	refused   []string
	respond   func(token string, n int) (int, string)
	perToken  map[string]int
	arrivedCh chan struct{}
}

// Push is one accepted or refused request.
type Push struct {
	Token    string
	Topic    string
	PushType string
	Priority string
	Body     string
	Proto    string
	IssuedAt time.Time // the JWT's iat
	Status   int       // what the server answered
}

var tokenRE = regexp.MustCompile(`^[0-9a-fA-F]{16,200}$`)

// New starts a local APNs for topic (the pass type id) with a fresh key,
// closed when the test ends.
func New(t testing.TB, topic string) *Server {
	t.Helper()
	s, err := Start(Options{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Options of Start. The zero value of a field means: a fresh P-256 key,
// key id ABC123DEFG, team FAREBOXDEV, a free loopback port and
// net/http/httptest's certificate for 127.0.0.1.
type Options struct {
	Topic  string
	P8     []byte // the .p8 (PKCS#8 PEM) key whose tokens are accepted
	KeyID  string
	TeamID string
	Addr   string           // where to listen, e.g. 127.0.0.1:18443
	Cert   *tls.Certificate // the server's TLS certificate
}

// Start starts a local APNs outside a test (tools/loadgen -mode
// monthturn, whose farebox processes are configured before it starts, so
// key, address and certificate can be given); Close ends it.
func Start(o Options) (*Server, error) {
	s := &Server{KeyID: o.KeyID, TeamID: o.TeamID, Topic: o.Topic, perToken: map[string]int{}, arrivedCh: make(chan struct{}, 1)}
	if s.KeyID == "" {
		s.KeyID = "ABC123DEFG"
	}
	if s.TeamID == "" {
		s.TeamID = "FAREBOXDEV"
	}
	if o.P8 == nil {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, err
		}
		o.P8 = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	key, err := apple.ParseP8(o.P8)
	if err != nil {
		return nil, err
	}
	s.Key, s.P8 = key, o.P8
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	if o.Addr != "" {
		l, err := net.Listen("tcp", o.Addr)
		if err != nil {
			return nil, err
		}
		s.srv.Listener.Close()
		s.srv.Listener = l
	}
	if o.Cert != nil {
		s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{*o.Cert}}
	}
	s.srv.EnableHTTP2 = true
	s.srv.StartTLS()
	s.URL, s.Client = s.srv.URL, s.srv.Client()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// CertPEM is the server's TLS certificate as PEM (for a client in another
// process to trust, e.g. through SSL_CERT_FILE).
func (s *Server) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// Respond scripts the answers: f gets the device token and how many
// requests for it came before, and returns a status and reason (200 and ""
// for success). Nil restores "always 200".
func (s *Server) Respond(f func(token string, n int) (int, string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = f
}

// Pushes returns every request so far, in arrival order.
func (s *Server) Pushes() []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Push(nil), s.pushes...)
}

// Since returns the requests from the i-th on (0-based), in arrival
// order: a reader that keeps its position copies each push once.
func (s *Server) Since(i int) []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.pushes) {
		return nil
	}
	return append([]Push(nil), s.pushes[i:]...)
}

// Len is how many requests arrived so far.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pushes)
}

// Refused returns why requests were refused as APNs would refuse them
// (wrong path, topic, push type, token): a correct client causes none.
func (s *Server) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refused...)
}

// Arrived is signalled (without blocking) after every request.
func (s *Server) Arrived() <-chan struct{} { return s.arrivedCh }

// Config is the APNs client configuration for this server.
func (s *Server) Config() apple.APNsConfig {
	return apple.APNsConfig{Endpoint: s.URL, Key: s.Key, KeyID: s.KeyID, TeamID: s.TeamID, Topic: s.Topic, Client: s.Client}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8192))
	p := Push{Token: strings.TrimPrefix(r.URL.Path, "/3/device/"), Topic: r.Header.Get("apns-topic"),
		PushType: r.Header.Get("apns-push-type"), Priority: r.Header.Get("apns-priority"), Body: string(body), Proto: r.Proto}
	status, reason := s.check(r, &p)
	s.mu.Lock()
	if status == http.StatusOK {
		n := s.perToken[p.Token]
		s.perToken[p.Token]++
		if s.respond != nil {
			status, reason = s.respond(p.Token, n)
		}
	} else {
		s.refused = append(s.refused, reason)
	}
	p.Status = status
	s.pushes = append(s.pushes, p)
	s.mu.Unlock()
	w.Header().Set("apns-id", "00000000-0000-0000-0000-000000000000")
	if status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"reason": reason})
	} else {
		w.WriteHeader(http.StatusOK)
	}
	select {
	case s.arrivedCh <- struct{}{}:
	default:
	}
}

// check validates a request as APNs does; the reasons are APNs's.
func (s *Server) check(r *http.Request, p *Push) (int, string) {
	switch {
	case r.ProtoMajor != 2:
		return http.StatusBadRequest, "not HTTP/2: " + r.Proto
	case r.Method != http.MethodPost:
		return http.StatusMethodNotAllowed, "MethodNotAllowed"
	case !strings.HasPrefix(r.URL.Path, "/3/device/") || !tokenRE.MatchString(p.Token):
		return http.StatusBadRequest, "BadDeviceToken"
	case p.Topic == "":
		return http.StatusBadRequest, "MissingTopic"
	case p.Topic != s.Topic:
		return http.StatusBadRequest, "DeviceTokenNotForTopic"
	case p.PushType != "background" && p.PushType != "alert":
		return http.StatusBadRequest, "InvalidPushType"
	case p.PushType == "background" && p.Priority != "5":
		return http.StatusBadRequest, "BadPriority"
	case !json.Valid([]byte(p.Body)):
		return http.StatusBadRequest, "PayloadEmpty"
	}
	auth := r.Header.Get("authorization")
	tok, ok := strings.CutPrefix(auth, "bearer ")
	if !ok {
		return http.StatusForbidden, "MissingProviderToken"
	}
	kid, iss, iat, err := verifyProviderToken(tok, &s.Key.PublicKey)
	switch {
	case err != nil:
		return http.StatusForbidden, "InvalidProviderToken"
	case kid != s.KeyID || iss != s.TeamID:
		return http.StatusForbidden, "InvalidProviderToken"
	case time.Since(iat) > time.Hour:
		return http.StatusForbidden, "ExpiredProviderToken"
	}
	p.IssuedAt = iat
	return http.StatusOK, ""
}

// String summarises the server's traffic (for failure messages).
func (s *Server) String() string {
	ps := s.Pushes()
	return fmt.Sprintf("%d requests, refused: %v", len(ps), s.Refused())
}

// verifyProviderToken checks an ES256 provider token with pub and returns
// its kid, iss and iat, as APNs does.
func verifyProviderToken(tok string, pub *ecdsa.PublicKey) (kid, iss string, iat time.Time, err error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", "", time.Time{}, errors.New("not a JWT")
	}
	enc := base64.RawURLEncoding
	sig, err := enc.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return "", "", time.Time{}, errors.New("bad signature encoding")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, sum[:], r, s) {
		return "", "", time.Time{}, errors.New("signature does not verify")
	}
	var h struct{ Alg, Kid string }
	var c struct {
		Iss string
		Iat int64
	}
	hb, err1 := enc.DecodeString(parts[0])
	cb, err2 := enc.DecodeString(parts[1])
	if err1 != nil || err2 != nil || json.Unmarshal(hb, &h) != nil || json.Unmarshal(cb, &c) != nil || h.Alg != "ES256" {
		return "", "", time.Time{}, errors.New("bad header or claims")
	}
	return h.Kid, c.Iss, time.Unix(c.Iat, 0), nil
}
