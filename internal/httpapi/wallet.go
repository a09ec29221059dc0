package httpapi

import (
	"compress/gzip"
	"encoding/json"
	"github.com/farebox/farebox/internal/apperr"
	"net/http"
	"strconv"
	"strings"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/wallets"
)

// The wallet and engine endpoints (docs/wallet.md); wallets.Service builds
// what they answer.

// passTicket loads the ticket of the request (the route row bills its
// account).
func (s *Server) passTicket(r *http.Request) (app.TicketDetails, error) {
	return s.app.Ticket(r.Context(), r.PathValue("ticket_id"))
}

// applePass answers GET …/passes/apple_wallet/{ticket_id}.pkpass with the
// signed pass (voided when the ticket was restored away).
func (s *Server) applePass(w http.ResponseWriter, r *http.Request) error {
	d, err := s.passTicket(r)
	if err != nil {
		return err
	}
	b, err := s.Wallets.ApplePass(r.Context(), d)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", wallets.ApplePassContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `attachment; filename="ticket.pkpass"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}

func (s *Server) googleSaveURL(r *http.Request) (string, error) {
	d, err := s.passTicket(r)
	if err != nil {
		return "", err
	}
	return s.Wallets.GoogleSaveURL(r.Context(), d)
}

// googlePassRedirect answers GET …/passes/google_wallet/{ticket_id} with a
// 302 to the save link (browsers, e-mail links).
func (s *Server) googlePassRedirect(w http.ResponseWriter, r *http.Request) error {
	u, err := s.googleSaveURL(r)
	if err != nil {
		return err
	}
	return found(w, u, "no-store")
}

// found answers 302 to loc with the Cache-Control cache.
func found(w http.ResponseWriter, loc, cache string) error {
	w.Header().Set("Location", loc)
	w.Header().Set("Cache-Control", cache)
	w.WriteHeader(http.StatusFound)
	return nil
}

// googlePassLink answers GET …/passes/google_wallet/{ticket_id}.json with
// the bare save URL as the whole body: Android splits it on "/save/" and
// takes the rest as the JWT, so no JSON quoting and no newline
// (client-contract 7).
func (s *Server) googlePassLink(w http.ResponseWriter, r *http.Request) error {
	u, err := s.googleSaveURL(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(u))
	return nil
}

// engineRedirect answers …/<engine>/1 with a 302 to the current version's
// three-segment URL under the same version prefix (client-contract 6.1).
func (s *Server) engineRedirect(name, prefix string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		loc, err := wallets.EngineLocation(name, prefix)
		if err != nil {
			return err
		}
		return found(w, loc, "no-cache")
	}
}

// engineDocument serves the self-contained HTML of one engine version.
func (s *Server) engineDocument(name string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		html, err := wallets.EngineDocument(name, []string{r.PathValue("major"), r.PathValue("minor"), r.PathValue("patch")})
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", wallets.EngineContentType)
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(html)
		return nil
	}
}

// inspectionKeys answers GET /v1/inspection/keys.json with the public keys.
func (s *Server) inspectionKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.Wallets.InspectionKeys()
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, keys)
	return nil
}

// revocations answers GET /v1/inspection/revocations.json?since=N with the
// signed revocation feed after N (docs/wallet.md).
func (s *Server) revocations(w http.ResponseWriter, r *http.Request) error {
	since, err := querySeq(r, "since")
	if err != nil {
		return err
	}
	feed, err := s.Wallets.Revocations(r.Context(), since)
	if err != nil {
		return err
	}
	return writeSignedList(w, r, feed)
}

// blocklist answers GET /v1/inspection/blocklist.json?since=N&limit=M with
// the signed VDV-KA and UIC 918.3 blocklist after N (docs/blocklist.md).
func (s *Server) blocklist(w http.ResponseWriter, r *http.Request) error {
	since, err := querySeq(r, "since")
	if err != nil {
		return err
	}
	limit, err := querySeq(r, "limit")
	if err != nil || limit > wallets.MaxBlocklistPage || (limit == 0 && r.URL.Query().Get("limit") != "") {
		return apperr.Param("query", "limit", "limit must be 1 to 10000 entries")
	}
	l, err := s.Wallets.Blocklist(r.Context(), since, int(limit))
	if err != nil {
		return err
	}
	return writeSignedList(w, r, l)
}

// querySeq is the query parameter name as a number (0 or more; 0 when
// absent).
func querySeq(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, apperr.Param("query", name, name+" must be a feed sequence number (0 or more)")
	}
	return n, nil
}

// writeSignedList writes a signed list (the revocation feed, the
// blocklist), gzip-compressed when the client accepts it: a sync from
// empty is about 200 bytes per entry as JSON (the signature covers the
// uncompressed list).
func writeSignedList(w http.ResponseWriter, r *http.Request, list json.Marshaler) error {
	w.Header().Set("Cache-Control", "public, max-age=60")
	w.Header().Add("Vary", "Accept-Encoding")
	if !acceptsGzip(r) {
		writeJSON(w, http.StatusOK, list)
		return nil
	}
	body, err := list.MarshalJSON()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Encoding", "gzip")
	w.WriteHeader(http.StatusOK)
	zw := gzip.NewWriter(w)
	_, _ = zw.Write(body)
	_, _ = zw.Write([]byte("\n"))
	return zw.Close()
}

// acceptsGzip reports whether the client lists gzip in Accept-Encoding
// (and does not refuse it with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
