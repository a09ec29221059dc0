package transit

import "github.com/farebox/farebox/internal/departure"

// The transit answers the transport writes. They are this package's, not
// the departure index's: the index may change its types without changing
// the API. The fields and JSON keys are those of the interface
// (docs/transit.md); the strict Kotlin client rejects any other key of a
// station.

// Position is a WGS84 coordinate.
type Position struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

// Station is a station object: id, name and position, nothing else.
type Station struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Position Position `json:"position"`
}

// Attribution is the answer of /v1/attributions.json.
type Attribution struct {
	HTML string `json:"html"`
	Text string `json:"text"`
	URL  string `json:"url"`
}

// Trip is the answer of /v1/trips/{id}.json and of the trip search.
type Trip struct {
	ID      string     `json:"id"`
	Name    string     `json:"name"`
	Stops   []TripStop `json:"stops"`
	GeoJSON Geometry   `json:"geojson"`
	Alerts  []Alert    `json:"alerts,omitempty"` // service alerts for the run; absent when none
	Added   bool       `json:"added,omitempty"`  // the run exists only in realtime; absent otherwise
}

// TripStop is one stop of a Trip.
type TripStop struct {
	Station   *Station   `json:"station,omitempty"`
	Status    string     `json:"status"` // scheduled, predicted, skipped, cancelled
	Arrival   *EventTime `json:"arrival,omitempty"`
	Departure *EventTime `json:"departure,omitempty"`
	Alerts    []Alert    `json:"alerts,omitempty"` // alerts about the stop's station; absent when none
}

// EventTime is an arrival or departure of a trip stop (epoch ms).
type EventTime struct {
	ScheduledAt int64  `json:"scheduled_at"`
	PredictedAt *int64 `json:"predicted_at"`
	Platform    string `json:"platform"`
	// ScheduledPlatform is the timetable's platform when realtime moved
	// the stop to another one; absent otherwise.
	ScheduledPlatform *string `json:"scheduled_platform,omitempty"`
}

// Geometry is a GeoJSON MultiLineString.
type Geometry struct {
	Type        string         `json:"type"`
	Coordinates [][][2]float64 `json:"coordinates"`
}

// Alert is a service alert in the visitor's language.
type Alert struct {
	ID            string        `json:"id"`
	Header        string        `json:"header"`
	Description   string        `json:"description"`
	URL           string        `json:"url"`
	Cause         string        `json:"cause"`
	Effect        string        `json:"effect"`
	ActivePeriods []AlertPeriod `json:"active_periods"`
}

// AlertPeriod is an active period in epoch ms; null ends are open.
type AlertPeriod struct {
	Start *int64 `json:"start"`
	End   *int64 `json:"end"`
}

// Tile is a Mapbox Vector Tile, plain and gzip-compressed.
type Tile struct {
	Raw, Gzip []byte
}

func stationOf(s departure.Station) Station {
	return Station{ID: s.ID, Name: s.Name, Position: Position(s.Position)}
}

// stationsOf keeps an empty list empty (never nil: the answer is []).
func stationsOf(in []departure.Station) []Station {
	out := make([]Station, len(in))
	for i, s := range in {
		out[i] = stationOf(s)
	}
	return out
}

func tripOf(t departure.Trip) Trip {
	out := Trip{ID: t.ID, Name: t.Name, GeoJSON: Geometry(t.GeoJSON), Alerts: alertsOf(t.Alerts), Added: t.Added}
	if t.Stops != nil {
		out.Stops = make([]TripStop, len(t.Stops))
	}
	for i, s := range t.Stops {
		v := TripStop{Status: s.Status, Arrival: (*EventTime)(s.Arrival), Departure: (*EventTime)(s.Departure), Alerts: alertsOf(s.Alerts)}
		if s.Station != nil {
			st := stationOf(*s.Station)
			v.Station = &st
		}
		out.Stops[i] = v
	}
	return out
}

// alertsOf keeps nil nil and an empty list empty, as the index made them.
func alertsOf(in []departure.Alert) []Alert {
	if in == nil {
		return nil
	}
	out := make([]Alert, len(in))
	for i, a := range in {
		out[i] = Alert{ID: a.ID, Header: a.Header, Description: a.Description, URL: a.URL, Cause: a.Cause, Effect: a.Effect}
		if a.ActivePeriods != nil {
			out[i].ActivePeriods = make([]AlertPeriod, len(a.ActivePeriods))
			for j, p := range a.ActivePeriods {
				out[i].ActivePeriods[j] = AlertPeriod(p)
			}
		}
	}
	return out
}
