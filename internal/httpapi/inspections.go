package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
)

// The inspection records an inspection device posts (docs/records.md):
// the device authenticates with its own Bearer token (an inspector's, made
// by `farebox inspectors add`), never a partner's API key; its budget is
// its own (DefaultInspectorLimit per device).

// DefaultInspectorLimit is an inspection device's rate limit: a device
// posts a batch per check or, back online, its stored checks in batches.
var DefaultInspectorLimit = RateLimits{Rate: 2, Burst: 30}

// authInspector resolves an authInspector row's device token.
func (s *Server) authInspector(r *http.Request) error {
	const op = "auth"
	if s.Records == nil {
		return apperr.E(op, apperr.Unavailable, CodeInspectionRecordsUnavailable, "this instance takes no inspection records")
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return apperr.E(op, apperr.Unauthenticated, CodeInvalidAuthorizationHeader,
			"the request must contain the header Authorization: Bearer <inspector token>")
	}
	tok = strings.TrimSpace(tok)
	if strings.HasPrefix(tok, webusers.InspectorTokenPrefix) {
		// The inspector app's session token (POST /v1/inspection/sign-in.json).
		id, err := s.WebUsers.InspectorSession(r.Context(), tok)
		if apperr.KindOf(err) == apperr.NotFound {
			return apperr.E(op, apperr.Unauthenticated, CodeInspectorSessionInvalid,
				"the inspector's session has ended (signed out, expired, password changed or inspector revoked); sign in again")
		}
		if err != nil {
			return err
		}
		state(r).inspector = &records.Device{InspectorID: id}
		return nil
	}
	d, err := s.Records.Authenticate(r.Context(), tok)
	if err != nil {
		return err
	}
	state(r).inspector = &d
	return nil
}

// inspectorSignIn is POST /v1/inspection/sign-in.json: the inspector app's
// sign-in (docs/inspect.md). It answers the session's bearer token, so it
// takes no Idempotency-Key (a replay would hand the token to whoever
// repeats the key), and it is throttled like the console's sign-in: per
// client address and per name.
func (s *Server) inspectorSignIn(w http.ResponseWriter, r *http.Request) error {
	const op = "httpapi.inspectorSignIn"
	if r.Header.Get("Idempotency-Key") != "" {
		return apperr.E(op, apperr.Invalid, CodeIdempotencyKeyNotAllowed,
			"a sign-in takes no Idempotency-Key: its answer is a secret that must not be replayed")
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if err := checkJSONType(r); err != nil {
		return err
	}
	var req struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}
	if err := decodeJSON(body, &req, true); err != nil {
		return err
	}
	keys := []string{"client:" + clientKey(r, s.TrustedProxies), "inspector:" + strings.TrimSpace(req.Name)}
	now := s.app.Now()
	for _, k := range keys {
		if ok, wait := s.signIns.Allow(r.Context(), k, now); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			return apperr.E(op, apperr.RateLimited, CodeRateLimited, "too many failed sign-ins; wait before trying again")
		}
	}
	in, err := s.WebUsers.SignInInspector(r.Context(), req.Name, req.Password)
	if apperr.KindOf(err) == apperr.Unauthenticated {
		for _, k := range keys {
			s.signIns.Fail(r.Context(), k, now)
		}
	}
	if err != nil {
		return err
	}
	for _, k := range keys {
		s.signIns.Succeed(r.Context(), k)
	}
	maxAge := s.InspectMaxDataAge
	if maxAge <= 0 {
		maxAge = DefaultInspectMaxDataAge
	}
	tol := s.InspectWindowTolerance
	switch {
	case tol == 0:
		tol = DefaultInspectWindowTolerance
	case tol < 0:
		tol = 0
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, inspectorSignInJSON{Token: in.Token, InspectorID: in.InspectorID, Name: in.Name,
		ExpiresAt: clock.Timestamp(in.ExpiresAt), MaxDataAgeSeconds: int64(maxAge / time.Second),
		WindowToleranceSeconds: int64(tol / time.Second)})
	return nil
}

// inspectionRotatingSecret is GET /v1/inspection/rotating-secret.json: the
// rotating-barcode secret an inspector's device checks the Google Wallet
// rotating codes of dynamic tickets with, offline (docs/inspect.md). Only
// an inspector's token reaches it (the authInspector row: the app's
// session token or a device token; never an API key, never anonymous): a
// holder of the secret can make live codes (docs/wallet.md "Trade-offs").
func (s *Server) inspectionRotatingSecret(w http.ResponseWriter, r *http.Request) error {
	sec, err := s.Wallets.RotatingSecret()
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, sec)
	return nil
}

// inspectorSignInJSON is the answer of POST /v1/inspection/sign-in.json.
type inspectorSignInJSON struct {
	Token             string `json:"token"`
	InspectorID       string `json:"inspector_id"`
	Name              string `json:"name"`
	ExpiresAt         string `json:"expires_at"`
	MaxDataAgeSeconds int64  `json:"max_data_age_seconds"`
	// WindowToleranceSeconds is the clock difference accepted on each side
	// of a dynamic code's window (--inspect-window-tolerance).
	WindowToleranceSeconds int64 `json:"window_tolerance_seconds"`
}

// DefaultInspectMaxDataAge is how old the inspector app's keys, revocation
// feed and blocklist may be before it refuses to say "valid"
// (--inspect-max-data-age).
const DefaultInspectMaxDataAge = 24 * time.Hour

// DefaultInspectWindowTolerance is the inspector app's clock tolerance on
// each side of a dynamic code's window (--inspect-window-tolerance): the
// 30 s `farebox inspect --window-tolerance` defaults to.
const DefaultInspectWindowTolerance = 30 * time.Second

// postInspections is POST /v1/inspection/records.json: a batch of checks.
func (s *Server) postInspections(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, records.MaxBodyBytes)
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if err := checkJSONType(r); err != nil {
		return err
	}
	var req records.BatchRequest
	if err := decodeJSON(body, &req, true); err != nil {
		return err
	}
	out, err := s.Records.Post(r.Context(), claimOf(r), *state(r).inspector, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
