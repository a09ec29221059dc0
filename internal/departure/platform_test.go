package departure

import (
	"slices"
	"testing"
	"time"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"

	"github.com/farebox/farebox/internal/testtool"
)

const (
	platform1at22nd = "farebox-station-ct_70021" // platform "1" in testtool.CaltrainWithPlatforms
	platform2at22nd = "farebox-station-ct_70022" // platform "2"
	trip128         = "farebox-trip-ct_128_20231107"
	trip412         = "farebox-trip-ct_412_20231107"
)

// A platform's own board follows the platform realtime assigns: trip 128,
// scheduled at 22nd Street platform 2 (70022) and served at platform 1
// (assigned_stop_id 70021), is on platform 1's board and not on platform
// 2's; 412, moved at San Francisco from 70012 to its sibling 70011 (stop_id
// matched by stop_sequence), likewise. Together the platforms' boards are
// the station's board. Cached boards equal computed ones, and a BoardID
// names one set of bytes, second by second.
func TestPlatformBoardsFollowRealtime(t *testing.T) {
	ix := extraIndex(t, extraHub(t, testtool.CaltrainExtraTrips(t)))
	at := time.Date(2023, 11, 7, 17, 40, 0, 0, la(t))
	board := func(id string, max int) map[string]Departure {
		t.Helper()
		deps, err := ix.Departures(id, at, max)
		if err != nil {
			t.Fatal(err)
		}
		return byTrip(t, deps)
	}
	station := board(station22nd, 30)
	p1, p2 := board(platform1at22nd, 30), board(platform2at22nd, 30)
	d, ok := p1[trip128]
	if !ok {
		t.Fatalf("128 (moved to platform 1) is not on platform 1's board")
	}
	if _, ok := p2[trip128]; ok {
		t.Fatalf("128 (moved to platform 1) is still on platform 2's board")
	}
	if d.Departure.Platform != "1" || d.Trip.ScheduledPlatform == nil || *d.Trip.ScheduledPlatform != "2" || d.Departure.PredictedAt == nil ||
		*d.Departure.PredictedAt != *station[trip128].Departure.PredictedAt || d.Departure.ScheduledAt != station[trip128].Departure.ScheduledAt {
		t.Fatalf("128 on platform 1: %+v %+v (station: %+v)", d.Departure, d.Trip, station[trip128].Departure)
	}
	// Every entry of a platform's board is at that platform, and every
	// entry of the station's board up to the platform boards' last one is
	// on the board of its platform, identical.
	last := func(m map[string]Departure) int64 {
		var l int64
		for _, d := range m {
			l = max(l, d.Departure.ScheduledAt)
		}
		return l
	}
	until := min(last(p1), last(p2))
	for plat, m := range map[string]map[string]Departure{"1": p1, "2": p2} {
		for id, d := range m {
			if d.Departure.Platform != plat {
				t.Errorf("platform %s's board: %s at platform %q", plat, id, d.Departure.Platform)
			}
		}
	}
	for id, d := range station {
		if d.Departure.ScheduledAt > until {
			continue
		}
		m := map[string]map[string]Departure{"1": p1, "2": p2}[d.Departure.Platform]
		if got, ok := m[id]; !ok || string(AppendDeparturesJSON(nil, []Departure{got})) != string(AppendDeparturesJSON(nil, []Departure{d})) {
			t.Errorf("%s (platform %q) on the station's board, not the same on its platform's", id, d.Departure.Platform)
		}
	}
	// San Francisco: 412 at 70011 instead of 70012.
	atSF := time.Date(2023, 11, 7, 17, 0, 0, 0, la(t))
	for id, want := range map[string]bool{"farebox-station-ct_70011": true, "farebox-station-ct_70012": false} {
		deps, err := ix.Departures(id, atSF, 30)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := byTrip(t, deps)[trip412]; ok != want {
			t.Errorf("%s: 412 on the board %v, want %v", id, ok, want)
		}
	}
	// Cached boards: byte for byte, at several instants of each minute;
	// identities second by second around 128's departure.
	for _, id := range []string{platform1at22nd, platform2at22nd, station22nd} {
		checkExtraCached(t, ix, id, at.Add(-10*time.Minute), 40, 10)
		checkExtraCached(t, ix, id, at, 3, 100)
	}
	checkExtraCached(t, ix, "farebox-station-ct_70011", atSF.Add(-5*time.Minute), 25, 5)
	var st cacheStats
	dep := time.UnixMilli(*station[trip128].Departure.PredictedAt)
	for s := -90; s <= 90; s++ {
		for _, id := range []string{platform1at22nd, platform2at22nd} {
			for _, m := range []int{1, 3, 10} {
				checkCached(t, ix, id, dep.Add(time.Duration(s)*time.Second), m, &st, "platform")
			}
		}
	}
	if st.cached == 0 {
		t.Fatal("no board came from the cache")
	}
}

// Platform-scoped alerts follow the platform a run is served at, on the
// board and in the trip, and a trip's stop shows what the run's board
// entry there shows: the run's alerts (no stop) and the stop's alerts
// together are the entry's.
func TestTripAlertsAgreeWithBoards(t *testing.T) {
	msg := testtool.CaltrainExtraTrips(t)
	msg.Entity = append(msg.Entity, testtool.CaltrainAlerts().Entity...)
	msg.Entity = append(msg.Entity,
		testtool.AlertEntity("platform-70022", nil, gtfsrt.Alert_OTHER_CAUSE, gtfsrt.Alert_DETOUR, testtool.AlertSelector("", "", "70022")),
		testtool.AlertEntity("L1-at-70021", nil, gtfsrt.Alert_CONSTRUCTION, gtfsrt.Alert_DETOUR, testtool.AlertSelector("", "L1", "70021")),
		testtool.AlertEntity("L1-at-70022", nil, gtfsrt.Alert_CONSTRUCTION, gtfsrt.Alert_DETOUR, testtool.AlertSelector("", "L1", "70022")),
	)
	ix := extraIndex(t, extraHub(t, msg))
	at := time.Date(2023, 11, 7, 17, 40, 0, 0, la(t))
	for _, id := range []string{station22nd, platform1at22nd} {
		deps, err := ix.DeparturesLang(id, at, 30, "")
		if err != nil {
			t.Fatal(err)
		}
		d, ok := byTrip(t, deps)[trip128]
		if !ok {
			t.Fatalf("%s: no 128", id)
		}
		got := alertIDs(d.Trip.Alerts)
		// 128 (route L1) is served at platform 1 (70021), scheduled at 2.
		for _, a := range []string{"station-22nd", "platform-70021", "L1-at-70021"} {
			if !slices.Contains(got, a) {
				t.Errorf("%s: 128 lacks %s: %v", id, a, got)
			}
		}
		for _, a := range []string{"platform-70022", "L1-at-70022"} {
			if slices.Contains(got, a) {
				t.Errorf("%s: 128 shows %s of the platform it left: %v", id, a, got)
			}
		}
		checkExtraCached(t, ix, id, at.Add(-5*time.Minute), 10, 10)
	}
	// Every entry of the boards of 22nd Street and San Francisco against
	// its trip: run alerts ∪ stop alerts = the entry's alerts.
	checked := 0
	for _, c := range []struct {
		station string
		at      time.Time
	}{{station22nd, at}, {"farebox-station-ct_san_francisco", at.Add(-20 * time.Minute)}, {platform1at22nd, at}} {
		deps, err := ix.DeparturesLang(c.station, c.at, 20, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range deps {
			tr, err := ix.TripLang(d.Trip.ID, c.at, "")
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, s := range tr.Stops {
				if s.Departure == nil || s.Departure.ScheduledAt != d.Departure.ScheduledAt || s.Departure.Platform != d.Departure.Platform {
					continue
				}
				found = true
				union := map[string]bool{}
				for _, a := range append(slices.Clone(tr.Alerts), s.Alerts...) {
					union[a.ID] = true
				}
				want := map[string]bool{}
				for _, a := range d.Trip.Alerts {
					want[a.ID] = true
				}
				if len(union) != len(want) {
					t.Errorf("%s at %s: board %v, trip %v + stop %v", d.Trip.ID, c.station, alertIDs(d.Trip.Alerts), alertIDs(tr.Alerts), alertIDs(s.Alerts))
				}
				for a := range want {
					if !union[a] {
						t.Errorf("%s at %s: board %v, trip %v + stop %v", d.Trip.ID, c.station, alertIDs(d.Trip.Alerts), alertIDs(tr.Alerts), alertIDs(s.Alerts))
					}
				}
				if d.Trip.ID == trip128 && c.station == station22nd && (!slices.Contains(alertIDs(s.Alerts), "platform-70021") || slices.Contains(alertIDs(s.Alerts), "platform-70022")) {
					t.Errorf("128's stop at 22nd Street: %v", alertIDs(s.Alerts))
				}
				checked++
			}
			if !found {
				t.Errorf("%s: no stop of the trip matches the board entry %+v", d.Trip.ID, d.Departure)
			}
		}
	}
	if checked < 40 {
		t.Fatalf("only %d entries checked", checked)
	}
}

// A train more than LateWindow late stays on the board until it leaves:
// 408 (22nd Street 15:14) 45 minutes late and 122 (14:41) 120 minutes
// late (runs the real fetch does not mention); 120 (13:41) four hours late
// stays only while its scheduled time is within LateLookBack (3 h). Cached boards equal computed ones, identities name one board.
func TestLongDelaysStayOnBoards(t *testing.T) {
	msg := testtool.CaltrainDelayed(t,
		testtool.TripDelay{TripID: "408", StartDate: "20231107", Delay: 45 * 60},
		testtool.TripDelay{TripID: "122", StartDate: "20231107", Delay: 120 * 60},
		testtool.TripDelay{TripID: "120", StartDate: "20231107", Delay: 240 * 60},
	)
	ix := extraIndex(t, extraHub(t, msg))
	loc := la(t)
	hm := func(h, m, s int) time.Time { return time.Date(2023, 11, 7, h, m, s, 0, loc) }
	// The runs and their scheduled times, from the timetable.
	plain, err := New([]FeedInput{{ID: "ct", Feed: testtool.CaltrainWithPlatforms(t)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for id, sched := range map[string]time.Time{"408": hm(15, 14, 0), "122": hm(14, 41, 0), "120": hm(13, 41, 0)} {
		deps, err := plain.Departures(station22nd, sched, 5)
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := byTrip(t, deps)["farebox-trip-ct_"+id+"_20231107"]; !ok || d.Departure.ScheduledAt != sched.UnixMilli() {
			t.Fatalf("trip %s does not leave 22nd Street at %s", id, sched)
		}
	}
	on := func(at time.Time, trip string, max int) (Departure, bool) {
		t.Helper()
		deps, err := ix.Departures(station22nd, at, max)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := byTrip(t, deps)["farebox-trip-ct_"+trip+"_20231107"]
		return d, ok
	}
	for _, c := range []struct {
		trip        string
		sched, pred time.Time
	}{{"408", hm(15, 14, 0), hm(15, 59, 0)}, {"122", hm(14, 41, 0), hm(16, 41, 0)}} {
		for _, at := range []time.Time{c.sched.Add(LateWindow + time.Second), c.sched.Add(LateWindow + 5*time.Minute), c.pred.Add(-time.Minute), c.pred} {
			d, ok := on(at, c.trip, 10)
			if !ok {
				t.Fatalf("at %s: %s (scheduled %s, predicted %s) is not on the board", at.Format("15:04:05"), c.trip, c.sched.Format("15:04"), c.pred.Format("15:04"))
			}
			if d.Departure.ScheduledAt != c.sched.UnixMilli() || d.Departure.PredictedAt == nil || *d.Departure.PredictedAt != c.pred.UnixMilli() || !d.Trip.Realtime {
				t.Fatalf("%s: %+v", c.trip, d.Departure)
			}
		}
		if _, ok := on(c.pred.Add(time.Millisecond), c.trip, 10); ok {
			t.Fatalf("%s is still on the board after it left", c.trip)
		}
	}
	// Order: 120 (scheduled 13:41), 122 (14:41), 408 (15:14), the rest.
	deps, _ := ix.Departures(station22nd, hm(15, 50, 0), 4)
	if len(deps) != 4 || deps[0].Trip.ID != "farebox-trip-ct_120_20231107" || deps[1].Trip.ID != "farebox-trip-ct_122_20231107" || deps[2].Trip.ID != "farebox-trip-ct_408_20231107" {
		t.Fatalf("board at 15:50: %+v", deps)
	}
	if deps1, _ := ix.Departures(station22nd, hm(15, 50, 0), 1); len(deps1) != 1 || deps1[0].Trip.ID != deps[0].Trip.ID {
		t.Fatalf("a board of 1 at 16:20: %+v", deps1)
	}
	if _, ok := on(hm(16, 41, 0), "120", 100); !ok {
		t.Fatal("at 16:41: 120, scheduled 3 h before, is not on the board")
	}
	for _, at := range []time.Time{hm(16, 41, 1), hm(17, 30, 0)} {
		if _, ok := on(at, "120", 100); ok {
			t.Fatalf("at %s: 120, scheduled more than LateLookBack before, is on the board", at.Format("15:04:05"))
		}
	}
	// Its own platform's board keeps them too (both leave platform 2).
	pdeps, err := ix.Departures(platform2at22nd, hm(15, 50, 0), 3)
	if err != nil || len(pdeps) != 3 || pdeps[1].Trip.ID != "farebox-trip-ct_122_20231107" || pdeps[2].Trip.ID != "farebox-trip-ct_408_20231107" {
		t.Fatalf("platform 2 at 15:50: %v %+v", err, pdeps)
	}
	checkExtraCached(t, ix, station22nd, hm(15, 40, 0), 65, 10)
	checkExtraCached(t, ix, platform2at22nd, hm(15, 40, 0), 65, 3)
	var st cacheStats
	for _, dep := range []time.Time{hm(15, 59, 0), hm(16, 41, 0), hm(16, 41, 1)} {
		for s := -70; s <= 70; s++ {
			for _, m := range []int{1, 2, 5} {
				checkCached(t, ix, station22nd, dep.Add(time.Duration(s)*time.Second), m, &st, "late")
				checkCached(t, ix, station22nd, dep.Add(time.Duration(s)*time.Second+500*time.Millisecond), m, &st, "late")
			}
		}
	}
	if st.cached == 0 {
		t.Fatal("no board came from the cache")
	}
}
