package departure

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
	"github.com/farebox/farebox/internal/testtool"
)

func tripsOf(deps []Departure) []string {
	var out []string
	for _, d := range deps {
		out = append(out, d.Trip.ID)
	}
	return out
}

// hubWith is a hub whose clock stands at now, serving the snapshot of the
// realtime file, received now, as the feed's; it returns the snapshot too.
func hubWith(t testing.TB, feedID, file string, now time.Time, maxAge time.Duration) (*realtime.Hub, *realtime.Snapshot) {
	t.Helper()
	hub, s := realtime.NewHub(clocktest.NewFixed(now), maxAge), loadSnapshotAt(t, file, now)
	hub.Set(feedID, s)
	return hub, s
}

func caltrainHub(t testing.TB) *realtime.Hub {
	hub, _ := hubWith(t, "ct", "caltrain-2023-trip-updates.pb", time.Unix(1699405534, 0).Add(30*time.Second), 5*time.Minute)
	return hub
}

// Reference case 1: Caltrain 22nd Street, Tue 2023-11-07 17:00 PST, with the
// matching TripUpdates. Expected values come from stop_times.txt (70021/70022
// rows of weekday service 72982) and the RT departure times.
func TestCaltrainBoardWithRealtime(t *testing.T) {
	ix := index(t, caltrainHub(t), "ct", "caltrain-2023.zip")
	loc := la(t)
	at := time.Date(2023, 11, 7, 17, 0, 0, 0, loc)
	deps, err := ix.Departures("farebox-station-ct_22nd_street", at, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		trip      string
		hh, mm    int
		predicted int64 // Unix seconds, 0 = null
		headsign  string
		line      string
		end       string
	}{
		{"412", 17, 15, 1699406150, "San Jose Diridon", "L4", "farebox-station-ct_sj_diridon"},
		{"125", 17, 24, 1699406776, "San Francisco", "L1", "farebox-station-ct_san_francisco"},
		{"309", 17, 35, 0, "San Francisco", "L3", "farebox-station-ct_san_francisco"},
		{"128", 17, 42, 1699407720, "Tamien", "L1", "farebox-station-ct_tamien"},
		{"411", 17, 52, -1, "San Francisco", "L4", "farebox-station-ct_san_francisco"},
		{"709", 17, 58, -1, "San Francisco", "B7", "farebox-station-ct_san_francisco"},
	}
	if len(deps) != len(want) {
		t.Fatalf("got %v", tripsOf(deps))
	}
	for i, w := range want {
		d := deps[i]
		if d.Trip.ID != "farebox-trip-ct_"+w.trip+"_20231107" {
			t.Fatalf("entry %d: trip %s, want %s (all: %v)", i, d.Trip.ID, w.trip, tripsOf(deps))
		}
		if d.Departure.ScheduledAt != ms(time.Date(2023, 11, 7, w.hh, w.mm, 0, 0, loc)) {
			t.Fatalf("%s scheduled %d", w.trip, d.Departure.ScheduledAt)
		}
		switch {
		case w.predicted == 0:
			if d.Departure.PredictedAt != nil || d.Trip.Realtime {
				t.Fatalf("%s: no TripUpdate, want null prediction", w.trip)
			}
		case w.predicted > 0:
			if d.Departure.PredictedAt == nil || *d.Departure.PredictedAt != w.predicted*1000 {
				t.Fatalf("%s predicted %v want %d", w.trip, d.Departure.PredictedAt, w.predicted*1000)
			}
		default:
			if d.Departure.PredictedAt == nil {
				t.Fatalf("%s: the RT feed has updates downstream, want a prediction", w.trip)
			}
		}
		tr := d.Trip
		if tr.Headsign != w.headsign || tr.LineName != w.line || tr.Provider != "Caltrain" || tr.EndStationID != w.end ||
			tr.Type != (TripType{"rail", "train"}) || d.Departure.Platform != "" || tr.Cancelled {
			t.Fatalf("%s: %+v %+v", w.trip, tr, d.Departure)
		}
	}
	// Without fresh realtime the same board has no predictions.
	stale := realtime.NewHub(clocktest.NewFixed(time.Unix(1699405534, 0).Add(time.Hour)), 5*time.Minute)
	stale.Set("ct", caltrainHub(t).TripUpdates("ct"))
	deps2, _ := index(t, stale, "ct", "caltrain-2023.zip").Departures("farebox-station-ct_22nd_street", at, 6)
	for _, d := range deps2 {
		if d.Departure.PredictedAt != nil {
			t.Fatal("stale predictions used")
		}
	}
	if !slices.Equal(tripsOf(deps), tripsOf(deps2)) {
		t.Fatal("realtime changed the schedule order")
	}
}

// Reference cases 2 and 3: Thanksgiving swaps weekday 72982 for weekend
// 72981; Friday runs only 79159; 24:05 of Thursday is found from Friday.
func TestCaltrainHolidaysAndAfterMidnight(t *testing.T) {
	ix := index(t, nil, "ct", "caltrain-2023.zip")
	loc := la(t)
	deps, err := ix.Departures("farebox-station-ct_san_francisco", time.Date(2023, 11, 23, 23, 30, 0, 0, loc), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) == 0 || deps[0].Trip.ID != "farebox-trip-ct_284_20231123" || deps[0].Departure.ScheduledAt != 1700813100000 {
		t.Fatalf("Thanksgiving night: %v", tripsOf(deps))
	}
	for _, d := range deps {
		if strings.Contains(d.Trip.ID, "_146_") || strings.Contains(d.Trip.ID, "_102_") || strings.Contains(d.Trip.ID, "_502_") {
			t.Fatalf("weekday trip on a holiday: %v", tripsOf(deps))
		}
	}
	if deps[1].Trip.ID != "farebox-trip-ct_H602_20231124" || deps[1].Departure.ScheduledAt != ms(time.Date(2023, 11, 24, 4, 58, 0, 0, loc)) ||
		deps[2].Trip.ID != "farebox-trip-ct_H604_20231124" || deps[2].Departure.ScheduledAt != ms(time.Date(2023, 11, 24, 5, 58, 0, 0, loc)) {
		t.Fatalf("Friday after Thanksgiving: %v", tripsOf(deps))
	}
	deps, _ = ix.Departures("farebox-station-ct_san_francisco", time.Date(2023, 11, 24, 0, 1, 0, 0, loc), 1)
	if len(deps) != 1 || deps[0].Trip.ID != "farebox-trip-ct_284_20231123" || deps[0].Departure.ScheduledAt != 1700813100000 {
		t.Fatalf("previous service day: %v", tripsOf(deps))
	}
}

// The fall-back night: GTFS times on 2023-11-05 count from noon minus 12 h
// (01:00 PDT), so the wall clock equals the GTFS time all day.
func TestDSTFallBackServiceDay(t *testing.T) {
	ix := index(t, nil, "ct", "caltrain-2023.zip")
	loc := la(t)
	f := feed(t, "caltrain-2023.zip")
	deps, err := ix.Departures("farebox-station-ct_san_francisco", time.Date(2023, 11, 5, 0, 30, 0, 0, loc), 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps {
		id := strings.TrimPrefix(d.Trip.ID, "farebox-trip-ct_")
		tid, date, _ := strings.Cut(id, "_")
		if date != "20231105" {
			continue
		}
		tr := slices.Index(f.Trips.ID, tid)
		secs := f.StopTimes.Departure[f.Trips.First[tr]]
		wall := time.Date(2023, 11, 5, int(secs/3600), int(secs/60%60), int(secs%60), 0, loc)
		if d.Departure.ScheduledAt != ms(wall) {
			t.Fatalf("%s at %s: %v, want %v", tid, testtool.GTFSTime(secs), time.UnixMilli(d.Departure.ScheduledAt).In(loc), wall)
		}
		return
	}
	t.Fatalf("no departure of service day 2023-11-05: %v", tripsOf(deps))
}

// Reference case 5: trip during-dst-1 departs the airport station at 25:58
// of Saturday 2019-03-30 = 2019-03-31 01:58 CET (00:58 UTC), stop_times on
// the station itself, Europe/Warsaw.
func TestSyntheticDSTNight(t *testing.T) {
	ix := index(t, nil, "s", "sample-gtfs-feed-0.13.0.zip")
	deps, err := ix.Departures("farebox-station-s_airport", time.Date(2019, 3, 31, 0, 30, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 1 || deps[0].Trip.ID != "farebox-trip-s_during-dst-1_20190330" || deps[0].Departure.ScheduledAt != ms(time.Date(2019, 3, 31, 0, 58, 0, 0, time.UTC)) {
		t.Fatalf("%+v", deps)
	}
	if deps[0].Trip.Headsign != "Hello Daylight Saving Time!" || deps[0].Trip.LineName != "DST" || deps[0].Trip.Type != (TripType{"tram", "tram"}) ||
		deps[0].Trip.Provider != "Full Transit Agency" || deps[0].Trip.EndStationID != "farebox-station-s_center" {
		t.Fatalf("%+v", deps[0].Trip)
	}
}

// Reference case 4: CDMX trip 14743 runs every 120 s from 05:00 to 10:00
// (weekday service 14741); stop 14217 departs 2:24 after the first stop, so the
// 07:58 instance is the first at 08:00:24.
func TestFrequencyExpansion(t *testing.T) {
	ix := index(t, nil, "cdmx", "cdmx-2019-frequencies.zip")
	loc := loadLoc(t, "America/Mexico_City")
	deps, err := ix.Departures("farebox-station-cdmx_14217", time.Date(2019, 3, 5, 8, 0, 0, 0, loc), 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, d := range deps {
		if strings.HasPrefix(d.Trip.ID, "farebox-trip-cdmx_14743_20190305-") {
			got = append(got, d.Departure.ScheduledAt)
			start := time.UnixMilli(d.Departure.ScheduledAt).In(loc).Add(-144 * time.Second)
			if d.Trip.ID != "farebox-trip-cdmx_14743_20190305-"+start.Format("150405") {
				t.Fatalf("instance id %s for %v", d.Trip.ID, start)
			}
			if d.Trip.Headsign != "Pantitlán - Observatorio" {
				t.Fatalf("headsign %q", d.Trip.Headsign)
			}
		}
	}
	if len(got) < 3 || got[0] != ms(time.Date(2019, 3, 5, 8, 0, 24, 0, loc)) || got[1]-got[0] != 120000 || got[2]-got[1] != 120000 {
		t.Fatalf("instances %v", got)
	}
	// Saturday: weekday service off.
	deps, _ = ix.Departures("farebox-station-cdmx_14217", time.Date(2019, 3, 9, 8, 0, 0, 0, loc), 100)
	for _, d := range deps {
		if strings.Contains(d.Trip.ID, "_14743_20190309") {
			t.Fatal("weekday frequency trip on Saturday")
		}
	}
	// The instance is a trip of its own.
	tr, err := ix.Trip("farebox-trip-cdmx_14743_20190305-075800")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Stops[1].Departure.ScheduledAt != ms(time.Date(2019, 3, 5, 8, 0, 24, 0, loc)) || tr.Stops[0].Arrival != nil ||
		tr.Stops[0].Departure.ScheduledAt != ms(time.Date(2019, 3, 5, 7, 58, 0, 0, loc)) {
		t.Fatalf("%+v", tr.Stops[:2])
	}
	if _, err := ix.Trip("farebox-trip-cdmx_14743_20190305-075900"); err == nil {
		t.Fatal("07:59:00 is not an instance start (headway 120 s)")
	}
}

// Metro-North: calendar_dates only (no calendar.txt); Grand Central's board
// matches the oracle and outside the feed window it is empty, not an error.
// A station's board comes from its platforms (Caltrain 22nd Street has
// two); an entrance (the sample feed has some) is not a station.
func TestCalendarDatesOnlyStationHierarchy(t *testing.T) {
	ix := index(t, nil, "mnr", "nyc/metro-north.zip")
	f := feed(t, "nyc/metro-north.zip")
	if len(f.Services) == 0 || slices.ContainsFunc(f.Services, func(s gtfs.Service) bool { return s.Weekdays != 0 }) {
		t.Fatal("metro-north must be a calendar_dates-only feed")
	}
	loc := loadLoc(t, "America/New_York")
	at := time.Date(2026, 10, 6, 8, 0, 0, 0, loc)
	deps, err := ix.Departures("farebox-station-mnr_1", at, 20)
	if err != nil || len(deps) != 20 {
		t.Fatalf("Grand Central: %d departures, %v", len(deps), err)
	}
	compareOracle(t, f, deps, oracle(f, []int32{int32(slices.Index(f.Stops.ID, "1"))}, at, 20))
	deps, err = ix.Departures("farebox-station-mnr_1", time.Date(2027, 12, 1, 8, 0, 0, 0, loc), 20)
	if err != nil || deps == nil || len(deps) != 0 {
		t.Fatalf("outside the window: %v %v", deps, err)
	}

	ct := feed(t, "caltrain-2023.zip")
	cix := index(t, nil, "ct", "caltrain-2023.zip")
	station := slices.Index(ct.Stops.ID, "22nd_street")
	var plats []int32
	for i, p := range ct.Stops.Parent {
		if p == int32(station) && ct.Stops.Type[i] == gtfs.StopPlatform {
			plats = append(plats, int32(i))
		}
	}
	if len(plats) != 2 {
		t.Fatalf("22nd Street has %d platforms", len(plats))
	}
	at = time.Date(2023, 11, 7, 17, 0, 0, 0, la(t))
	deps, err = cix.Departures("farebox-station-ct_22nd_street", at, 20)
	if err != nil {
		t.Fatal(err)
	}
	compareOracle(t, ct, deps, oracle(ct, append(plats, int32(station)), at, 20))

	sf := feed(t, "sample-gtfs-feed-0.13.0.zip")
	six := index(t, nil, "s", "sample-gtfs-feed-0.13.0.zip")
	entrance := slices.Index(sf.Stops.Type, gtfs.StopEntrance)
	if entrance < 0 {
		t.Fatal("the sample feed has no entrance")
	}
	if _, err := six.Departures("farebox-station-s_"+sf.Stops.ID[entrance], time.Date(2019, 3, 9, 13, 0, 0, 0, time.UTC), 5); !isKind(err, apperr.NotFound) {
		t.Fatalf("entrance as station: %v", err)
	}
}

func isKind(err error, k apperr.Kind) bool {
	var ae *apperr.Error
	return errors.As(err, &ae) && ae.Kind == k
}

// compareOracle checks scheduled times in order, and trip ids wherever the
// time is not tied with the cut-off.
func compareOracle(t *testing.T, f *gtfs.Feed, got []Departure, want []oracleDep) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d departures, oracle %d", len(got), len(want))
	}
	last := int64(0)
	if len(want) > 0 {
		last = want[len(want)-1].at
	}
	var g, w []string
	for i := range want {
		if got[i].Departure.ScheduledAt != want[i].at*1000 {
			t.Fatalf("entry %d at %d, oracle %d (%s)", i, got[i].Departure.ScheduledAt/1000, want[i].at, want[i].trip)
		}
		if i > 0 && got[i].Departure.ScheduledAt == got[i-1].Departure.ScheduledAt && got[i].Trip.LineName < got[i-1].Trip.LineName {
			t.Fatal("ties not ordered by line name")
		}
		if want[i].at < last {
			y, m, d := gtfs.DayDate(want[i].day)
			w = append(w, escapeID(want[i].trip)+"_"+time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Format("20060102"))
			g = append(g, got[i].Trip.ID[strings.IndexByte(got[i].Trip.ID, '_')+1:])
		}
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Fatalf("trips differ:\n%v\n%v", g, w)
	}
}

// TestBoardsMatchOracle compares random boards of several feeds with the
// brute-force oracle (times past midnight, calendar exceptions, stations).
func TestBoardsMatchOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, c := range []struct{ id, file string }{{"bart", "bart-2019.zip"}, {"trimet", "trimet-2routes-2021.zip"}, {"ct", "caltrain-2023.zip"}, {"lirr", "nyc/lirr.zip"}} {
		f := feed(t, c.file)
		ix := index(t, nil, c.id, c.file)
		fi := ix.byID[c.id]
		loc := fi.loc
		for q := 0; q < 25; q++ {
			e := ix.stations[rng.IntN(len(ix.stations))]
			day := f.MinDay + rng.Int32N(f.MaxDay-f.MinDay+1)
			y, m, d := gtfs.DayDate(day)
			at := time.Date(y, m, d, 0, 0, 0, 0, loc).Add(time.Duration(rng.IntN(86400e3)) * time.Millisecond)
			n := 1 + rng.IntN(30)
			got, err := ix.Departures(e.id, at, n)
			if err != nil {
				t.Fatal(err)
			}
			compareOracle(t, f, got, oracle(f, fi.departStops(e.stop), at, n))
		}
	}
}

// NYC subway Times Sq-42 St (127): N and S platforms, and 24:xx trips of the
// previous service day shortly after midnight.
func TestSubwayTimesSquareAfterMidnight(t *testing.T) {
	ix := index(t, nil, "subway", "nyc/subway.zip")
	f := feed(t, "nyc/subway.zip")
	at := time.Date(2026, 6, 3, 0, 5, 0, 0, loadLoc(t, "America/New_York"))
	deps, err := ix.Departures("farebox-station-subway_127", at, 30)
	if err != nil {
		t.Fatal(err)
	}
	plats := []int32{int32(slices.Index(f.Stops.ID, "127N")), int32(slices.Index(f.Stops.ID, "127S")), int32(slices.Index(f.Stops.ID, "127"))}
	compareOracle(t, f, deps, oracle(f, plats, at, 30))
	prev := 0
	for _, d := range deps {
		if strings.HasSuffix(d.Trip.ID, "_20260602") {
			prev++
		}
	}
	if prev == 0 {
		t.Fatalf("no trip of the previous service day: %v", tripsOf(deps))
	}
}

func TestDeparturesErrors(t *testing.T) {
	ix := index(t, nil, "ct", "caltrain-2023.zip")
	at := time.Date(2023, 11, 7, 17, 0, 0, 0, time.UTC)
	for _, id := range []string{"", "farebox-station-ct_nope", "farebox-station-xx_22nd_street", "other-station-ct_22nd_street", "farebox-station-ct22nd_street"} {
		if _, err := ix.Departures(id, at, 5); !isKind(err, apperr.NotFound) {
			t.Fatalf("%q: %v", id, err)
		}
	}
	for _, n := range []int{0, 101, -1} {
		if _, err := ix.Departures("farebox-station-ct_22nd_street", at, n); !isKind(err, apperr.Invalid) {
			t.Fatalf("max %d: %v", n, err)
		}
	}
	// A platform id gives that platform's departures only.
	deps, err := ix.Departures("farebox-station-ct_70022", time.Date(2023, 11, 7, 17, 0, 0, 0, la(t)), 3)
	if err != nil || len(deps) != 3 || !strings.Contains(deps[0].Trip.ID, "_412_") || !strings.Contains(deps[1].Trip.ID, "_128_") {
		t.Fatalf("platform board %v %v", tripsOf(deps), err)
	}
	if _, err := New([]FeedInput{{ID: "a_b", Feed: feed(t, "caltrain-2023.zip")}}, Options{}); !isKind(err, apperr.Invalid) {
		t.Fatal("feed id with '_' accepted")
	}
	if _, err := New([]FeedInput{{ID: "a", Feed: feed(t, "caltrain-2023.zip")}, {ID: "a", Feed: feed(t, "bart-2019.zip")}}, Options{}); !isKind(err, apperr.Conflict) {
		t.Fatal("duplicate feed id accepted")
	}
}

// Metro-North: the non-standard track column is the platform, and '+' in
// trip ids is escaped. stop_times.txt: 246129324612933+2339282+0 departs
// stop 33 at 01:04:00 on track 2.
func TestMetroNorthTrackAsPlatform(t *testing.T) {
	f := feed(t, "nyc/metro-north.zip")
	ix := index(t, nil, "mnr", "nyc/metro-north.zip")
	tr := slices.Index(f.Trips.ID, "246129324612933+2339282+0")
	sv := f.Services[f.Trips.Service[tr]]
	if len(sv.Added) == 0 {
		t.Fatal("service has no calendar_dates")
	}
	day := sv.Added[0]
	y, m, d := gtfs.DayDate(day)
	at := time.Date(y, m, d, 1, 4, 0, 0, loadLoc(t, "America/New_York"))
	deps, err := ix.Departures("farebox-station-mnr_33", at, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := "farebox-trip-mnr_246129324612933~2B2339282~2B0_" + at.Format("20060102")
	for _, dep := range deps {
		if dep.Trip.ID == want {
			if dep.Departure.Platform != "2" || dep.Departure.ScheduledAt != ms(at) || dep.Trip.Provider != "Metro-North Railroad" {
				t.Fatalf("%+v", dep)
			}
			if _, err := ix.Trip(want); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s not on the board: %v", want, tripsOf(deps))
}

// Synthetic feed, stop "lake" on Saturday 2019-03-09 (both on-weekends and
// on-working-days run): b-downtown-on-weekends has pickup_type 1 there (not
// a departure); b-outbound-on-working-days is a frequencies.txt template
// (15:00-16:00 every 600 s, lake 8 min after the first stop), so its 18:22
// template row is not a run; b-outbound-on-weekends departs 18:24.
func TestPickupTypeAndFrequencyTemplates(t *testing.T) {
	ix := index(t, nil, "s", "sample-gtfs-feed-0.13.0.zip")
	loc := loadLoc(t, "Europe/Warsaw")
	deps, err := ix.Departures("farebox-station-s_lake", time.Date(2019, 3, 9, 13, 0, 0, 0, loc), 8)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	var wantAt []int64
	for m := 0; m < 6; m++ {
		want = append(want, "farebox-trip-s_b-outbound-on-working-days_20190309-15"+[]string{"00", "10", "20", "30", "40", "50"}[m]+"00")
		wantAt = append(wantAt, ms(time.Date(2019, 3, 9, 15, 8+10*m, 0, 0, loc)))
	}
	want = append(want, "farebox-trip-s_b-outbound-on-weekends_20190309", "farebox-trip-s_b-outbound-on-weekends_20190310")
	wantAt = append(wantAt, ms(time.Date(2019, 3, 9, 18, 24, 0, 0, loc)), ms(time.Date(2019, 3, 10, 18, 24, 0, 0, loc)))
	if !slices.Equal(tripsOf(deps), want) {
		t.Fatalf("got  %v\nwant %v", tripsOf(deps), want)
	}
	for i, d := range deps {
		if d.Departure.ScheduledAt != wantAt[i] {
			t.Fatalf("%s at %v", d.Trip.ID, time.UnixMilli(d.Departure.ScheduledAt).In(loc))
		}
	}
	// platform_code of airport-2 is "2"; airport-1 has none.
	deps, _ = ix.Departures("farebox-station-s_airport-1", time.Date(2019, 3, 11, 15, 0, 0, 0, loc), 1)
	if len(deps) != 1 || deps[0].Departure.Platform != "" || deps[0].Trip.ID != "farebox-trip-s_a-downtown-all-day_20190311" {
		t.Fatalf("%+v", deps)
	}
}

// A board of n is the first n entries of a longer board at the same time:
// ties at the cut (several departures in the same second at one stop) are
// broken by the board order (time, line, trip id), never by which
// timetable row came first. BART has many such ties.
func TestBoardPrefixesAgreeAtTies(t *testing.T) {
	ix := index(t, nil, "bart", "bart-2019.zip", "mnr", "nyc/metro-north.zip")
	rng := rand.New(rand.NewPCG(7, 9))
	loc := loadLoc(t, "America/Los_Angeles")
	checked := 0
	for range 600 {
		st := ix.stations[rng.IntN(len(ix.stations))]
		at := time.Date(2019, 6, 3+rng.IntN(5), rng.IntN(24), rng.IntN(60), 0, 0, loc)
		if st.fi.id == "mnr" {
			at = time.Date(2026, 10, 5+rng.IntN(5), rng.IntN(24), rng.IntN(60), 0, 0, loc)
		}
		long, err := ix.Departures(st.id, at, MaxDepartures)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 3, 5, 10} {
			short, err := ix.Departures(st.id, at, n)
			if err != nil {
				t.Fatal(err)
			}
			want := long[:min(n, len(long))]
			if !slices.EqualFunc(short, want, func(a, b Departure) bool { return a.Trip.ID == b.Trip.ID && a.Departure == b.Departure }) {
				t.Fatalf("%s at %v: board of %d is not the start of the board of 100:\n%v\n%v", st.id, at, n, short, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}
