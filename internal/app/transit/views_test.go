package transit

import (
	"testing"

	"github.com/farebox/farebox/internal/departure"
	"github.com/farebox/farebox/internal/testtool"
)

// TestViewsEncodeAsTheIndex: the transit views write byte for byte what the
// departure index's values wrote before the views existed, with every field
// set, with absent and empty lists, and with text of every script.
func TestViewsEncodeAsTheIndex(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	plat := "4 (غرب) 東 🚆"
	st := departure.Station{ID: "s:1", Name: "Zürich HB – תחנה <&>", Position: departure.Position{Latitude: 47.378, Longitude: -8.54}}
	alerts := []departure.Alert{
		{ID: "a1", Header: "Störung", Description: "線路工事 🚧", URL: "https://x.example/?a=1&b=<2>", Cause: "CONSTRUCTION", Effect: "DETOUR",
			ActivePeriods: []departure.AlertPeriod{{Start: p(1), End: nil}, {Start: nil, End: p(2)}}},
		{ID: "a2", ActivePeriods: []departure.AlertPeriod{}},
		{ID: "a3"},
	}
	trips := []departure.Trip{
		{},
		{ID: "t", Stops: []departure.TripStop{}, GeoJSON: departure.Geometry{Type: "MultiLineString", Coordinates: [][][2]float64{}}, Alerts: []departure.Alert{}},
		{ID: "t:1", Name: "S 3", Added: true, Alerts: alerts,
			GeoJSON: departure.Geometry{Type: "MultiLineString", Coordinates: [][][2]float64{{{8.5, 47.3}, {8.6, 47.4}}}},
			Stops: []departure.TripStop{
				{Station: &st, Status: "predicted", Arrival: &departure.EventTime{ScheduledAt: 5, PredictedAt: p(6), Platform: "4", ScheduledPlatform: &plat},
					Departure: &departure.EventTime{ScheduledAt: 7}, Alerts: alerts[:1]},
				{Status: "skipped"},
			}},
	}
	for _, tr := range trips {
		testtool.SameJSON(t, tr, tripOf(tr))
	}
	testtool.SameJSON(t, st, stationOf(st))
	testtool.SameJSON(t, []departure.Station{st, {}}, stationsOf([]departure.Station{st, {}}))
	testtool.SameJSON(t, []departure.Station{}, stationsOf(nil))
	a := departure.Attribution{HTML: "<a href=\"x\">© ÖBB</a>", Text: "© ÖBB", URL: "https://x.example"}
	testtool.SameJSON(t, a, Attribution(a))
}
