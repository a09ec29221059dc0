package departure

// Position is a WGS84 coordinate.
type Position struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

// Station is exactly the shape the strict Kotlin client accepts: no other keys.
type Station struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Position Position `json:"position"`
}

// DepartureTime is the "departure" object of a board entry; the Kotlin
// client rejects any key beyond these three.
type DepartureTime struct {
	ScheduledAt int64  `json:"scheduled_at"` // epoch ms
	PredictedAt *int64 `json:"predicted_at"` // epoch ms or null
	Platform    string `json:"platform"`     // "" when unknown
}

// TripType classifies a route for the JavaScript client.
type TripType struct {
	Kind    string `json:"kind"`    // bus, tram, subway, rail, ferry, aerial, funicular, other
	Product string `json:"product"` // finer: regional_train, suburban_train, coach, trolleybus, ...
}

// TripRef is the "trip" object of a board entry.
type TripRef struct {
	ID           string   `json:"id"`
	Headsign     string   `json:"headsign"`
	LineName     string   `json:"line_name"`
	Type         TripType `json:"type"`
	Provider     string   `json:"provider"`
	EndStationID string   `json:"end_station_id"`
	Cancelled    bool     `json:"cancelled"` // realtime: the trip is cancelled (scheduled time kept)
	Realtime     bool     `json:"realtime"`  // a realtime update applies to this trip
	// Added: the run exists only in realtime (ADDED, NEW, DUPLICATED or
	// REPLACEMENT); absent otherwise.
	Added bool `json:"added,omitempty"`
	// ScheduledPlatform is the timetable's platform when realtime moved
	// the departure to another one (departure.platform); absent otherwise.
	ScheduledPlatform *string `json:"scheduled_platform,omitempty"`
	Alerts            []Alert `json:"alerts,omitempty"` // service alerts for this departure; absent when none
	// alertsJSON is Alerts encoded (shared, read-only) when they come from
	// an alert index; AppendDeparturesJSON copies it.
	alertsJSON []byte
}

// Departure is one board entry.
type Departure struct {
	Departure DepartureTime `json:"departure"`
	Trip      TripRef       `json:"trip"`
}

// EventTime is an arrival or departure of a trip stop.
type EventTime struct {
	ScheduledAt int64  `json:"scheduled_at"`
	PredictedAt *int64 `json:"predicted_at"`
	Platform    string `json:"platform"`
	// ScheduledPlatform is the timetable's platform when realtime moved
	// the stop to another one; absent otherwise.
	ScheduledPlatform *string `json:"scheduled_platform,omitempty"`
}

// TripStop is one stop of a Trip.
type TripStop struct {
	Station   *Station   `json:"station,omitempty"`
	Status    string     `json:"status"` // scheduled, predicted, skipped, cancelled
	Arrival   *EventTime `json:"arrival,omitempty"`
	Departure *EventTime `json:"departure,omitempty"`
	// Alerts about the stop's station (a stop or station selected without
	// route, trip or agency), active at the request; absent when none. On
	// the stop, not in station: station objects stay exactly what the
	// Kotlin client accepts.
	Alerts []Alert `json:"alerts,omitempty"`
}

// Geometry is a GeoJSON MultiLineString.
type Geometry struct {
	Type        string         `json:"type"`
	Coordinates [][][2]float64 `json:"coordinates"`
}

// Trip is the response of /v1/trips/{id}.json.
type Trip struct {
	ID      string     `json:"id"`
	Name    string     `json:"name"`
	Stops   []TripStop `json:"stops"`
	GeoJSON Geometry   `json:"geojson"`
	Alerts  []Alert    `json:"alerts,omitempty"` // service alerts for the run; absent when none
	Added   bool       `json:"added,omitempty"`  // the run exists only in realtime; absent otherwise
}

// Attribution is the response of /v1/attributions.json.
type Attribution struct {
	HTML string `json:"html"`
	Text string `json:"text"`
	URL  string `json:"url"`
}

// typeOf maps a GTFS route_type (basic or extended) to kind and product.
func typeOf(rt int32) TripType {
	switch {
	case rt == 0, rt >= 900 && rt < 1000:
		return TripType{"tram", "tram"}
	case rt == 1, rt == 401, rt == 402, rt == 400:
		return TripType{"subway", "subway"}
	case rt == 403, rt == 404:
		return TripType{"subway", "urban_rail"}
	case rt == 2:
		return TripType{"rail", "train"}
	case rt == 101, rt == 102, rt == 105:
		return TripType{"rail", "long_distance_train"}
	case rt == 103, rt == 106:
		return TripType{"rail", "regional_train"}
	case rt == 109:
		return TripType{"rail", "suburban_train"}
	case rt >= 100 && rt < 200:
		return TripType{"rail", "train"}
	case rt == 12, rt == 405:
		return TripType{"rail", "monorail"}
	case rt == 3, rt >= 700 && rt < 800:
		return TripType{"bus", "bus"}
	case rt >= 200 && rt < 300:
		return TripType{"bus", "coach"}
	case rt == 11, rt == 800:
		return TripType{"bus", "trolleybus"}
	case rt == 4, rt >= 1000 && rt < 1100, rt == 1200:
		return TripType{"ferry", "ferry"}
	case rt == 5:
		return TripType{"tram", "cable_tram"}
	case rt == 6, rt >= 1300 && rt < 1400:
		return TripType{"aerial", "gondola"}
	case rt == 7, rt == 1400:
		return TripType{"funicular", "funicular"}
	}
	return TripType{"other", "other"}
}
