// Package googletest is a local stand-in for the Google Wallet REST API
// (walletobjects v1) and Google's OAuth2 token endpoint, speaking their
// protocol: the JWT-bearer token exchange with an RS256 assertion verified
// against the service account's public key, Bearer tokens on every call,
// transitClass/transitObject insert (409 for an existing id), get and
// patch (404 for an unknown id), and Google's error JSON. Tests point
// farebox's --google-api-url and the key file's token_uri at it.
package googletest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Google's constants, repeated here so the stand-in does not trust the
// client's own definitions.
const (
	scope      = "https://www.googleapis.com/auth/wallet_object.issuer"
	grantType  = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	apiPrefix  = "/walletobjects/v1"
	tokenPath  = "/token"
	tokenLife  = time.Hour
	maxRequest = 1 << 20
)

// Server is a running stand-in. Its exported counters and maps are read
// with the accessor methods (they are guarded).
type Server struct {
	srv   *httptest.Server
	email string
	key   *rsa.PublicKey

	mu        sync.Mutex
	tokens    map[string]time.Time // access token → expiry
	classes   map[string]json.RawMessage
	objects   map[string]map[string]any
	exchanges int
	calls     []string // "METHOD path status"
	failNext  int      // answer the next n API calls with 503
	now       func() time.Time
}

// New starts a stand-in that accepts assertions signed by key for the
// service account email; now is its clock (nil: time.Now), which judges
// the assertions' iat/exp and the access tokens' expiry.
func New(t testing.TB, email string, key *rsa.PublicKey, now func() time.Time) *Server {
	if now == nil {
		now = time.Now
	}
	s := &Server{email: email, key: key, tokens: map[string]time.Time{}, classes: map[string]json.RawMessage{},
		objects: map[string]map[string]any{}, now: now}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+tokenPath, s.token)
	mux.HandleFunc("POST "+apiPrefix+"/transitClass", s.authed(s.insertClass))
	mux.HandleFunc("POST "+apiPrefix+"/transitObject", s.authed(s.insertObject))
	mux.HandleFunc("GET "+apiPrefix+"/transitObject/{id}", s.authed(s.getObject))
	mux.HandleFunc("PATCH "+apiPrefix+"/transitObject/{id}", s.authed(s.patchObject))
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// PartnerAccount rewrites a development service-account key file (as
// google.GenerateDevServiceAccount writes it) as one a partner downloads
// from Google: without farebox's development mark, and with client_email
// email and token_uri tokenURI where they are not empty.
func PartnerAccount(t testing.TB, raw []byte, email, tokenURI string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "farebox_development")
	if email != "" {
		m["client_email"] = email
	}
	if tokenURI != "" {
		m["token_uri"] = tokenURI
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TokenURL is the token endpoint (the key file's token_uri).
func (s *Server) TokenURL() string { return s.srv.URL + tokenPath }

// APIURL is the API base (--google-api-url).
func (s *Server) APIURL() string { return s.srv.URL + apiPrefix }

// FailNext makes the next n API calls answer 503.
func (s *Server) FailNext(n int) { s.mu.Lock(); s.failNext = n; s.mu.Unlock() }

// ExpireTokens forgets every issued access token (the next call gets 401).
func (s *Server) ExpireTokens() { s.mu.Lock(); s.tokens = map[string]time.Time{}; s.mu.Unlock() }

// Exchanges is how many assertions were exchanged for tokens.
func (s *Server) Exchanges() int { s.mu.Lock(); defer s.mu.Unlock(); return s.exchanges }

// Calls lists the API calls as "METHOD path status".
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Object returns the stored object id (a copy), or nil.
func (s *Server) Object(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[id]
	if !ok {
		return nil
	}
	b, _ := json.Marshal(o)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	return c
}

// HasClass reports whether class id was inserted.
func (s *Server) HasClass(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.classes[id]
	return ok
}

// Objects is how many objects exist.
func (s *Server) Objects() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.objects) }

// googleError writes Google's error JSON and returns its code.
func googleError(w http.ResponseWriter, code int, status, msg string) int {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
	return code
}

// oauthError writes an OAuth2 error answer (RFC 6749 5.2).
func oauthError(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": msg})
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		oauthError(w, "form body expected")
		return
	}
	if r.PostForm.Get("grant_type") != grantType {
		oauthError(w, "unsupported grant_type")
		return
	}
	var claims jwt.MapClaims
	_, err := jwt.ParseWithClaims(r.PostForm.Get("assertion"), &claims, func(*jwt.Token) (any, error) { return s.key, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithAudience(s.TokenURL()), jwt.WithIssuer(s.email),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(s.now))
	if err != nil {
		oauthError(w, "Invalid JWT Signature or claims: "+err.Error())
		return
	}
	iat, _ := claims.GetIssuedAt()
	exp, _ := claims.GetExpirationTime()
	if exp.Sub(iat.Time) > tokenLife {
		oauthError(w, "Invalid JWT: Token must be a short-lived token (60 minutes)")
		return
	}
	if sc, _ := claims["scope"].(string); !strings.Contains(" "+sc+" ", " "+scope+" ") {
		oauthError(w, "Invalid OAuth scope")
		return
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	tok := "ya29." + hex.EncodeToString(b)
	s.mu.Lock()
	s.tokens[tok] = s.now().Add(tokenLife)
	s.exchanges++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": int(tokenLife.Seconds()), "token_type": "Bearer"})
}

func (s *Server) authed(h func(w http.ResponseWriter, r *http.Request, body []byte) int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status := s.serveAuthed(w, r, h)
		s.mu.Lock()
		s.calls = append(s.calls, fmt.Sprintf("%s %s %d", r.Method, strings.TrimPrefix(r.URL.Path, apiPrefix), status))
		s.mu.Unlock()
	}
}

func (s *Server) serveAuthed(w http.ResponseWriter, r *http.Request, h func(w http.ResponseWriter, r *http.Request, body []byte) int) int {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	exp, known := s.tokens[tok]
	fail := s.failNext > 0
	if fail {
		s.failNext--
	}
	s.mu.Unlock()
	if !ok || !known || !s.now().Before(exp) {
		return googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
	}
	if fail {
		return googleError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "The service is currently unavailable.")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest))
	if err != nil {
		return googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "unreadable body")
	}
	return h(w, r, body)
}

func writeJSON(w http.ResponseWriter, v any) int {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
	return http.StatusOK
}

var states = map[string]bool{"ACTIVE": true, "COMPLETED": true, "EXPIRED": true, "INACTIVE": true,
	"active": true, "completed": true, "expired": true, "inactive": true}

// decodeResource reads a class or object (or a patch of one) as Google
// does: a JSON object whose required fields are non-empty strings. A
// refusal is written to w and its code returned; 0 means none.
func decodeResource(w http.ResponseWriter, body []byte, required ...string) (map[string]any, int) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, googleError(w, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
	}
	for _, f := range required {
		if v, _ := m[f].(string); v == "" {
			return nil, googleError(w, 400, "INVALID_ARGUMENT", "Missing required field: "+f)
		}
	}
	return m, 0
}

func (s *Server) insertClass(w http.ResponseWriter, r *http.Request, body []byte) int {
	c, refused := decodeResource(w, body, "id", "issuerName", "reviewStatus", "transitType")
	if refused != 0 {
		return refused
	}
	id := c["id"].(string)
	if _, ok := c["logo"].(map[string]any); !ok {
		return googleError(w, 400, "INVALID_ARGUMENT", "Missing required field: logo")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.classes[id]; dup {
		return googleError(w, 409, "ALREADY_EXISTS", "Resource already exists: "+id)
	}
	s.classes[id] = body
	return writeJSON(w, c)
}

func (s *Server) insertObject(w http.ResponseWriter, r *http.Request, body []byte) int {
	o, refused := decodeResource(w, body, "id", "classId", "state", "tripType")
	if refused != 0 {
		return refused
	}
	if !states[o["state"].(string)] {
		return googleError(w, 400, "INVALID_ARGUMENT", "Invalid value at 'resource.state'")
	}
	if err := CheckObject(o); err != nil {
		return googleError(w, 400, "INVALID_ARGUMENT", err.Error())
	}
	id, classID := o["id"].(string), o["classId"].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.classes[classID]; !ok {
		return googleError(w, 404, "NOT_FOUND", "Class not found: "+classID)
	}
	if _, dup := s.objects[id]; dup {
		return googleError(w, 409, "ALREADY_EXISTS", "Resource already exists: "+id)
	}
	s.objects[id] = o
	return writeJSON(w, o)
}

func (s *Server) getObject(w http.ResponseWriter, r *http.Request, _ []byte) int {
	id := r.PathValue("id")
	s.mu.Lock()
	o, ok := s.objects[id]
	s.mu.Unlock()
	if !ok {
		return googleError(w, 404, "NOT_FOUND", "Resource not found: "+id)
	}
	return writeJSON(w, o)
}

// patchObject merges the body's top-level fields into the object (PATCH
// semantics of the API: fields absent from the body stay).
func (s *Server) patchObject(w http.ResponseWriter, r *http.Request, body []byte) int {
	id := r.PathValue("id")
	p, refused := decodeResource(w, body)
	if refused != 0 {
		return refused
	}
	if st, has := p["state"]; has {
		if v, _ := st.(string); !states[v] {
			return googleError(w, 400, "INVALID_ARGUMENT", "Invalid value at 'resource.state'")
		}
	}
	if err := CheckObject(p); err != nil {
		return googleError(w, 400, "INVALID_ARGUMENT", err.Error())
	}
	if pid, has := p["id"]; has && pid != id {
		return googleError(w, 400, "INVALID_ARGUMENT", "id cannot be changed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[id]
	if !ok {
		return googleError(w, 404, "NOT_FOUND", "Resource not found: "+id)
	}
	for k, v := range p {
		o[k] = v
	}
	return writeJSON(w, o)
}
