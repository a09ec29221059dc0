package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"

	"github.com/farebox/farebox/internal/app"
	billingapp "github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/apperr"
)

// wrap builds the per-route pipeline: auth, limits, attribution,
// idempotency, handler, ledger.
func (s *Server) wrap(rt route) http.HandlerFunc {
	name := rt.method + " " + rt.path
	return func(w http.ResponseWriter, r *http.Request) {
		st := state(r)
		st.route = name
		st.strict = rt.auth == authPartner
		st.page = isPage(rt.path)
		buf := newBuffer()
		keyless := rt.auth == authNone || rt.auth == authCapability || rt.auth == authOperator || rt.auth == authDashboard
		err := s.authenticate(rt.auth, r)
		if err == nil && keyless {
			err = s.keylessLimit(rt, r, buf)
		} else if err == nil {
			err = s.rateLimit(r, buf)
		}
		if err == nil {
			err = s.attribute(rt.bill, r)
		}
		if err == nil && st.page && r.Method == http.MethodPost {
			// Before the handler: a forged form changes nothing (pages.go).
			err = s.checkCSRF(r)
		}
		if err == nil {
			if key := r.Header.Get("Idempotency-Key"); key != "" && r.Method == http.MethodPost {
				err = s.idempotent(rt, key, buf, r)
			} else {
				err = rt.h(buf, r.WithContext(app.TrackCommits(r.Context())))
			}
		}
		if err != nil {
			keep := buf.header.Clone()
			buf.reset()
			copyRateHeaders(buf.header, keep)
			s.writeError(buf, r, err)
		}
		if err := s.record(r, buf.status); err != nil {
			buf.reset()
			s.writeError(buf, r, err)
		}
		buf.flush(w)
		buf.release()
	}
}

// authenticate resolves the API key for partner and transit routes.
func (s *Server) authenticate(mode authMode, r *http.Request) error {
	const op = "auth"
	if mode == authNone || mode == authCapability {
		return nil
	}
	if mode == authOperator {
		return s.authOperatorSession(r)
	}
	if mode == authDashboard {
		return s.authDashboardSession(r)
	}
	if mode == authInspector {
		return s.authInspector(r)
	}
	key, fromHeader := "", false
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
			return apperr.E(op, apperr.Unauthenticated, CodeInvalidAuthorizationHeader, "Authorization header must be \"Bearer <API key>\"")
		}
		key, fromHeader = strings.TrimSpace(tok), true
	}
	if !fromHeader {
		q := r.URL.Query().Get("api_key")
		switch {
		case q != "" && mode == authPartner:
			return apperr.E(op, apperr.Unauthenticated, CodeAPIKeyInQueryNotAllowed,
				"this endpoint takes the API key only as \"Authorization: Bearer <API key>\", not as a query parameter")
		case q != "":
			key = q
		case mode == authTransit:
			return apperr.E(op, apperr.Unauthenticated, CodeAPIKeyMissing,
				"the request must contain an API key: Authorization: Bearer <key> or the api_key query parameter")
		default:
			return apperr.E(op, apperr.Unauthenticated, CodeAPIKeyMissing, "the request must contain the header Authorization: Bearer <API key>")
		}
	}
	p, err := s.Accounts.Authenticate(r.Context(), key)
	if err != nil {
		return err
	}
	state(r).principal = &p
	return nil
}

// rateLimit applies the caller's per-key budget; the headers go on buf so
// they survive into the response (and into an idempotent replay's).
func (s *Server) rateLimit(r *http.Request, buf *buffer) error {
	if d := state(r).inspector; d != nil {
		return s.inspectorLimit.allow(r.Context(), s.perKey, "inspector:"+d.InspectorID, buf.header, s.app.Now())
	}
	p := state(r).principal
	if p == nil {
		return nil
	}
	return s.RateLimits.allow(r.Context(), s.perKey, p.KeyID, buf.header, s.app.Now())
}

// keylessLimit applies the per-capability and per-client limits to a
// request without a key. A refusal is recorded as refused for the
// capability's owner when attribution already knows it (the owner cache);
// it never reads the database, so a flood of refused requests costs none.
func (s *Server) keylessLimit(rt route, r *http.Request, buf *buffer) error {
	err := s.Keyless.allow(s.keyless, rt.method+" "+rt.path, r, buf.header, s.app.Now())
	if err == nil {
		return nil
	}
	if key, ok := ownerKeyOf(rt.bill, r); ok {
		if o, known := s.owners.get(key); known {
			billTo(r, o)
		}
	}
	return err
}

// idempotent runs a POST at most once per (caller, Idempotency-Key) and
// replays the stored response for repeats (decisions.md "Requests and responses").
func (s *Server) idempotent(rt route, key string, buf *buffer, r *http.Request) error {
	const op = "idempotency"
	if len(key) > 255 || !printable(key) {
		return apperr.E(op, apperr.Invalid, CodeInvalidIdempotencyKey, "Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(append([]byte(r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+"\n"), body...))
	hash := hex.EncodeToString(sum[:])
	scope := "path:" + r.URL.Path
	if p := state(r).principal; p != nil {
		scope = app.IdempotencyScope(*p)
	} else if d := state(r).inspector; d != nil {
		scope = "inspector:" + d.InspectorID
	}
	// A claim outlives the request that holds it by one more request
	// timeout (app.ClaimIdempotencyKey).
	claim, replay, err := s.app.ClaimIdempotencyKey(r.Context(), scope, key, hash, 2*s.RequestTimeout)
	if err != nil {
		return err
	}
	if replay != nil {
		buf.header.Set("Content-Type", replay.ContentType)
		buf.header.Set("Idempotency-Replayed", "true")
		buf.WriteHeader(replay.Status)
		_, _ = buf.Write(replay.Body)
		markUncounted(r, billingapp.ReasonReplay)
		return nil
	}
	state(r).claim = claim
	if herr := rt.h(buf, r.WithContext(app.TrackCommits(r.Context()))); herr != nil {
		buf.reset()
		s.writeError(buf, r, herr)
	}
	// Keep a request's outcome unless the service itself failed: a 5xx
	// committed nothing, so the client may retry it with the same key.
	ctx := context.WithoutCancel(r.Context())
	if buf.status >= 500 {
		return s.app.ReleaseIdempotencyKey(ctx, scope, key)
	}
	buf.header.Set("Idempotency-Replayed", "false")
	return s.app.CompleteIdempotencyKey(ctx, scope, key,
		app.StoredResponse{Status: buf.status, ContentType: buf.header.Get("Content-Type"), Body: buf.body.Bytes()})
}

func printable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// record hands the request's usage ledger row to the ledger: the deferred
// ledger returns at once, the others after its commit.
func (s *Server) record(r *http.Request, status int) error {
	if s.Ledger == nil {
		return nil
	}
	st := state(r)
	o := billingapp.RequestOutcome{RequestID: st.id, Endpoint: st.route, Status: status, Uncounted: st.uncounted}
	switch {
	case st.principal != nil:
		o.AccountID, o.Environment = st.principal.AccountID, st.principal.Environment
	case st.attrAccount != "":
		o.AccountID, o.Environment = st.attrAccount, st.attrEnv
	default:
		return nil
	}
	ev := s.Billing.UsageEvent(o)
	s.Metrics.countUsage(ev.Counted, ev.Reason)
	// A ledger that commits before the response waits for the batch
	// holding the row even past the request's deadline (a row being written
	// is never abandoned); the ledger bounds each write by
	// usage.WriteTimeout.
	if err := s.Ledger.Record(r.Context(), ev.Row); err != nil {
		s.log.LogAttrs(r.Context(), slog.LevelError, "usage ledger write failed",
			slog.String("request_id", st.id), slog.String("error", err.Error()))
		return apperr.E("usage", apperr.Unavailable, CodeUsageLedgerUnavailable, "the request could not be recorded; retry later").WithCause(err)
	}
	return nil
}

// copyRateHeaders keeps the rate-limit fields when an error replaces a response.
func copyRateHeaders(dst, src http.Header) {
	for _, k := range []string{"RateLimit", "RateLimit-Policy", "Retry-After"} {
		if v := src.Get(k); v != "" {
			dst.Set(k, v)
		}
	}
}
