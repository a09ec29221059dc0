package departure

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/realtime"
)

// The case found by the comparison: Mexico City stop 17445 at
// 1577550240894 ms. The departure at 1577550240000 left 894 ms before the
// query and is not on the board; both the computed and the cached board
// start at the next one.
func TestQueryTimeMillisecondsCDMX(t *testing.T) {
	ix := index(t, nil, "cdmx", "cdmx-2019-frequencies.zip")
	const id = "farebox-station-cdmx_17445"
	at := time.UnixMilli(1577550240894)
	deps, err := ix.Departures(id, at, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 1 {
		t.Fatalf("%d departures", len(deps))
	}
	if got := deps[0].Departure.ScheduledAt; got < at.UnixMilli() {
		t.Fatalf("scheduled_at %d is before the query time %d", got, at.UnixMilli())
	}
	// The departure at ...240000 exists: it is the board of the whole second.
	prev, err := ix.Departures(id, time.UnixMilli(1577550240000), 1)
	if err != nil || len(prev) != 1 || prev[0].Departure.ScheduledAt != 1577550240000 {
		t.Fatalf("board at 1577550240000: %+v %v", prev, err)
	}
	next, err := ix.Departures(id, time.UnixMilli(1577550241000), 1)
	if err != nil || len(next) != 1 || string(AppendDeparturesJSON(nil, next)) != string(AppendDeparturesJSON(nil, deps)) {
		t.Fatalf("board at the next second %+v, at 1577550240894 %+v (%v)", next, deps, err)
	}
	var st cacheStats
	for _, q := range []time.Time{at, time.UnixMilli(1577550240000), at, time.UnixMilli(1577550240001)} {
		checkCached(t, ix, id, q, 1, &st, "cdmx ms")
	}
	if st.cached == 0 {
		t.Error("the cached path was not exercised")
	}
}

// leavesBy reports whether a board entry leaves at or after atMs: scheduled
// then, or a delayed departure predicted then.
func leavesAtOrAfter(d Departure, atMs int64) bool {
	if d.Departure.ScheduledAt >= atMs {
		return true
	}
	return d.Departure.PredictedAt != nil && *d.Departure.PredictedAt >= atMs
}

// Property: for random stations and instants with random milliseconds
// (most of them 1–999 ms after a departure on the board), every entry
// leaves at or after the instant, the board is the board of the next
// whole second, and the cached board is byte-identical; with and without
// realtime.
func TestBoardsRespectMilliseconds(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 4))
	for _, c := range []struct{ id, file, rt string }{
		{"cdmx", "cdmx-2019-frequencies.zip", ""},
		{"bart", "bart-2019.zip", "bart-2019-trip-updates.pb"},
		{"ct", "caltrain-2023.zip", "caltrain-2023-trip-updates.pb"},
		{"subway", "nyc/subway.zip", ""},
	} {
		t.Run(c.id, func(t *testing.T) {
			var rt Realtime
			var base time.Time
			if c.rt != "" {
				s := loadSnapshot(t, c.rt)
				rt, base = fixedRT{s}, s.Timestamp
			}
			ix := index(t, rt, c.id, c.file)
			fi := ix.byID[c.id]
			var st cacheStats
			checked := 0
			for q := 0; q < 150; q++ {
				id := ix.stations[rng.IntN(len(ix.stations))].id
				at := cacheTimes(rng, fi, 1)[0]
				if rt != nil {
					at = base.Add(time.Duration(rng.Int64N(4*3600e3)-2*3600e3) * time.Millisecond)
				}
				max := randMax(rng)
				first, err := ix.Departures(id, at.Truncate(time.Second), max)
				if err != nil {
					t.Fatal(err)
				}
				queries := []time.Time{at}
				for i := 0; i < 3 && len(first) > 0; i++ { // just after a departure
					d := first[rng.IntN(len(first))]
					queries = append(queries, time.UnixMilli(d.Departure.ScheduledAt+1+rng.Int64N(999)))
				}
				for _, qt := range queries {
					deps, err := ix.Departures(id, qt, max)
					if err != nil {
						t.Fatal(err)
					}
					for i, d := range deps {
						if !leavesAtOrAfter(d, qt.UnixMilli()) {
							t.Fatalf("%s at %d: entry %d %s scheduled %d leaves before the query", id, qt.UnixMilli(), i, d.Trip.ID, d.Departure.ScheduledAt)
						}
					}
					whole, err := ix.Departures(id, time.Unix(querySecond(qt), 0), max)
					if err != nil {
						t.Fatal(err)
					}
					if string(AppendDeparturesJSON(nil, whole)) != string(AppendDeparturesJSON(nil, deps)) {
						t.Fatalf("%s at %d: board differs from the board at the next whole second", id, qt.UnixMilli())
					}
					checkCached(t, ix, id, qt, max, &st, "ms")
					checked += len(deps)
				}
			}
			if checked < 1000 || st.cached == 0 {
				t.Errorf("%d entries checked, %d cached answers: the property is not exercised", checked, st.cached)
			}
		})
	}
}

// longBoard is the board of n departures without realtime, n beyond
// MaxDepartures too (the board scan Departures uses; TestBoardsMatchOracle
// checks it against the brute-force oracle).
func longBoard(t *testing.T, ix *Index, id string, at time.Time, n int) []Departure {
	t.Helper()
	fi, stop, err := ix.boardStation(id, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []Departure
	for _, c := range fi.board(fi.departStops(stop), querySecond(at), at.In(fi.loc), n, ix.daysAhead, nil) {
		out = append(out, ix.departureOf(tripKey{fi: fi, trip: c.trip, day: c.day, start: c.start}, c, nil, 0, nil))
	}
	return out
}

// skipFirst is a snapshot in which the first n runs leaving station id
// after at (per the board without realtime) skip that stop.
func skipFirst(t *testing.T, plain *Index, id string, at time.Time, n int) (*realtime.Snapshot, map[string]bool) {
	t.Helper()
	deps := longBoard(t, plain, id, at, n)
	if len(deps) != n {
		t.Fatalf("%d departures", len(deps))
	}
	s := &realtime.Snapshot{Timestamp: at, Received: at, Trips: map[string][]*realtime.TripUpdate{}}
	skipped := map[string]bool{}
	for _, d := range deps {
		run := strings.TrimPrefix(d.Trip.ID, "farebox-trip-busy_") // T01234_20240612
		tripID, date, _ := strings.Cut(run, "_")
		y, m, dd := date[:4], date[4:6], date[6:]
		day, err := time.Parse("2006-01-02", y+"-"+m+"-"+dd)
		if err != nil {
			t.Fatal(err)
		}
		u := &realtime.TripUpdate{TripID: tripID, StartDate: int32(day.Unix() / 86400), StartTime: -1,
			Stops: []realtime.StopUpdate{{Sequence: 1, HasSequence: true, Relationship: realtime.StopSkipped}}}
		s.Trips[tripID] = append(s.Trips[tripID], u)
		s.Updates++
		skipped[d.Trip.ID] = true
	}
	return s, skipped
}

// With realtime, skipped stops leave the board and later departures take
// their place: more than 10 of the first departures skipped (30 and 150 of
// them) still give full boards of 5, 100 and sizes between, equal to the
// board without realtime minus the skipped runs, computed and cached.
func TestSkippedStopsNeverShortenBoards(t *testing.T) {
	f := busyFeed(t)
	plain, err := New([]FeedInput{{ID: "busy", Feed: f}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt := &swapRT{}
	ix, err := New([]FeedInput{{ID: "busy", Feed: f}}, Options{Realtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	loc := loadLoc(t, "Europe/Berlin")
	rng := rand.New(rand.NewPCG(19, 2))
	var st cacheStats
	for _, id := range []string{"farebox-station-busy_HUB", "farebox-station-busy_P1"} {
		for _, nSkip := range []int{11, 30, 150} {
			at := time.Date(2024, 6, 12, 9, 0, 0, 0, loc).Add(time.Duration(rng.Int64N(6*3600e3)) * time.Millisecond)
			snap, skipped := skipFirst(t, plain, id, at, nSkip)
			rt.p.Store(snap)
			ref := longBoard(t, plain, id, at, nSkip+MaxDepartures)
			var want []Departure
			for _, d := range ref {
				if !skipped[d.Trip.ID] {
					want = append(want, d)
				}
			}
			for _, max := range []int{1, 5, 10, 11, 50, 99, MaxDepartures} {
				got, err := ix.Departures(id, at, max)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != max {
					t.Fatalf("%s, %d skipped, max %d: %d departures", id, nSkip, max, len(got))
				}
				for i, d := range got {
					if d.Trip.ID != want[i].Trip.ID || d.Departure.ScheduledAt != want[i].Departure.ScheduledAt {
						t.Fatalf("%s, %d skipped, max %d: entry %d is %s at %d, want %s at %d", id, nSkip, max, i, d.Trip.ID, d.Departure.ScheduledAt, want[i].Trip.ID, want[i].Departure.ScheduledAt)
					}
				}
				// The cached path: cold (the minute's first query), warm, and
				// the same minute at other instants.
				checkCached(t, ix, id, at, max, &st, "skipped cold")
				checkCached(t, ix, id, at, max, &st, "skipped warm")
				start := time.Unix(floorDiv(at.Unix(), 60)*60, 0)
				checkCached(t, ix, id, start, max, &st, "skipped minute start")
				checkCached(t, ix, id, start.Add(59999*time.Millisecond), max, &st, "skipped minute end")
			}
		}
	}
	if st.cached < 3*st.direct {
		t.Errorf("cache %d, computed %d: skipped stops should be served from the cache", st.cached, st.direct)
	}
}
