package httpapi

import (
	"net/http"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/apperr"
)

// eventParams are the query parameters of GET /v1/events.json; any other
// is refused, so a misspelt filter does not silently list everything.
var eventParams = map[string]bool{"limit": true, "starting_after": true, "ending_before": true, "type": true,
	"created[gte]": true, "created[lt]": true}

// getEvents lists the caller's events of its environment, newest first
// (docs/events.md).
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for k, v := range q {
		if !eventParams[k] {
			return apperr.Param("httpapi.getEvents", k, "unknown query parameter "+k)
		}
		if len(v) > 1 {
			return apperr.Param("httpapi.getEvents", k, k+" given more than once")
		}
	}
	page, err := s.app.Events(r.Context(), principalOf(r), app.EventsRequest{Limit: q.Get("limit"),
		StartingAfter: q.Get("starting_after"), EndingBefore: q.Get("ending_before"), Type: q.Get("type"),
		CreatedGTE: q.Get("created[gte]"), CreatedLT: q.Get("created[lt]")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, app.EventsResponse(page))
	return nil
}
