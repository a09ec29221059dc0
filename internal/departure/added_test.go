package departure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"
	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/realtime"
	"github.com/farebox/farebox/internal/testtool"
)

// extraHub serves the given messages in turn (Hub.Set each) at the
// Caltrain header time.
func extraHub(t testing.TB, msgs ...*gtfsrt.FeedMessage) *realtime.Hub {
	t.Helper()
	hub := realtime.NewHub(clocktest.NewFixed(time.Unix(ctHeader+60, 0)), 5*time.Minute)
	for _, m := range msgs {
		hub.Set("ct", parseMsg(t, m))
	}
	return hub
}

func extraIndex(t testing.TB, hub *realtime.Hub) *Index {
	t.Helper()
	ix, err := New([]FeedInput{{ID: "ct", Feed: testtool.CaltrainWithPlatforms(t)}}, Options{Realtime: hub})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

const station22nd = "farebox-station-ct_22nd_street"

// byTrip indexes a board by trip id (ids seen twice fail the test).
func byTrip(t *testing.T, deps []Departure) map[string]Departure {
	t.Helper()
	m := map[string]Departure{}
	for _, d := range deps {
		if _, dup := m[d.Trip.ID]; dup {
			t.Fatalf("trip %s twice on the board", d.Trip.ID)
		}
		m[d.Trip.ID] = d
	}
	return m
}

// checkExtraCached: the board cache answers the computed board, byte for byte,
// at several instants of each minute.
func checkExtraCached(t *testing.T, ix *Index, id string, from time.Time, minutes int, max int) {
	t.Helper()
	for m := 0; m < minutes; m++ {
		for _, off := range []time.Duration{0, 29*time.Second + 999*time.Millisecond, 59 * time.Second} {
			at := from.Add(time.Duration(m)*time.Minute + off)
			deps, err := ix.Departures(id, at, max)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ix.AppendDeparturesJSON(nil, id, at, max)
			if err != nil {
				t.Fatal(err)
			}
			if want := AppendDeparturesJSON(nil, deps); !bytes.Equal(got, want) {
				t.Fatalf("at %s max %d: cached board differs\n got %s\nwant %s", at, max, got, want)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(deps); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) {
				t.Fatalf("at %s: the appender differs from encoding/json\n got %s\nwant %s", at, got, buf.Bytes())
			}
		}
	}
}

// The 22nd Street board with the extra-trip feed: every kind of extra run
// where the feed puts it, the replaced run gone, platform changes shown.
func TestExtraTripsOnBoards(t *testing.T) {
	ix := extraIndex(t, extraHub(t, testtool.CaltrainExtraTrips(t)))
	loc := la(t)
	at := time.Date(2023, 11, 7, 17, 40, 0, 0, loc)
	deps, err := ix.Departures(station22nd, at, 20)
	if err != nil || len(deps) != 20 {
		t.Fatal(err, len(deps))
	}
	m := byTrip(t, deps)
	hm := func(h, mi, s int) int64 { return time.Date(2023, 11, 7, h, mi, s, 0, loc).UnixMilli() }
	for _, c := range []struct {
		id             string
		sched, pred    int64
		headsign, line string
		end, platform  string
	}{
		{"farebox-trip-ct_X128_20231107", hm(18, 2, 0), hm(18, 2, 0), "Lawrence", "L1", "farebox-station-ct_lawrence", "2"},
		{"farebox-trip-ct_N412_20231107", hm(17, 45, 50), hm(17, 45, 50), "Mission Bay", "L4", "farebox-station-ct_sj_diridon", "2"},
		{"farebox-trip-ct_126-extra_20231107", hm(17, 57, 0), hm(17, 59, 0), "Tamien", "L1", "farebox-station-ct_tamien", "2"},
		{"farebox-trip-ct_414_20231107", hm(18, 19, 26), hm(18, 19, 26), "Palo Alto", "L4", "farebox-station-ct_palo_alto", "2"},
		{"farebox-trip-ct_X-unknown-stops_20231107", hm(18, 4, 0), hm(18, 4, 0), "Bayshore", "L1", "farebox-station-ct_bayshore", "2"},
	} {
		d, ok := m[c.id]
		if !ok {
			t.Fatalf("%s not on the board", c.id)
		}
		if d.Departure.ScheduledAt != c.sched || d.Departure.PredictedAt == nil || *d.Departure.PredictedAt != c.pred ||
			d.Trip.Headsign != c.headsign || d.Trip.LineName != c.line || d.Trip.EndStationID != c.end || d.Departure.Platform != c.platform ||
			!d.Trip.Added || !d.Trip.Realtime || d.Trip.Cancelled || d.Trip.Provider != "Caltrain" || d.Trip.Type.Kind != "rail" || d.Trip.ScheduledPlatform != nil {
			t.Errorf("%s: %+v %+v", c.id, d.Departure, d.Trip)
		}
	}
	// 128 is served at platform 1 (70021) instead of 2: shown, with the
	// timetable's platform beside it.
	if d := m["farebox-trip-ct_128_20231107"]; d.Departure.Platform != "1" || d.Trip.ScheduledPlatform == nil || *d.Trip.ScheduledPlatform != "2" || d.Trip.Added {
		t.Errorf("128: %+v %+v", d.Departure, d.Trip)
	}
	for id, d := range m {
		if id != "farebox-trip-ct_128_20231107" && d.Trip.ScheduledPlatform != nil {
			t.Errorf("%s: platform change %q", id, *d.Trip.ScheduledPlatform)
		}
	}
	// 127 is moved to Bayshore at 22nd Street: not here. Runs without
	// known stops or times are nowhere.
	for _, id := range []string{"farebox-trip-ct_127_20231107", "farebox-trip-ct_X-all-unknown_20231107", "farebox-trip-ct_X-no-times_20231107"} {
		if _, ok := m[id]; ok {
			t.Errorf("%s on the board", id)
		}
	}
	// The replaced 414 (18:15:26 in the timetable) is gone: its id is
	// the replacement's.
	if d := m["farebox-trip-ct_414_20231107"]; !d.Trip.Added {
		t.Errorf("414 is the timetable run")
	}
	// Without realtime the board is the timetable's.
	plain, err := New([]FeedInput{{ID: "ct", Feed: testtool.CaltrainWithPlatforms(t)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pd, _ := plain.Departures(station22nd, at, 20)
	for _, d := range pd {
		if d.Trip.Added || d.Trip.ScheduledPlatform != nil {
			t.Fatalf("timetable board: %+v", d.Trip)
		}
	}
	checkExtraCached(t, ix, station22nd, at.Add(-10*time.Minute), 40, 10)
	checkExtraCached(t, ix, station22nd, at, 5, 100)
	checkExtraCached(t, ix, "farebox-station-ct_san_francisco", at.Add(-20*time.Minute), 30, 5)
}

// pickup_type 1 from realtime: N412 (added) at Millbrae and 412 (timetable)
// at San Bruno are served but are not departures there.
func TestRealtimeNoPickup(t *testing.T) {
	ix := extraIndex(t, extraHub(t, testtool.CaltrainExtraTrips(t)))
	loc := la(t)
	for _, c := range []struct{ station, trip string }{
		{"farebox-station-ct_place_MLBR", "farebox-trip-ct_N412_20231107"},
		{"farebox-station-ct_san_bruno", "farebox-trip-ct_412_20231107"},
	} {
		deps, err := ix.Departures(c.station, time.Date(2023, 11, 7, 17, 0, 0, 0, loc), 30)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := byTrip(t, deps)[c.trip]; ok {
			t.Errorf("%s departs from %s", c.trip, c.station)
		}
		tr, err := ix.Trip(c.trip)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range tr.Stops {
			if s.Station.ID == c.station {
				found = s.Status == "predicted"
			}
		}
		if !found {
			t.Errorf("%s: no predicted stop at %s", c.trip, c.station)
		}
		checkExtraCached(t, ix, c.station, time.Date(2023, 11, 7, 17, 0, 0, 0, loc), 20, 10)
	}
	// Without pickup_type both would depart there: 412 with the real
	// TripUpdates, N412 from the next stop (Burlingame).
	real := index(t, caltrainHub(t), "ct", "caltrain-2023.zip")
	deps, _ := real.Departures("farebox-station-ct_san_bruno", time.Date(2023, 11, 7, 17, 0, 0, 0, loc), 30)
	if _, ok := byTrip(t, deps)["farebox-trip-ct_412_20231107"]; !ok {
		t.Error("412 does not depart from San Bruno with the real TripUpdates")
	}
	deps, _ = ix.Departures("farebox-station-ct_burlingame", time.Date(2023, 11, 7, 17, 0, 0, 0, loc), 30)
	if _, ok := byTrip(t, deps)["farebox-trip-ct_N412_20231107"]; !ok {
		t.Error("N412 does not depart from Burlingame")
	}
}

// X-past-midnight runs on service day 2023-11-07 at 00:20 on the 8th.
func TestExtraTripPastMidnight(t *testing.T) {
	ix := extraIndex(t, extraHub(t, testtool.CaltrainExtraTrips(t)))
	at := time.Unix(testtool.PastMidnightSF-10*60, 0)
	deps, err := ix.Departures(station22nd, at, 10)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := byTrip(t, deps)["farebox-trip-ct_X-past-midnight_20231107"]
	if !ok || d.Departure.ScheduledAt != (testtool.PastMidnightSF+350)*1000 {
		t.Fatalf("%+v", deps)
	}
	tr, err := ix.Trip(d.Trip.ID)
	if err != nil || len(tr.Stops) != 3 || tr.Stops[0].Departure.ScheduledAt != testtool.PastMidnightSF*1000 || !tr.Added {
		t.Fatalf("%v %+v", err, tr)
	}
	checkExtraCached(t, ix, station22nd, at, 15, 10)
}

// Trips of extra runs, the replaced run and platform changes.
func TestExtraTripsAsTrips(t *testing.T) {
	ix := extraIndex(t, extraHub(t, testtool.CaltrainExtraTrips(t)))
	x, err := ix.Trip("farebox-trip-ct_X128_20231107")
	if err != nil {
		t.Fatal(err)
	}
	if !x.Added || len(x.Stops) != 20 || x.Name != "L1" || len(x.GeoJSON.Coordinates) != 19 || x.Stops[0].Arrival != nil || x.Stops[19].Departure != nil {
		t.Fatalf("%+v", x)
	}
	for i, s := range x.Stops {
		if s.Status != "predicted" || s.Station == nil {
			t.Fatalf("stop %d: %+v", i, s)
		}
	}
	n, err := ix.Trip("farebox-trip-ct_N412_20231107")
	if err != nil || n.Name != "L4 G412" || len(n.Stops) != 13 {
		t.Fatalf("%v %+v", err, n)
	}
	d, err := ix.Trip("farebox-trip-ct_126-extra_20231107")
	if err != nil || !d.Added || d.Stops[0].Departure.PredictedAt == nil || *d.Stops[0].Departure.PredictedAt-d.Stops[0].Departure.ScheduledAt != 120000 {
		t.Fatalf("%v %+v", err, d)
	}
	if got := time.UnixMilli(d.Stops[0].Departure.ScheduledAt).In(la(t)).Format("15:04:05"); got != "17:52:00" {
		t.Fatalf("duplicate starts %s", got)
	}
	u, err := ix.Trip("farebox-trip-ct_X-unknown-stops_20231107")
	if err != nil || len(u.Stops) != 3 {
		t.Fatalf("%v %+v", err, u)
	}
	r, err := ix.Trip("farebox-trip-ct_414_20231107")
	if err != nil || !r.Added || len(r.Stops) != 9 {
		t.Fatalf("replacement: %v %+v", err, r)
	}
	for _, id := range []string{"farebox-trip-ct_X-all-unknown_20231107", "farebox-trip-ct_X-no-times_20231107", "farebox-trip-ct_X128_20231108"} {
		if _, err := ix.Trip(id); err == nil {
			t.Errorf("%s found", id)
		}
	}
	// 128 at 22nd Street: platform 1, timetable 2; 127 at 22nd Street is
	// served at Bayshore.
	t128, err := ix.Trip("farebox-trip-ct_128_20231107")
	if err != nil {
		t.Fatal(err)
	}
	s := t128.Stops[1]
	if s.Station.ID != station22nd || s.Departure.Platform != "1" || s.Departure.ScheduledPlatform == nil || *s.Departure.ScheduledPlatform != "2" || s.Arrival.Platform != "1" {
		t.Fatalf("128 at 22nd Street: %+v %+v", s, s.Departure)
	}
	t127, err := ix.Trip("farebox-trip-ct_127_20231107")
	if err != nil {
		t.Fatal(err)
	}
	moved := false
	for _, s := range t127.Stops {
		if s.Station.ID == station22nd {
			t.Fatalf("127 still at 22nd Street: %+v", s)
		}
		if s.Station.ID == "farebox-station-ct_bayshore" && s.Status == "predicted" {
			moved = true
		}
	}
	if !moved {
		t.Fatal("127 is not served at Bayshore")
	}
}

// X128 added, then canceled in the next fetch (without its stops): it
// stays on the board, cancelled, and its trip says so; a fetch that no
// longer mentions it removes it.
func TestExtraTripCanceledLater(t *testing.T) {
	hub := extraHub(t, testtool.CaltrainExtraTrips(t), testtool.CaltrainExtraTripsCanceled(t))
	ix := extraIndex(t, hub)
	at := time.Date(2023, 11, 7, 17, 55, 0, 0, la(t))
	deps, err := ix.Departures(station22nd, at, 10)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := byTrip(t, deps)["farebox-trip-ct_X128_20231107"]
	if !ok || !d.Trip.Cancelled || d.Departure.PredictedAt != nil || !d.Trip.Added {
		t.Fatalf("%+v", d)
	}
	tr, err := ix.Trip(d.Trip.ID)
	if err != nil || tr.Stops[0].Status != "cancelled" {
		t.Fatalf("%v %+v", err, tr)
	}
	checkExtraCached(t, ix, station22nd, at, 5, 10)
	// Canceled in the same fetch that adds it: cancelled too.
	both := testtool.CaltrainExtraTrips(t)
	both.Entity = append(both.Entity, testtool.CaltrainExtraTripsCanceled(t).Entity...)
	ix2 := extraIndex(t, extraHub(t, both))
	deps, _ = ix2.Departures(station22nd, at, 10)
	if d := byTrip(t, deps)["farebox-trip-ct_X128_20231107"]; !d.Trip.Cancelled {
		t.Fatalf("same fetch: %+v", d)
	}
	// A third fetch without it: gone.
	hub.Set("ct", parseMsg(t, testtool.CaltrainExtraTrips(t)))
	hub.Set("ct", parseMsg(t, testtool.ManyExtraTrips(t, 0)))
	deps, _ = ix.Departures(station22nd, at, 10)
	if _, ok := byTrip(t, deps)["farebox-trip-ct_X128_20231107"]; ok {
		t.Fatal("X128 still shown")
	}
}

// 20,000 added runs: each minute an extra departure at every stop; boards
// and trips stay right and the cache agrees.
func TestManyExtraTrips(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Load)
	const n = 20000
	ix := extraIndex(t, extraHub(t, testtool.ManyExtraTrips(t, n)))
	at := time.Date(2023, 11, 7, 20, 0, 0, 0, la(t))
	deps, err := ix.Departures(station22nd, at, 100)
	if err != nil || len(deps) != 100 {
		t.Fatal(err, len(deps))
	}
	added := 0
	for i, d := range deps {
		if d.Trip.Added {
			added++
		}
		if i > 0 && d.Departure.ScheduledAt < deps[i-1].Departure.ScheduledAt {
			t.Fatal("board out of order")
		}
	}
	if added < 90 {
		t.Fatalf("%d added departures of 100", added)
	}
	if _, err := ix.Trip(fmt.Sprintf("farebox-trip-ct_X128-%d_20231107", n-1)); err != nil {
		t.Fatal(err)
	}
	checkExtraCached(t, ix, station22nd, at, 3, 100)
	// Far ahead (the last run leaves San Francisco about 14 days later).
	checkExtraCached(t, ix, "farebox-station-ct_san_francisco", at.Add(13*24*time.Hour), 2, 50)
}

// The real BART TripUpdates carry eight ADDED trips (no start_date, no
// route_id): they appear on boards.
func TestBartAddedTrips(t *testing.T) {
	hub, snap := hubWith(t, "bart", "bart-2019-trip-updates.pb", time.Unix(1565199921+30, 0), 5*time.Minute)
	ix := index(t, hub, "bart", "bart-2019.zip")
	if len(snap.Extra) != 8 {
		t.Fatalf("%d extra updates", len(snap.Extra))
	}
	ad := ix.addedOf(ix.byID["bart"], snap)
	if ad == nil || len(ad.runs) == 0 {
		t.Fatal("no added runs")
	}
	r := ad.runs[0]
	s := r.stops[0]
	id := ix.stationID(ix.byID["bart"], ix.byID["bart"].stationOf(s.stop))
	deps, err := ix.Departures(id, time.Unix(s.dep, 0), 5)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := byTrip(t, deps)[r.id]; !ok || !d.Trip.Added || d.Trip.Provider == "" {
		t.Fatalf("%s not on %s: %+v", r.id, id, deps)
	}
	checkExtraCached(t, ix, id, time.Unix(s.dep, 0).Add(-5*time.Minute), 10, 10)
}

// BenchmarkBoardsWithExtraTrips: Caltrain 22nd Street with the real
// TripUpdates ("none"), with 1,000 added runs that do not stop there
// ("elsewhere": ManyExtraTrips without its 22nd Street stops) and with the
// extra-trip test feed ("applying": seven extra runs and two platform
// changes on the board), computed and from the board cache, side by side:
//
//	go test ./internal/departure -run XXX -bench BoardsWithExtraTrips -count 6
func BenchmarkBoardsWithExtraTrips(b *testing.B) {
	elsewhere := testtool.ManyExtraTrips(b, 1000)
	for _, e := range elsewhere.Entity {
		tu := e.GetTripUpdate()
		if tu.GetTrip().GetScheduleRelationship() != gtfsrt.TripDescriptor_ADDED {
			continue
		}
		tu.StopTimeUpdate = slices.DeleteFunc(tu.StopTimeUpdate, func(s *gtfsrt.TripUpdate_StopTimeUpdate) bool {
			return s.GetStopId() == "70021" || s.GetStopId() == "70022"
		})
	}
	cases := []struct {
		name string
		ix   *Index
	}{
		{"none", extraIndex(b, extraHub(b, testtool.ManyExtraTrips(b, 0)))},
		{"elsewhere", extraIndex(b, extraHub(b, elsewhere))},
		{"applying", extraIndex(b, extraHub(b, testtool.CaltrainExtraTrips(b)))},
	}
	at := time.Date(2023, 11, 7, 17, 40, 0, 0, la(b))
	for _, n := range []int{10, 100} {
		for _, mode := range []string{"computed", "cached"} {
			for _, c := range cases {
				ix := c.ix
				b.Run(mode+"/max"+strconv.Itoa(n)+"/"+c.name, func(b *testing.B) {
					b.ReportAllocs()
					buf := make([]byte, 0, 64<<10)
					for i := 0; i < b.N; i++ {
						if mode == "computed" {
							deps, err := ix.Departures(station22nd, at.Add(time.Duration(i%600)*time.Second), n)
							if err != nil || len(deps) != n {
								b.Fatal(err)
							}
							buf = AppendDeparturesJSON(buf[:0], deps)
							continue
						}
						var err error
						if buf, err = ix.AppendDeparturesJSON(buf[:0], station22nd, at.Add(time.Duration(i%60000)*time.Millisecond), n); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkExtraRunsIndex: parsing a fetch with 20,000 added runs (about
// 400,000 stop updates) and indexing its extra runs, once per fetch:
//
//	go test ./internal/departure -run XXX -bench ExtraRunsIndex -benchtime 5x
func BenchmarkExtraRunsIndex(b *testing.B) {
	// No realtime overlay: extraIndex(b, nil) would hand New a nil *Hub
	// as a non-nil Realtime (and panic since alerts are looked up in New).
	ix, err := New([]FeedInput{{ID: "ct", Feed: testtool.CaltrainWithPlatforms(b)}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	fi := ix.byID["ct"]
	data, err := proto.Marshal(testtool.ManyExtraTrips(b, 20000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		snap, err := realtime.Parse(data, time.Unix(ctHeader, 0))
		if err != nil {
			b.Fatal(err)
		}
		if ad := ix.buildAdded(fi, snap); len(ad.runs) != 20000 {
			b.Fatalf("%d runs", len(ad.runs))
		}
	}
}
