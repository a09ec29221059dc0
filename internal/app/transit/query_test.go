package transit_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/apperr"
)

// TestTransitNotConfigured: an instance without transit data (a nil
// *transit.Service) answers every transit query with 503 transit_unavailable,
// and one whose feeds are not loaded yet with transit_loading.
func TestTransitNotConfigured(t *testing.T) {
	feeds := transit.NewFeeds(nil, nil, "")
	for _, c := range []struct {
		tr   *transit.Service
		code string
	}{{nil, "transit_unavailable"}, {feeds.Serve(transit.Options{}), "transit_loading"}} {
		_, err1 := c.tr.Departures("s", time.Unix(0, 0), 10, "")
		_, err2 := c.tr.Trip("t", "")
		_, err3 := c.tr.FindTrip("a", time.Unix(0, 0), "b", time.Unix(60, 0), "", "")
		_, err4 := c.tr.StationsByName("x", false, 0, 0)
		_, err5 := c.tr.StationsByPosition(0, 0)
		_, err6 := c.tr.StationByID("s", true)
		_, err7 := c.tr.Attributions()
		for i, err := range []error{err1, err2, err3, err4, err5, err6, err7} {
			if e := apperr.As(err); e == nil || e.Kind != apperr.Unavailable || e.Code != c.code {
				t.Errorf("%s: query %d: %v, want %s (unavailable)", c.code, i+1, err, c.code)
			}
		}
	}
}
