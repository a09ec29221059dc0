package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/app/fares"
	"github.com/farebox/farebox/internal/apperr"
)

// The fares for journey planners (docs/fares.md): the catalog as a NeTEx
// fare delivery and as GTFS Fares v2 files. Public (no key), billed to
// nobody, limited per client address like every keyless route, and
// cacheable: the ETag and Last-Modified follow the catalog (and feed)
// version, and a client that sends the ETag back gets a 304.

// getFaresNeTEx answers GET /v1/fares/netex.xml[?area_id=].
func (s *Server) getFaresNeTEx(w http.ResponseWriter, r *http.Request) error {
	return s.faresExport(w, r, fares.FormatNeTEx)
}

// getFaresGTFS answers GET /v1/fares/gtfs-fares-v2.zip?feed_id=[&area_id=].
func (s *Server) getFaresGTFS(w http.ResponseWriter, r *http.Request) error {
	return s.faresExport(w, r, fares.FormatGTFS)
}

// faresParams are the query parameters of the fare routes.
var faresParams = map[string]bool{"area_id": true, "feed_id": true}

// FaresRequest reads the fare routes' query: area_id and feed_id at most
// once each, nothing else (a 400 naming the parameter).
func FaresRequest(format, rawQuery string) (fares.Request, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return fares.Request{}, apperr.Param("query", "query", "the query string is malformed")
	}
	for k, v := range q {
		if !faresParams[k] {
			return fares.Request{}, apperr.Param("query", k, "unknown parameter "+strings.ToValidUTF8(truncate(k, 64), "?")+"; the fare routes take area_id and feed_id")
		}
		if len(v) > 1 {
			return fares.Request{}, apperr.Param("query", k, k+" may be given once")
		}
	}
	req := fares.Request{Format: format, AreaID: q.Get("area_id"), FeedID: q.Get("feed_id")}
	return req, req.Check()
}

func (s *Server) faresExport(w http.ResponseWriter, r *http.Request, format string) error {
	req, err := FaresRequest(format, r.URL.RawQuery)
	if err != nil {
		return err
	}
	ex, err := s.Fares.Prepare(req)
	if err != nil {
		return err
	}
	// public: no key, the same answer for everyone; five minutes keep a
	// planner's polling off the instance, the ETag makes revalidation cheap.
	h := validators(w, ex.ETag, ex.LastModified, "public, max-age=300")
	if notModified(r, ex.ETag, ex.LastModified) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", ex.ContentType)
	h.Set("Content-Disposition", `attachment; filename="`+ex.FileName+`"`)
	w.WriteHeader(http.StatusOK)
	if err := ex.Write(w); err != nil {
		// The status is sent: the client sees a cut body (a broken zip or
		// XML), and the log says why.
		s.log.Error("fare export cut short", "format", format, "error", err.Error())
	}
	return nil
}

// notModified applies RFC 9110's conditional GET: If-None-Match (weak
// comparison, a list or *) when present, else If-Modified-Since.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == etag {
				return true
			}
		}
		return false
	}
	ims, err := http.ParseTime(r.Header.Get("If-Modified-Since"))
	return err == nil && !modified.Truncate(time.Second).After(ims)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// validators sets an answer's ETag, Last-Modified and Cache-Control and
// returns its header.
func validators(w http.ResponseWriter, etag string, modified time.Time, cache string) http.Header {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	h.Set("Cache-Control", cache)
	return h
}
