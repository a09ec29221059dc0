package departure

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
)

func keysOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestJSONShapes checks the exact keys the strict Kotlin client accepts.
func TestJSONShapes(t *testing.T) {
	ix := index(t, caltrainHub(t), "ct", "caltrain-2023.zip")
	deps, err := ix.Departures("farebox-station-ct_22nd_street", time.Date(2023, 11, 7, 17, 0, 0, 0, la(t)), 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(deps)
	var entries []map[string]json.RawMessage
	json.Unmarshal(b, &entries)
	if len(entries) != 3 {
		t.Fatal(string(b))
	}
	for _, e := range entries {
		if got := keysOf(t, e["departure"]); !slices.Equal(got, []string{"platform", "predicted_at", "scheduled_at"}) {
			t.Fatalf("departure keys %v", got)
		}
		var dep struct {
			Platform    *string
			ScheduledAt json.Number `json:"scheduled_at"`
		}
		json.Unmarshal(e["departure"], &dep)
		if dep.Platform == nil || strings.ContainsAny(dep.ScheduledAt.String(), ".e") {
			t.Fatalf("platform must be a string and times integers: %s", e["departure"])
		}
		trip := keysOf(t, e["trip"])
		for _, k := range []string{"id", "headsign", "line_name", "type", "provider", "end_station_id"} {
			if !slices.Contains(trip, k) {
				t.Fatalf("trip lacks %s: %v", k, trip)
			}
		}
		var tt map[string]json.RawMessage
		json.Unmarshal(e["trip"], &tt)
		if got := keysOf(t, tt["type"]); !slices.Equal(got, []string{"kind", "product"}) {
			t.Fatalf("type keys %v", got)
		}
	}
	if !strings.Contains(string(b), `"predicted_at":null`) {
		t.Fatal("trip 309 without RT must have predicted_at null")
	}
	st, err := ix.StationByID("farebox-station-ct_22nd_street")
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := json.Marshal(st)
	if string(sb) != `{"id":"farebox-station-ct_22nd_street","name":"22nd Street","position":{"latitude":37.756972,"longitude":-122.392492}}` {
		t.Fatal(string(sb))
	}
}

func TestTripView(t *testing.T) {
	ix := index(t, caltrainHub(t), "ct", "caltrain-2023.zip")
	f := feed(t, "caltrain-2023.zip")
	tr, err := ix.Trip("farebox-trip-ct_412_20231107")
	if err != nil {
		t.Fatal(err)
	}
	ti := int32(slices.Index(f.Trips.ID, "412"))
	n := int(f.Trips.First[ti+1] - f.Trips.First[ti])
	if tr.ID != "farebox-trip-ct_412_20231107" || tr.Name != "L4 412" || len(tr.Stops) != n || len(tr.GeoJSON.Coordinates) != n-1 || tr.GeoJSON.Type != "MultiLineString" {
		t.Fatalf("%s %q %d stops, %d lines", tr.ID, tr.Name, len(tr.Stops), len(tr.GeoJSON.Coordinates))
	}
	first, last := tr.Stops[0], tr.Stops[n-1]
	if first.Arrival != nil || first.Departure == nil || last.Departure != nil || last.Arrival == nil {
		t.Fatal("first stop has only a departure, last only an arrival")
	}
	// 412 leaves San Francisco (70012) at 17:10 PST, RT departure 1699405800; 22nd St (70022) 1699406150.
	if first.Station.ID != "farebox-station-ct_san_francisco" || first.Departure.ScheduledAt != ms(time.Date(2023, 11, 7, 17, 10, 0, 0, la(t))) ||
		first.Departure.PredictedAt == nil || *first.Departure.PredictedAt != 1699405800000 || first.Status != "predicted" {
		t.Fatalf("first stop %+v %+v", first.Station, first.Departure)
	}
	if tr.Stops[1].Station.Name != "22nd Street" || *tr.Stops[1].Departure.PredictedAt != 1699406150000 {
		t.Fatalf("second stop %+v", tr.Stops[1])
	}
	c := tr.GeoJSON.Coordinates[0]
	s0, s1 := f.StopTimes.Stop[f.Trips.First[ti]], f.StopTimes.Stop[f.Trips.First[ti]+1]
	if c[0] != [2]float64{f.Stops.Lon[s0], f.Stops.Lat[s0]} || c[1] != [2]float64{f.Stops.Lon[s1], f.Stops.Lat[s1]} {
		t.Fatalf("line %v", c)
	}
	b, _ := json.Marshal(tr)
	if got := keysOf(t, b); !slices.Equal(got, []string{"geojson", "id", "name", "stops"}) {
		t.Fatalf("trip keys %v", got)
	}
	for _, bad := range []string{"farebox-trip-ct_412_20231111", "farebox-trip-ct_412_20231307", "farebox-trip-ct_412", "farebox-trip-ct_nope_20231107", "farebox-trip-ct_412_20231107-050000", "x"} {
		if _, err := ix.Trip(bad); err == nil {
			t.Fatalf("%s accepted", bad)
		}
	}
}

func TestStationSearch(t *testing.T) {
	ix := index(t, nil, "ct", "caltrain-2023.zip", "cdmx", "cdmx-2019-frequencies.zip")
	got := ix.SearchByName("22ND street", nil, 5)
	if len(got) == 0 || got[0].ID != "farebox-station-ct_22nd_street" {
		t.Fatalf("%v", got)
	}
	// Platforms are not listed separately: only the parent station.
	for _, s := range ix.SearchByName("san francisco", nil, 50) {
		if s.ID == "farebox-station-ct_70011" || s.ID == "farebox-station-ct_70012" {
			t.Fatal("platform listed as station")
		}
	}
	// Accents: "Jose Maria Morelos" finds "Av. José María Morelos - …" stops.
	hits := ix.SearchByName("jose maria MORELOS", nil, 100)
	if len(hits) == 0 || !strings.Contains(hits[0].Name, "José María Morelos") {
		t.Fatalf("accent-insensitive search: %v", hits)
	}
	// Position bias: among equal ranks the nearest comes first.
	q := "jose maria morelos"
	tier0 := matchTier(normalize(hits[0].Name), q, strings.Fields(q))
	var target Station
	for _, h := range hits {
		if matchTier(normalize(h.Name), q, strings.Fields(q)) == tier0 {
			target = h
		}
	}
	near := target.Position
	biased := ix.SearchByName(q, &near, 100)
	if distance(near.Latitude, near.Longitude, biased[0].Position.Latitude, biased[0].Position.Longitude) != 0 || len(biased) != len(hits) {
		t.Fatalf("position bias ignored: %v, want %v", biased[0], target)
	}
	// Ranking: exact name before prefix before substring.
	if normalize("Zürich-Hbf") != normalize("zuerich hbf") || normalize("  Ä ß ") != "a ss" {
		t.Fatalf("normalize %q %q", normalize("Zürich-Hbf"), normalize("  Ä ß "))
	}
	if matchTier("tamien", "tamien", []string{"tamien"}) != 0 || matchTier("tamien station", "tamien", []string{"tamien"}) != 1 ||
		matchTier("san jose diridon", "diridon", []string{"diridon"}) != 2 || matchTier("sandiridon", "diridon", []string{"diridon"}) != 3 ||
		matchTier("x", "y", []string{"y"}) != -1 {
		t.Fatal("match tiers")
	}
	pos := ix.SearchByPosition(37.756972, -122.392492, 3)
	if len(pos) != 3 || pos[0].ID != "farebox-station-ct_22nd_street" {
		t.Fatalf("%v", pos)
	}
	d0 := distance(37.756972, -122.392492, pos[1].Position.Latitude, pos[1].Position.Longitude)
	d1 := distance(37.756972, -122.392492, pos[2].Position.Latitude, pos[2].Position.Longitude)
	if d0 > d1 || math.IsNaN(d0) {
		t.Fatal("not nearest first")
	}
	if s, err := ix.StationByStopID("22nd_street"); err != nil || s.ID != "farebox-station-ct_22nd_street" {
		t.Fatal(err)
	}
	if _, err := ix.StationByID("farebox-station-ct_nope"); err == nil {
		t.Fatal("unknown id found")
	}
	if len(ix.SearchByName("   ", nil, 5)) != 0 || ix.SearchByName("", nil, 5) == nil {
		t.Fatal("empty query must give an empty array")
	}
}

func TestAttributions(t *testing.T) {
	a := index(t, nil, "ct", "caltrain-2023.zip", "s", "sample-gtfs-feed-0.13.0.zip").Attributions()
	want := Attribution{
		Text: "Timetable data: Caltrain, 511 SF Bay, Full Transit Agency, Minimal Transit Agency, Some Transit Authority",
		HTML: `Timetable data: <a href="http://www.caltrain.com">Caltrain</a>, <a href="https://511.org/open-data">511 SF Bay</a>, <a href="https://fta.example.org/">Full Transit Agency</a>, <a href="https://mta.example.org/">Minimal Transit Agency</a>, <a href="http://sta.example.org">Some Transit Authority</a>`,
		URL:  "http://www.caltrain.com",
	}
	if a != want {
		t.Fatalf("%+v", a)
	}
}

func FuzzIDEscape(f *testing.F) {
	for _, s := range []string{"246129324612933+2339282+0", "a/b%c&d#e?f", "~7E", "Zürich HB", "", "x_y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := escapeID(s)
		for i := 0; i < len(e); i++ {
			if !safeByte(e[i]) && e[i] != '~' {
				t.Fatalf("unsafe byte in %q", e)
			}
		}
		back, ok := unescapeID(e)
		if !ok || back != s {
			t.Fatalf("%q → %q → %q %v", s, e, back, ok)
		}
		if u, ok := unescapeID(s); ok && escapeID(u) != s {
			t.Fatalf("non-canonical %q accepted", s)
		}
	})
}

// FindTrip: trip 412 leaves 22nd Street at 17:15 and ends at San Jose
// Diridon at its last stop_times arrival.
func TestFindTrip(t *testing.T) {
	ix := index(t, nil, "ct", "caltrain-2023.zip")
	f := feed(t, "caltrain-2023.zip")
	ti := int32(slices.Index(f.Trips.ID, "412"))
	lastArr := f.Trips.First[ti+1] - 1
	arr := time.Date(2023, 11, 7, 0, 0, 0, 0, la(t)).Add(time.Duration(f.StopTimes.Arrival[lastArr]) * time.Second)
	dep := time.Date(2023, 11, 7, 17, 15, 0, 0, la(t))
	for _, line := range []string{"", "L4"} {
		tr, err := ix.FindTrip("farebox-station-ct_22nd_street", dep, "farebox-station-ct_sj_diridon", arr, line)
		if err != nil || tr.ID != "farebox-trip-ct_412_20231107" {
			t.Fatalf("line %q: %v %v", line, tr.ID, err)
		}
	}
	for _, c := range []struct {
		dep, arr time.Time
		line     string
	}{{dep, arr, "L1"}, {dep, arr.Add(time.Minute), ""}, {dep.Add(time.Minute), arr, ""}} {
		if _, err := ix.FindTrip("farebox-station-ct_22nd_street", c.dep, "farebox-station-ct_sj_diridon", c.arr, c.line); !isKind(err, apperr.NotFound) {
			t.Fatalf("%+v: %v", c, err)
		}
	}
}
