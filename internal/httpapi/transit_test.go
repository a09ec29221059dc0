package httpapi_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"
	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/shareddata"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/google/go-cmp/cmp"
)

var gtfsDir = shareddata.Path("gtfs") + "/"

// parsedFeed parses a shared test feed once per test binary.
func parsedFeed(t testing.TB, name string) *gtfs.Feed { return testtool.GTFSFeed(t, name) }

// caltrainRT is the realtime sample matching caltrain-2023.zip (header
// 2023-11-08T01:05:34Z, Tue 17:05 PST).
var caltrainRT = gtfsDir + "caltrain-2023-trip-updates.pb"

// rtNow is shortly after the realtime sample's header time.
var rtNow = time.Date(2023, 11, 8, 1, 6, 0, 0, time.UTC)

// tueFivePM is Tue 2023-11-07 17:00 PST in epoch ms (the reference board).
const tueFivePM = int64(1699405200000)

type feedSpec struct {
	id, file, realtime string
}

// transitOptions imports feeds through the app layer, loads them into a
// Transit (waiting for the first realtime fetch of every realtime feed)
// and hands it and the database-shared session key to the server.
func transitOptions(t testing.TB, now time.Time, feeds ...feedSpec) apitest.Options {
	return transitAlertsOptions(t, now, nil, feeds...)
}

// transitAlertsOptions is transitOptions with a service alerts source per
// feed id (the message written to a file, polled like TripUpdates); it
// waits until every one has been fetched.
func transitAlertsOptions(t testing.TB, now time.Time, alerts map[string]*gtfsrt.FeedMessage, feeds ...feedSpec) apitest.Options {
	files := map[string]string{}
	for id, msg := range alerts {
		data, err := proto.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		files[id] = filepath.Join(t.TempDir(), id+"-alerts.pb")
		if err := os.WriteFile(files[id], data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return apitest.Options{Now: now, Configure: func(d *httpapi.Deps) {
		ctx := context.Background()
		for _, f := range feeds {
			if _, err := d.Feeds.Import(ctx, transit.Import{FeedID: f.id, SourceName: f.file, Feed: parsedFeed(t, f.file),
				RealtimeSource: f.realtime}); err != nil {
				t.Fatalf("import %s: %v", f.id, err)
			}
		}
		tr := d.Feeds.Serve(transit.Options{RealtimeAlerts: files})
		if err := tr.Refresh(ctx); err != nil {
			t.Fatalf("transit refresh: %v", err)
		}
		t.Cleanup(tr.Close)
		for _, f := range feeds {
			if f.realtime != "" {
				waitRealtime(t, tr, f.id)
			}
		}
		for id := range files {
			deadline := time.Now().Add(30 * time.Second)
			for s := tr.Hub().Alerts(id); s == nil || len(s.Alerts) == 0; s = tr.Hub().Alerts(id) {
				if time.Now().After(deadline) {
					t.Fatalf("alerts of %s never fetched", id)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		key, err := d.App.SessionKey(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		d.Transit, d.SessionKey, d.Ready = tr, key, tr.Ready
	}}
}

// waitRealtime waits for the poller's first fetch (it runs in the background).
func waitRealtime(t testing.TB, tr *transit.Service, feedID string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for tr.Hub().Status(feedID).LastSuccess.IsZero() {
		if time.Now().After(deadline) {
			t.Fatalf("realtime for %s never fetched: %+v", feedID, tr.Hub().Status(feedID))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var caltrainFeeds = []feedSpec{{"caltrain", "caltrain-2023.zip", caltrainRT}, {"sample", "sample-gtfs-feed-0.13.0.zip", ""}}

func station(feedStop string) string { return "farebox-station-" + feedStop }

func departuresPath(station string, at int64, max int) string {
	return fmt.Sprintf("/v1/departures.json?station_id=%s&time=%d&max_departures=%d", station, at, max)
}

type departureJSON struct {
	Departure struct {
		ScheduledAt int64  `json:"scheduled_at"`
		PredictedAt *int64 `json:"predicted_at"`
		Platform    string `json:"platform"`
	} `json:"departure"`
	Trip struct {
		ID           string            `json:"id"`
		Headsign     string            `json:"headsign"`
		LineName     string            `json:"line_name"`
		Type         map[string]string `json:"type"`
		Provider     string            `json:"provider"`
		EndStationID string            `json:"end_station_id"`
		Cancelled    bool              `json:"cancelled"`
		Realtime     bool              `json:"realtime"`
	} `json:"trip"`
}

// Kotlin strict shapes (client-contract.md 8.2, 8.3).
var (
	kotlinPosition = apitest.Field{Type: "object", Required: true, Exact: true,
		Object: apitest.Shape{"latitude": apitest.R("number"), "longitude": apitest.R("number")}}
	kotlinStation = apitest.Field{Type: "object", Required: true, Exact: true,
		Object: apitest.Shape{"id": apitest.R("string"), "name": apitest.R("string"), "position": kotlinPosition}}
	kotlinDeparture = apitest.RObj(apitest.Shape{
		"departure": {Type: "object", Required: true, Exact: true, Object: apitest.Shape{
			"scheduled_at": apitest.R("int"), "predicted_at": apitest.O("int"), "platform": apitest.R("string")}},
		"trip": apitest.RObj(apitest.Shape{"id": apitest.R("string"), "end_station_id": apitest.R("string"),
			"line_name": apitest.R("string"), "provider": apitest.R("string"), "headsign": apitest.R("string"),
			"type": apitest.RObj(apitest.Shape{"kind": apitest.R("string"), "product": apitest.R("string")})}),
	})
	jsEventTime = apitest.RObj(apitest.Shape{"scheduled_at": apitest.R("int"), "predicted_at": apitest.O("int"), "platform": apitest.R("string")})
	jsTrip      = apitest.RObj(apitest.Shape{"id": apitest.R("string"), "name": apitest.R("string"),
		"stops": apitest.RArr(apitest.RObj(apitest.Shape{"station": kotlinStation, "status": apitest.R("string"),
			"arrival": {Type: "object", Object: jsEventTime.Object}, "departure": {Type: "object", Object: jsEventTime.Object}})),
		"geojson": apitest.RObj(apitest.Shape{"type": apitest.R("string"), "coordinates": apitest.RArr(apitest.R("array"))})})
)

// TestDeparturesReferenceBoard is reference case 1 of departures.md with the
// matching realtime sample, and contract scenarios 3 and 8 (shapes).
func TestDeparturesReferenceBoard(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		r := e.Must(200, apitest.Req{Method: "GET", Path: departuresPath(station("caltrain_22nd_street"), tueFivePM, 6), Key: e.LiveKey,
			Header: map[string]string{"Accept": "application/json"}})
		e.MustMatch("departures", r.Body, apitest.RArr(kotlinDeparture))
		var deps []departureJSON
		r.JSON(t, &deps)
		ms := func(h, m, s int) int64 {
			return time.Date(2023, 11, 7, h, m, s, 0, time.FixedZone("PST", -8*3600)).UnixMilli()
		}
		type row struct {
			trip      string
			sched     int64
			predicted any
		}
		want := []row{
			{"412", ms(17, 15, 0), ms(17, 15, 50)},
			{"125", ms(17, 24, 0), ms(17, 26, 16)},
			{"309", ms(17, 35, 0), nil},
			{"128", ms(17, 42, 0), "any"},
			{"411", 0, "any"},
			{"709", 0, "any"},
		}
		if len(deps) != len(want) {
			t.Fatalf("%d departures, want %d: %s", len(deps), len(want), r.Body)
		}
		for i, w := range want {
			d := deps[i]
			if id := "farebox-trip-caltrain_" + w.trip + "_20231107"; d.Trip.ID != id {
				t.Errorf("#%d trip %s, want %s", i, d.Trip.ID, id)
			}
			if w.sched != 0 && d.Departure.ScheduledAt != w.sched {
				t.Errorf("#%d %s scheduled %d, want %d", i, w.trip, d.Departure.ScheduledAt, w.sched)
			}
			switch p := w.predicted.(type) {
			case int64:
				if d.Departure.PredictedAt == nil || *d.Departure.PredictedAt != p || !d.Trip.Realtime {
					t.Errorf("#%d %s predicted %v (realtime %v), want %d", i, w.trip, d.Departure.PredictedAt, d.Trip.Realtime, p)
				}
			case nil:
				if d.Departure.PredictedAt != nil || d.Trip.Realtime {
					t.Errorf("#%d %s predicted %v, want null", i, w.trip, *d.Departure.PredictedAt)
				}
			}
			if d.Trip.Provider != "Caltrain" || d.Departure.Platform != "" || d.Trip.Type["kind"] != "rail" || d.Trip.Cancelled {
				t.Errorf("#%d %+v", i, d)
			}
		}
		first := deps[0].Trip
		if first.Headsign != "San Jose Diridon" || first.LineName != "L4" || first.EndStationID != station("caltrain_sj_diridon") {
			t.Errorf("trip 412: %+v", first)
		}
		// max_departures bounds the board; the default is 10.
		var three []departureJSON
		e.Must(200, apitest.Req{Method: "GET", Path: departuresPath(station("caltrain_22nd_street"), tueFivePM, 3), Key: e.LiveKey}).JSON(t, &three)
		if len(three) != 3 || three[2].Trip.ID != deps[2].Trip.ID {
			t.Errorf("max_departures=3 gave %d entries", len(three))
		}
		var ten []departureJSON
		e.Must(200, apitest.Req{Method: "GET", Path: fmt.Sprintf("/v1/departures.json?station_id=%s&time=%d&", station("caltrain_22nd_street"), tueFivePM), Key: e.LiveKey}).JSON(t, &ten)
		if len(ten) != 10 {
			t.Errorf("default board has %d entries, want 10", len(ten))
		}
		// time defaults to now (the clock: Tue 17:06 PST): trip 412 leaves at 17:15.
		var now []departureJSON
		e.Must(200, apitest.Req{Method: "GET", Path: "/v1/departures.json?station_id=" + station("caltrain_22nd_street") + "&max_departures=1", Key: e.LiveKey}).JSON(t, &now)
		if len(now) != 1 || now[0].Trip.ID != deps[0].Trip.ID {
			t.Errorf("board at now: %+v", now)
		}
		// The aliases of the upstream docs answer the same board.
		for _, v := range []string{"/v3/transit", "/v4/transit"} {
			rr := e.Must(200, apitest.Req{Method: "GET", Path: strings.Replace(departuresPath(station("caltrain_22nd_street"), tueFivePM, 6), "/v1", v, 1) + "&api_key=" + e.LiveKey})
			if string(rr.Body) != string(r.Body) {
				t.Errorf("%s differs from /v1", v)
			}
		}
	})
}

// TestDeparturesSpecialDays: Thanksgiving service swap, an after-midnight
// trip from the previous service day, and the synthetic DST night.
func TestDeparturesSpecialDays(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		pst := time.FixedZone("PST", -8*3600)
		board := func(id string, at time.Time, n int) []departureJSON {
			var out []departureJSON
			e.Must(200, apitest.Req{Method: "GET", Path: departuresPath(id, at.UnixMilli(), n), Key: e.LiveKey}).JSON(t, &out)
			return out
		}
		// Thanksgiving 23:30: weekend service 284 at 24:05, not weekday 146.
		sf := board(station("caltrain_san_francisco"), time.Date(2023, 11, 23, 23, 30, 0, 0, pst), 1)
		if len(sf) != 1 || sf[0].Trip.ID != "farebox-trip-caltrain_284_20231123" || sf[0].Departure.ScheduledAt != 1700813100000 {
			t.Errorf("Thanksgiving night: %+v", sf)
		}
		// From Fri 00:01, trip 284 is found through the previous service day.
		sf = board(station("caltrain_san_francisco"), time.Date(2023, 11, 24, 0, 1, 0, 0, pst), 1)
		if len(sf) != 1 || sf[0].Trip.ID != "farebox-trip-caltrain_284_20231123" {
			t.Errorf("after midnight: %+v", sf)
		}
		// Friday runs only the modified service: H602 04:58, H604 05:58.
		sf = board(station("caltrain_san_francisco"), time.Date(2023, 11, 24, 4, 0, 0, 0, pst), 2)
		if len(sf) != 2 || sf[0].Trip.ID != "farebox-trip-caltrain_H602_20231124" || sf[1].Trip.ID != "farebox-trip-caltrain_H604_20231124" {
			t.Errorf("day after Thanksgiving: %+v", sf)
		}
		// Synthetic DST trip: 25:58 on service day 2019-03-30 = 2019-03-31 01:58 CET.
		cet := time.FixedZone("CET", 3600)
		dst := board(station("sample_airport"), time.Date(2019, 3, 31, 1, 0, 0, 0, cet), 10)
		found := false
		for _, d := range dst {
			if d.Departure.ScheduledAt == time.Date(2019, 3, 31, 1, 58, 0, 0, cet).UnixMilli() {
				found = true
			}
		}
		if !found {
			t.Errorf("no 01:58 CET departure on the DST night: %+v", dst)
		}
	})
}

// TestTransitBadInput: every bad parameter is a 400 naming it, unknown ids
// are 404, a missing key is 401 (contract scenario 6), and none is counted
// as a session.
func TestTransitBadInput(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		st := station("caltrain_22nd_street")
		for path, field := range map[string]string{
			"/v1/departures.json": "station_id",
			"/v1/departures.json?station_id=" + st + "&time=soon":                    "time",
			"/v1/departures.json?station_id=" + st + "&time=1.5":                     "time",
			"/v1/departures.json?station_id=" + st + "&max_departures=0":             "max_departures",
			"/v1/departures.json?station_id=" + st + "&max_departures=101":           "max_departures",
			"/v1/departures.json?station_id=" + st + "&max_departures=x":             "max_departures",
			"/v1/stations/search_by_name.json":                                       "query",
			"/v1/stations/search_by_name.json?query=a&latitude=91&longitude=0":       "latitude",
			"/v1/stations/search_by_name.json?query=a&latitude=1":                    "longitude",
			"/v1/stations/search_by_position.json?latitude=1":                        "longitude",
			"/v1/stations/search_by_position.json?latitude=x&longitude=1":            "latitude",
			"/v1/stations/search_by_id.json?query=" + st + "&id_type=uic":            "id_type",
			"/v1/trips/search_by_characteristics.json?origins_from_station_id=" + st: "origins_from_departure_time",
		} {
			r := wantInvalidParameter(t, e, e.LiveKey, path, field)
			if rows := e.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 1 || !rows[0].Counted || rows[0].Status != 400 {
				t.Errorf("%s: ledger %+v", path, rows)
			}
		}
		for _, path := range []string{
			departuresPath(station("caltrain_nowhere"), tueFivePM, 3),
			departuresPath("farebox-station-unknownfeed_x", tueFivePM, 3),
			"/v1/stations/search_by_id.json?query=farebox-station-caltrain_nowhere",
			"/v1/stations/search_by_id.json?query=nowhere&id_type=dhid",
			"/v1/trips/farebox-trip-caltrain_412_20231108x.json",
			"/v1/trips/farebox-trip-caltrain_412_20231111.json", // a Saturday: the weekday trip does not run
		} {
			r := e.Must(404, apitest.Req{Method: "GET", Path: path, Key: e.LiveKey})
			if r.Header.Get("session-token") != "" {
				t.Errorf("%s: error response carries a session token", path)
			}
		}
		// Scenario 6: no key → 401 on every transit route; a bad key too.
		for _, path := range []string{departuresPath(st, tueFivePM, 3), "/v1/stations/search_by_name.json?query=Hbf",
			"/v1/stations/search_by_position.json?latitude=1&longitude=1", "/v1/stations/search_by_id.json?query=" + st,
			"/v1/trips/farebox-trip-caltrain_412_20231107.json", "/v1/attributions.json", "/v3/transit/departures.json?station_id=" + st,
			"/v1/trips/search_by_characteristics.json?origins_from_station_id=x"} {
			r := e.Must(401, apitest.Req{Method: "GET", Path: path})
			if r.Map(t)["code"] != "api_key_missing" {
				t.Errorf("%s: %s", path, r.Body)
			}
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			if r := e.Must(401, apitest.Req{Method: "GET", Path: path + sep + "api_key=fbx_live_bogus"}); r.Map(t)["code"] != "invalid_api_key" {
				t.Errorf("%s with a bogus key: %s", path, r.Body)
			}
		}
	})
}

// TestStationsAndTrips covers contract scenarios 2, 4 and 5.
func TestStationsAndTrips(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		get := func(path string) *apitest.Resp {
			r := e.Must(200, apitest.Req{Method: "GET", Path: path, Key: e.LiveKey})
			if r.Header.Get("session-token") == "" {
				t.Errorf("%s: 200 without session-token", path)
			}
			return r
		}
		stationList := func(path string) []map[string]any {
			r := get(path)
			e.MustMatch(path, r.Body, apitest.RArr(kotlinStation))
			var out []map[string]any
			r.JSON(t, &out)
			return out
		}
		sf := map[string]any{"id": station("caltrain_san_francisco"), "name": "San Francisco Caltrain Station",
			"position": map[string]any{"latitude": 37.776404, "longitude": -122.394911}}
		// Scenario 2: by name, accent- and case-insensitive. The JS client inserts the
		// query unencoded; its URL serializer then writes the space as %20 and "Í" as
		// UTF-8 percent-escapes, which is what reaches the server.
		got := stationList("/v1/stations/search_by_name.json?query=SAN%20FRANC%C3%8DSCO")
		if len(got) != 2 || !cmp.Equal(got[0], sf) || got[1]["id"] != station("caltrain_south_sf") {
			t.Errorf("search_by_name: prefix match first, then the substring match: %v", got)
		}
		// Both bias parameters reach the server: within a rank, nearest first.
		near := func(lat, lon float64) []map[string]any {
			return stationList(fmt.Sprintf("/v1/stations/search_by_name.json?query=caltrain+station&longitude=%v&latitude=%v", lon, lat))
		}
		sj, north := near(37.3297, -121.9032), near(37.7764, -122.3949)
		if len(sj) != 8 || len(north) != 8 || sj[0]["id"] != station("caltrain_tamien") || north[0]["id"] != sf["id"] || sj[7]["id"] != sf["id"] {
			t.Errorf("biased search: near San Jose %v; near San Francisco %v", sj, north)
		}
		if got := stationList("/v1/stations/search_by_name.json?query=Atlantis"); len(got) != 0 {
			t.Errorf("no match should be []: %v", got)
		}
		// Scenario 4: by position (nearest first) and by id (one object).
		got = stationList("/v1/stations/search_by_position.json?latitude=37.7764&longitude=-122.3949")
		if len(got) == 0 || got[0]["id"] != sf["id"] {
			t.Errorf("search_by_position: %v", got)
		}
		for _, path := range []string{"/v1/stations/search_by_id.json?query=" + station("caltrain_san_francisco") + "&id_type=mobilitybox",
			"/v1/stations/search_by_id.json?query=" + station("caltrain_san_francisco"),
			"/v1/stations/search_by_id.json?query=san_francisco&id_type=dhid",
			"/v1/stations/search_by_id.json?query=san_francisco&id_type=delfi"} {
			r := get(path)
			e.MustMatch(path, r.Body, kotlinStation)
			if m := r.Map(t); !cmp.Equal(m, sf) {
				t.Errorf("%s: %v", path, m)
			}
		}
		// Scenario 5: the trip with stops, event times in ms and a MultiLineString.
		tripPath := "/v1/trips/farebox-trip-caltrain_412_20231107.json"
		r := get(tripPath)
		e.MustMatch("trip", r.Body, jsTrip)
		var trip struct {
			ID, Name string
			Stops    []struct {
				Station map[string]any
				Status  string
				Arrival *struct {
					ScheduledAt int64 `json:"scheduled_at"`
				}
				Departure *struct {
					ScheduledAt int64  `json:"scheduled_at"`
					PredictedAt *int64 `json:"predicted_at"`
				}
			}
			GeoJSON struct {
				Type        string
				Coordinates [][][2]float64
			}
		}
		r.JSON(t, &trip)
		if trip.ID != "farebox-trip-caltrain_412_20231107" || len(trip.Stops) != 13 || trip.GeoJSON.Type != "MultiLineString" || len(trip.GeoJSON.Coordinates) != 12 {
			t.Fatalf("trip: id %s, %d stops, %s with %d lines", trip.ID, len(trip.Stops), trip.GeoJSON.Type, len(trip.GeoJSON.Coordinates))
		}
		first, last := trip.Stops[0], trip.Stops[12]
		if first.Station["id"] != sf["id"] || first.Arrival != nil || first.Departure == nil ||
			first.Departure.ScheduledAt != time.Date(2023, 11, 8, 1, 10, 0, 0, time.UTC).UnixMilli() {
			t.Errorf("first stop: %+v", first)
		}
		if last.Station["id"] != station("caltrain_sj_diridon") || last.Departure != nil || last.Arrival == nil ||
			last.Arrival.ScheduledAt != time.Date(2023, 11, 8, 2, 27, 0, 0, time.UTC).UnixMilli() {
			t.Errorf("last stop: %+v", last)
		}
		if s := trip.Stops[1]; s.Status != "predicted" || s.Departure.PredictedAt == nil || *s.Departure.PredictedAt != 1699406150000 {
			t.Errorf("22nd Street stop of trip 412: %+v", s)
		}
		if p := trip.GeoJSON.Coordinates[0]; p[0] != [2]float64{-122.394935, 37.776348} {
			t.Errorf("first line starts at %v, want platform 70012", p[0])
		}
		// search_by_characteristics with and without line_name (trailing &).
		q := fmt.Sprintf("/v1/trips/search_by_characteristics.json?origins_from_station_id=%s&origins_from_departure_time=%d&destination_station_id=%s&destination_arrival_time=%d&",
			station("caltrain_san_francisco"), time.Date(2023, 11, 8, 1, 10, 0, 0, time.UTC).UnixMilli(),
			station("caltrain_sj_diridon"), time.Date(2023, 11, 8, 2, 27, 0, 0, time.UTC).UnixMilli())
		for _, path := range []string{q, q + "line_name=L4"} {
			r := get(path)
			e.MustMatch(path, r.Body, jsTrip)
			if id := r.Map(t)["id"]; id != trip.ID {
				t.Errorf("%s found %v", path, id)
			}
		}
		e.Must(404, apitest.Req{Method: "GET", Path: q + "line_name=L1", Key: e.LiveKey})
		// Scenario 1: attributions are three strings derived from agency.txt and attributions.txt.
		r = get("/v1/attributions.json")
		var attr map[string]string
		r.JSON(t, &attr)
		want := map[string]string{
			"text": "Timetable data: Caltrain, 511 SF Bay, Full Transit Agency, Minimal Transit Agency, Some Transit Authority",
			"html": `Timetable data: <a href="http://www.caltrain.com">Caltrain</a>, <a href="https://511.org/open-data">511 SF Bay</a>, ` +
				`<a href="https://fta.example.org/">Full Transit Agency</a>, <a href="https://mta.example.org/">Minimal Transit Agency</a>, ` +
				`<a href="http://sta.example.org">Some Transit Authority</a>`,
			"url": "http://www.caltrain.com",
		}
		if d := cmp.Diff(want, attr); d != "" {
			t.Errorf("attributions (-want +got):\n%s", d)
		}
	})
}
