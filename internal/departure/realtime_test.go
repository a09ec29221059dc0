package departure

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
)

// Caltrain trip 101 (weekday): a synthetic update exercises propagation.
func TestPredictionPropagation(t *testing.T) {
	f := feed(t, "caltrain-2023.zip")
	tr := int32(slices.Index(f.Trips.ID, "101"))
	first, end := f.Trips.First[tr], f.Trips.First[tr+1]
	if end-first < 8 {
		t.Fatalf("trip 101 has %d stops", end-first)
	}
	seq := func(i int32) uint32 { return f.StopTimes.Sequence[first+i] }
	day := gtfs.DayNumber(2023, 11, 7)
	u := &realtime.TripUpdate{TripID: "101", StartDate: day, StartTime: -1, Stops: []realtime.StopUpdate{
		{Sequence: seq(2), HasSequence: true, Departure: realtime.Event{Delay: 120, HasDelay: true}},
		{Sequence: seq(4), HasSequence: true, Relationship: realtime.StopSkipped},
		{StopID: f.Stops.ID[f.StopTimes.Stop[first+5]], Arrival: realtime.Event{Delay: 300, HasDelay: true}},
		{Sequence: seq(6), HasSequence: true, Relationship: realtime.StopNoData},
	}}
	snap := &realtime.Snapshot{Timestamp: time.Date(2023, 11, 7, 12, 0, 0, 0, time.UTC), Trips: map[string][]*realtime.TripUpdate{"101": {u}}}
	ix := index(t, fixedRT{snap}, "ct", "caltrain-2023.zip")
	k := tripKey{fi: ix.byID["ct"], trip: tr, day: day, start: -1}
	if ix.match(snap, k) != u || ix.match(snap, tripKey{fi: k.fi, trip: tr, day: day + 1, start: -1}) != nil {
		t.Fatal("match must use start_date")
	}
	p := ix.predict(k, u)
	base := gtfs.ServiceBase(day, la(t)).Unix()
	sd := func(i int32) int64 { return base + int64(f.StopTimes.Departure[first+i]) }
	for i, ps := range p.stops {
		i32 := int32(i)
		switch {
		case i < 2:
			if ps.hasDep {
				t.Fatalf("stop %d: upstream of the first update must have no prediction", i)
			}
		case i == 2 || i == 3:
			if !ps.hasDep || ps.dep != sd(i32)+120 {
				t.Fatalf("stop %d: %+v want +120", i, ps)
			}
		case i == 4:
			if !ps.skipped || ps.hasDep {
				t.Fatalf("stop 4 must be skipped: %+v", ps)
			}
		case i == 5:
			if !ps.hasDep || ps.dep != sd(i32)+300 || !ps.updated {
				t.Fatalf("stop 5: arrival delay must carry to departure: %+v", ps)
			}
		default:
			if ps.hasDep {
				t.Fatalf("stop %d: NO_DATA must stop propagation: %+v", i, ps)
			}
		}
	}
	// A stop update may name the parent station instead of the platform.
	station3 := f.Stops.ID[f.Stops.Parent[f.StopTimes.Stop[first+3]]]
	u2 := &realtime.TripUpdate{TripID: "101", StartDate: day, StartTime: -1, Stops: []realtime.StopUpdate{{StopID: station3, Departure: realtime.Event{Time: sd(3) + 45, HasTime: true}}}}
	if p2 := ix.predict(k, u2); !p2.stops[3].hasDep || p2.stops[3].dep != sd(3)+45 || p2.stops[2].hasDep || p2.stops[4].dep != sd(4)+45 {
		t.Fatalf("station-level stop id: %+v", p2.stops[2:5])
	}
	// On the board the skipped stop disappears and later stops show the delay.
	station := f.Stops.Parent[f.StopTimes.Stop[first+4]]
	at := time.Unix(sd(4)-60, 0)
	deps, err := ix.Departures(ix.stationID(k.fi, station), at, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps {
		if strings.Contains(d.Trip.ID, "_101_") {
			t.Fatalf("skipped stop still on the board: %v", tripsOf(deps))
		}
	}
	// CANCELED keeps the scheduled time and flags the trip.
	u.Relationship = realtime.TripCanceled
	station2 := f.Stops.Parent[f.StopTimes.Stop[first+2]]
	deps, _ = ix.Departures(ix.stationID(k.fi, station2), time.Unix(sd(2)-1, 0), 1)
	if len(deps) != 1 || !strings.Contains(deps[0].Trip.ID, "_101_") || !deps[0].Trip.Cancelled || deps[0].Departure.PredictedAt != nil || deps[0].Departure.ScheduledAt != sd(2)*1000 {
		t.Fatalf("cancelled: %+v", deps)
	}
	// ADDED updates never match a scheduled run.
	u.Relationship = realtime.TripAdded
	if ix.match(snap, k) != nil {
		t.Fatal("ADDED matched")
	}
}

// BART sends delay+time without start_date and includes unknown and ADDED
// trips: the board must work and use the time of the matching run.
func TestBartRealtime(t *testing.T) {
	hub, s := hubWith(t, "bart", "bart-2019-trip-updates.pb", time.Unix(1565199921, 0), 0)
	ix := index(t, hub, "bart", "bart-2019.zip")
	// 1011112WKDY: stop_times DALY seq 1 at 11:12:00 with stop_headsign
	// "Warm Springs/South Fremont"; RT departure time 1565201626 (its delay
	// field, 29, disagrees with the time; the absolute time wins).
	deps, err := ix.Departures("farebox-station-bart_DALY", time.Unix(1565201500, 0), 20)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	predicted := 0
	for _, d := range deps {
		if d.Departure.PredictedAt != nil {
			predicted++
		}
		if d.Trip.ID == "farebox-trip-bart_1011112WKDY_20190807" {
			found = true
			if d.Departure.PredictedAt == nil || *d.Departure.PredictedAt != 1565201626000 ||
				d.Departure.ScheduledAt != ms(time.Date(2019, 8, 7, 11, 12, 0, 0, la(t))) || d.Trip.Headsign != "Warm Springs/South Fremont" {
				t.Fatalf("%+v", d.Departure)
			}
		}
	}
	if !found || predicted < 2 {
		t.Fatalf("found %v, predicted %d: %v", found, predicted, tripsOf(deps))
	}
	// Every known trip of the RT feed resolves to the run of 2019-08-07.
	fi := ix.byID["bart"]
	for id := range s.Trips {
		tr, ok := fi.tripIdx[id]
		if !ok {
			continue
		}
		if d := fi.impliedDay(tripKey{fi: fi, trip: tr, start: -1}, s.Timestamp.Unix()); d != gtfs.DayNumber(2019, 8, 7) {
			y, m, dd := gtfs.DayDate(d)
			t.Fatalf("trip %s implied %d-%d-%d", id, y, m, dd)
		}
	}
}

// A delayed train still to come stays on the board: at 17:25 trip 125
// (scheduled 17:24, predicted 17:26:16) is listed first, 412 (scheduled
// 17:15, predicted 17:15:50) is gone; without realtime 125 is gone too.
func TestDelayedDepartureStaysOnBoard(t *testing.T) {
	at := time.Date(2023, 11, 7, 17, 25, 0, 0, la(t))
	deps, err := index(t, caltrainHub(t), "ct", "caltrain-2023.zip").Departures("farebox-station-ct_22nd_street", at, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"farebox-trip-ct_125_20231107", "farebox-trip-ct_309_20231107", "farebox-trip-ct_128_20231107"}
	if !slices.Equal(tripsOf(deps), want) || *deps[0].Departure.PredictedAt != 1699406776000 {
		t.Fatalf("%v", tripsOf(deps))
	}
	deps, _ = index(t, nil, "ct", "caltrain-2023.zip").Departures("farebox-station-ct_22nd_street", at, 3)
	if !slices.Equal(tripsOf(deps), []string{"farebox-trip-ct_309_20231107", "farebox-trip-ct_128_20231107", "farebox-trip-ct_411_20231107"}) {
		t.Fatalf("%v", tripsOf(deps))
	}
}
