package httpapi

import (
	"net/http"
	"strings"

	"github.com/farebox/farebox/internal/app/records"
	"github.com/farebox/farebox/internal/apperr"
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
	d, err := s.Records.Authenticate(r.Context(), strings.TrimSpace(tok))
	if err != nil {
		return err
	}
	state(r).inspector = &d
	return nil
}

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
