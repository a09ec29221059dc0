package httpapi

import (
	"net/http"
	"strings"

	"github.com/farebox/farebox/internal/app/wallets"
)

// Apple's PassKit web service under /wallet/apple (webServiceURL =
// public URL + "/wallet/apple"; docs/wallet.md, "Apple Wallet updates").
// Wallet calls these on its own: no API key, billed to nobody, limited
// per client address and per pass or device like every keyless route.

// Body limits of the web service (a registration is one push token; a
// log a few messages).
const (
	maxAppleRegistrationBody = 4 << 10
	maxAppleLogBody          = wallets.MaxAppleLogBody
)

// applePassToken is the token of "Authorization: ApplePass <token>", or "".
func applePassToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || scheme != "ApplePass" {
		return ""
	}
	return strings.TrimSpace(tok)
}

// decodeLimited decodes the JSON body (the edge's string rule applies;
// unknown fields are ignored, as Wallet may add some) read up to limit
// bytes (413 beyond).
func decodeLimited(w http.ResponseWriter, r *http.Request, limit int64, dst any) error {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	return decode(r, dst)
}

// registerAppleDevice answers POST …/devices/{device}/registrations/{type}/{serial}:
// 201 registered, 200 already registered, 401 bad token.
func (s *Server) registerAppleDevice(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		PushToken string `json:"pushToken"`
	}
	if err := decodeLimited(w, r, maxAppleRegistrationBody, &body); err != nil {
		return err
	}
	created, err := s.Wallets.RegisterAppleDevice(r.Context(), claimOf(r), wallets.AppleRegistration{Device: r.PathValue("device_library_id"),
		PassType: r.PathValue("pass_type_id"), Serial: r.PathValue("serial_number"), Token: applePassToken(r), PushToken: body.PushToken})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{})
	return nil
}

// unregisterAppleDevice answers DELETE …/devices/{device}/registrations/{type}/{serial}.
func (s *Server) unregisterAppleDevice(w http.ResponseWriter, r *http.Request) error {
	if err := s.Wallets.UnregisterAppleDevice(r.Context(), claimOf(r), r.PathValue("device_library_id"), r.PathValue("pass_type_id"),
		r.PathValue("serial_number"), applePassToken(r)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}

// updatedAppleSerials answers GET …/devices/{device}/registrations/{type}?passesUpdatedSince=tag:
// 200 {serialNumbers, lastUpdated}, or 204 when nothing changed.
func (s *Server) updatedAppleSerials(w http.ResponseWriter, r *http.Request) error {
	out, ok, err := s.Wallets.UpdatedAppleSerials(r.Context(), r.PathValue("device_library_id"), r.PathValue("pass_type_id"),
		r.URL.Query().Get("passesUpdatedSince"))
	if err != nil {
		return err
	}
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// latestApplePass answers GET …/passes/{type}/{serial}: the current pass
// with ETag and Last-Modified, or 304 when If-None-Match names its ETag
// (or, without If-None-Match, If-Modified-Since is not older; app
// LatestApplePass says why that cannot miss a change in the same second).
func (s *Server) latestApplePass(w http.ResponseWriter, r *http.Request) error {
	req := wallets.ApplePassRequest{PassType: r.PathValue("pass_type_id"), Serial: r.PathValue("serial_number"),
		Token: applePassToken(r), IfNoneMatch: r.Header.Get("If-None-Match")}
	if h := r.Header.Get("If-Modified-Since"); h != "" {
		req.IfModifiedSince, _ = http.ParseTime(h) // an unreadable date is ignored (RFC 9110 13.1.3)
	}
	a, err := s.Wallets.LatestApplePass(r.Context(), req)
	if err != nil {
		return err
	}
	h := validators(w, a.ETag, a.LastModified, "no-store")
	if a.NotModified {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", wallets.ApplePassContentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.Pass)
	return nil
}

// appleLog answers POST …/v1/log: the messages go to the service log.
func (s *Server) appleLog(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Logs []string `json:"logs"`
	}
	if err := decodeLimited(w, r, maxAppleLogBody, &body); err != nil {
		return err
	}
	if _, err := s.Wallets.AppleLog(body.Logs); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{})
	return nil
}
