package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/farebox/farebox/internal/apperr"
)

// errorBody is the JSON error of every failing request (decisions.md).
type errorBody struct {
	Message   string              `json:"message"`
	Code      string              `json:"code"`
	Details   []apperr.FieldError `json:"details"`
	RequestID string              `json:"request_id"`
}

// statusOf maps an error kind to its HTTP status: the only place that does.
func statusOf(k apperr.Kind) int {
	switch k {
	case apperr.Invalid:
		return http.StatusBadRequest
	case apperr.Unauthenticated:
		return http.StatusUnauthorized
	case apperr.Forbidden:
		return http.StatusForbidden
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case apperr.Conflict:
		return http.StatusConflict
	case apperr.TooLarge:
		return http.StatusRequestEntityTooLarge
	case apperr.UnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case apperr.Unprocessable:
		return http.StatusUnprocessableEntity
	case apperr.RateLimited:
		return http.StatusTooManyRequests
	case apperr.Unavailable:
		return http.StatusServiceUnavailable
	case apperr.Accepted:
		return http.StatusAccepted
	}
	return http.StatusInternalServerError
}

// writeError sends err as JSON. Internal errors are logged with their cause
// and shown only as "internal error".
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := state(r)
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		err = apperr.E("decode", apperr.TooLarge, CodeBodyTooLarge, "request body is larger than the limit")
	}
	ae := apperr.As(err)
	kind := apperr.KindOf(err)
	body := errorBody{Message: "internal error", Code: CodeInternalError, Details: []apperr.FieldError{}, RequestID: st.id}
	if ae != nil && kind != apperr.Internal {
		body.Message, body.Code = ae.Msg, ae.Code
		if ae.Details != nil {
			body.Details = ae.Details
		}
	}
	status := statusOf(kind)
	if status >= 500 {
		s.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("request_id", st.id), slog.String("route", st.route), slog.String("error", err.Error()))
		if kind == apperr.Unavailable && ae != nil {
			body.Message, body.Code = ae.Msg, ae.Code
		}
	}
	if st.page && !consoleDownload(r.URL.Path) {
		s.writePageError(w, r, status, body.Message)
		return
	}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="farebox"`)
	case http.StatusServiceUnavailable:
		// Not for a write whose outcome is unknown: the client looks the
		// result up instead of retrying.
		if body.Code != apperr.CodeOutcomeUnknown {
			w.Header().Set("Retry-After", "5")
		}
	case http.StatusAccepted:
		w.Header().Set("Retry-After", "2")
	}
	writeJSON(w, status, body)
}
