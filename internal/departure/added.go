package departure

import (
	"cmp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
)

// Runs that exist only in realtime. A TripUpdates snapshot may describe
// runs the timetable does not have (realtime.TripRelationship.Extra):
//
//   - ADDED and NEW: the run is its stop_time_updates: each stop_id (or
//     assigned_stop_id) the feed knows, with an absolute arrival or
//     departure time. Stops the feed does not know, stops without a time
//     and stops whose time goes back are left out; a run with fewer than
//     two such stops is not shown. Line, type and agency come from
//     TripDescriptor.route_id, else from the timetable trip of the same id;
//     the headsign from TripProperties.trip_headsign (or a stop's
//     stop_headsign), else the last stop's station. A stop with
//     StopTimeProperties.pickup_type 1 is not a departure.
//   - DUPLICATED: a copy of the timetable trip TripDescriptor.trip_id
//     starting at TripProperties.start_time on TripProperties.start_date
//     (scheduled times shifted), under TripProperties.trip_id; the
//     stop_time_updates are predictions as for a scheduled run.
//   - REPLACEMENT (deprecated in the spec): the stop_time_updates replace
//     the whole schedule of the timetable run of that trip id and date,
//     which leaves boards; the added run carries its id.
//
// An extra run that a CANCELED (or DELETED) update of the same id cancels,
// in the same snapshot or a later one (realtime.Hub keeps the stops), is
// shown cancelled. The same run described twice is shown once (the first).
// The index is built once per snapshot and feed; a board of a feed
// without extra runs pays one pointer load.

// addedIndex is what one TripUpdates snapshot adds to the boards of one
// feed beyond predicting the timetable's runs: the extra runs, the
// departures served at another platform of their station (a platform's
// board gains them) and the departures predicted more than LateWindow
// after their scheduled time (boards keep them until they leave).
type addedIndex struct {
	fi     *feedIndex
	snap   *realtime.Snapshot
	runs   []addedRun
	byID   map[string]int32    // public trip id → run
	byStop map[int32][]addedEv // departures per stop, by time
	// moved: timetable departures served at another stop of the same
	// station, by the stop served, in board order.
	moved map[int32][]movedEv
	// late: departures (timetable and extra runs) predicted to leave more
	// than LateWindow after their scheduled time, by the stop served, in
	// board order.
	late map[int32][]lateEv
}

// movedEv is a timetable departure (c, its scheduled stop from) served at
// another platform of its station.
type movedEv struct {
	c    candidate
	from int32
}

// lateEv is a departure predicted to leave at dep, more than LateWindow
// after its scheduled time c.at.
type lateEv struct {
	c   candidate
	dep int64
}

// empty reports whether the snapshot changes no board beyond predictions.
func (ad *addedIndex) empty() bool {
	return len(ad.runs) == 0 && len(ad.moved) == 0 && len(ad.late) == 0
}

// addedEv is one departure of an extra run: run's stop pos leaves at at
// (scheduled Unix seconds).
type addedEv struct {
	at       int64
	run, pos int32
}

type addedRun struct {
	id       string // public trip id
	tripID   string // the GTFS-RT trip id (TripProperties.trip_id for DUPLICATED)
	route    int32  // -1 unknown
	trip     int32  // the timetable trip it copies or replaces, -1 none
	day      int32  // service day
	headsign string
	line     string // line name (boards)
	name     string // line name with trip_short_name (the trip's name)
	pred     *tripPrediction
	stops    []addedStop
}

type addedStop struct {
	stop     int32
	arr, dep int64 // scheduled Unix seconds
	headsign string
	noPickup bool // pickup_type 1: not a departure
}

// addedCache holds the last added-run index built for a feed.
type addedCache = atomic.Pointer[addedIndex]

// addedOf is the feed's extra runs, platform changes and long delays
// under snap, nil when it has none. It is built once per snapshot (by the
// poller, PrepareAlerts, or else the first board).
func (ix *Index) addedOf(fi *feedIndex, snap *realtime.Snapshot) *addedIndex {
	if snap == nil {
		return nil
	}
	ad := fi.added.Load()
	if ad == nil || ad.snap != snap {
		ad = ix.buildAdded(fi, snap)
		fi.added.Store(ad)
	}
	if ad.empty() {
		return nil
	}
	return ad
}

func (ix *Index) buildAdded(fi *feedIndex, snap *realtime.Snapshot) *addedIndex {
	ad := &addedIndex{fi: fi, snap: snap, byID: map[string]int32{}, byStop: map[int32][]addedEv{}}
	routes := fi.routeIdx()
	for _, u := range snap.Extra {
		run, ok := ix.extraRun(fi, u, routes)
		if !ok {
			continue
		}
		start := int32(-1)
		if run.trip >= 0 && u.Relationship != realtime.TripReplacement {
			// The id must not be that of a timetable run: add the start
			// time (seconds after the service day's base).
			if _, clash := fi.tripIdx[run.tripID]; clash {
				start = int32(run.stops[0].dep - baseUnix(fi, run.day))
			}
		}
		run.id = ix.runID(fi, run.tripID, run.day, start)
		if _, dup := ad.byID[run.id]; dup {
			continue
		}
		cancelled := u.CanceledLater
		for _, c := range snap.Trips[run.tripID] {
			if (c.Relationship == realtime.TripCanceled || c.Relationship == realtime.TripDeleted) && (c.StartDate < 0 || c.StartDate == run.day) {
				cancelled = true
			}
		}
		if run.pred == nil {
			run.pred = &tripPrediction{stops: make([]stopPrediction, len(run.stops))}
			for i, s := range run.stops {
				run.pred.stops[i] = stopPrediction{arr: s.arr, dep: s.dep, hasArr: true, hasDep: true, updated: true}
			}
		}
		if cancelled {
			run.pred = &tripPrediction{cancelled: true, stops: make([]stopPrediction, len(run.stops))}
		}
		n := int32(len(ad.runs))
		ad.byID[run.id] = n
		for i, s := range run.stops[:len(run.stops)-1] {
			if s.noPickup || run.pred.stops[i].skipped {
				continue
			}
			ad.byStop[s.stop] = append(ad.byStop[s.stop], addedEv{at: s.dep, run: n, pos: int32(i)})
		}
		ad.runs = append(ad.runs, run)
	}
	for i := range ad.runs {
		ad.runs[i].pred.run = &ad.runs[i]
	}
	for s, evs := range ad.byStop {
		slices.SortFunc(evs, func(a, b addedEv) int {
			return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.run, b.run), cmp.Compare(a.pos, b.pos))
		})
		ad.byStop[s] = evs
	}
	ix.indexPredicted(fi, snap, ad)
	return ad
}

// indexPredicted fills ad.moved and ad.late from the snapshot's updates
// of timetable runs (each resolved and predicted as a board would: the
// run it matches, that run's winning update) and from the extra runs.
func (ix *Index) indexPredicted(fi *feedIndex, snap *realtime.Snapshot, ad *addedIndex) {
	f := fi.f
	addLate := func(stop int32, c candidate, dep int64) {
		if ad.late == nil {
			ad.late = map[int32][]lateEv{}
		}
		ad.late[stop] = append(ad.late[stop], lateEv{c: c, dep: dep})
	}
	for tripID, us := range snap.Trips {
		tr, ok := fi.tripIdx[tripID]
		if !ok {
			continue
		}
		for _, u := range us {
			if u.Relationship != realtime.TripScheduled || !updatesStops(u) {
				continue
			}
			k := tripKey{fi: fi, trip: tr, start: -1}
			if len(fi.freq[tr]) > 0 {
				if u.StartTime < 0 || !fi.validStart(tr, u.StartTime) {
					continue
				}
				k.start = u.StartTime
			}
			if k.day = u.StartDate; k.day < 0 {
				k.day = fi.impliedDay(k, snap.Timestamp.Unix())
			}
			if k.day < 0 || !fi.active(tr, k.day) || ix.match(snap, k) != u {
				continue
			}
			p := ix.predict(k, u)
			first, end := f.Trips.First[tr], f.Trips.First[tr+1]
			base := baseUnix(fi, k.day)
			shift := int64(0)
			if k.start >= 0 {
				shift = int64(k.start) - int64(f.StopTimes.Departure[first])
			}
			for row := first; row < end-1; row++ { // the last stop is no departure
				ps := &p.stops[row-first]
				if ps.skipped || f.StopTimes.Flags[row]&gtfs.NoPickup != 0 {
					continue
				}
				c := candidate{at: base + shift + int64(f.StopTimes.Departure[row]), trip: tr, st: row, day: k.day, start: k.start, line: fi.lineName[f.Trips.Route[tr]]}
				served := f.StopTimes.Stop[row]
				if ps.assigned > 0 {
					served = ps.assigned - 1
					if ad.moved == nil {
						ad.moved = map[int32][]movedEv{}
					}
					ad.moved[served] = append(ad.moved[served], movedEv{c: c, from: f.StopTimes.Stop[row]})
				}
				if ps.hasDep && ps.dep-c.at > lateSeconds {
					addLate(served, c, ps.dep)
				}
			}
		}
	}
	for n := range ad.runs {
		run := &ad.runs[n]
		for i, s := range run.stops[:len(run.stops)-1] {
			if ps := run.pred.stops[i]; !s.noPickup && !ps.skipped && ps.hasDep && ps.dep-s.dep > lateSeconds {
				addLate(s.stop, candidate{at: s.dep, trip: -1 - int32(n), st: int32(i), day: run.day, start: -1, line: run.line}, ps.dep)
			}
		}
	}
	less := lessCandidate(fi, ad)
	for s, evs := range ad.moved {
		slices.SortFunc(evs, func(a, b movedEv) int { return less(a.c, b.c) })
		ad.moved[s] = evs
	}
	for s, evs := range ad.late {
		slices.SortFunc(evs, func(a, b lateEv) int { return less(a.c, b.c) })
		ad.late[s] = evs
	}
}

// updatesStops reports whether u can move or delay a stop: it has stop
// updates or a trip-level delay.
func updatesStops(u *realtime.TripUpdate) bool { return len(u.Stops) > 0 || u.Delay.HasDelay }

// addMoved merges into res the departures served at stops from now on that
// the timetable has at another stop of the station, not among stops (a
// platform's board gains the trains moved to it; a station's board has
// them already), at most max per stop and every further one tied with the
// last.
func (ad *addedIndex) addMoved(res []candidate, stops []int32, now int64, max int) []candidate {
	for _, s := range stops {
		evs := ad.moved[s]
		i, _ := slices.BinarySearchFunc(evs, now, func(e movedEv, t int64) int { return cmp.Compare(e.c.at, t) })
		n, last := 0, int64(0)
		for _, e := range evs[i:] {
			if n >= max && e.c.at != last {
				break
			}
			if slices.Contains(stops, e.from) {
				continue
			}
			res = append(res, e.c)
			n++
			last = e.c.at
		}
	}
	return res
}

// lateEvents lists, in board order, the departures served at stops that
// are scheduled in [from, to) and predicted to leave at or after now.
func (ad *addedIndex) lateEvents(stops []int32, from, to, now int64) []lateEv {
	if ad == nil || len(ad.late) == 0 {
		return nil
	}
	var out []lateEv
	for _, s := range stops {
		evs := ad.late[s]
		i, _ := slices.BinarySearchFunc(evs, from, func(e lateEv, t int64) int { return cmp.Compare(e.c.at, t) })
		for _, e := range evs[i:] {
			if e.c.at >= to {
				break
			}
			if e.dep >= now {
				out = append(out, e)
			}
		}
	}
	if len(stops) > 1 {
		less := lessCandidate(ad.fi, ad)
		slices.SortFunc(out, func(a, b lateEv) int { return less(a.c, b.c) })
	}
	return out
}

// extraRun resolves one extra update against the feed (see the package
// comment above), false when it cannot be shown.
func (ix *Index) extraRun(fi *feedIndex, u *realtime.TripUpdate, routes map[string]int32) (addedRun, bool) {
	f := fi.f
	run := addedRun{tripID: u.TripID, route: -1, trip: -1, day: -1, headsign: u.Headsign}
	if tr, ok := fi.tripIdx[u.TripID]; ok {
		run.trip, run.route = tr, f.Trips.Route[tr]
	}
	if r, ok := routes[u.RouteID]; ok && u.Relationship != realtime.TripDuplicated {
		run.route = r
	}
	if u.Relationship == realtime.TripDuplicated {
		if run.trip < 0 || len(fi.freq[run.trip]) > 0 || u.NewStartTime < 0 {
			return run, false // nothing to copy, or no start time
		}
		run.day = u.NewStartDate
		if run.day < 0 {
			run.day = u.StartDate
		}
		if run.day < 0 {
			return run, false
		}
		if u.NewTripID != "" {
			run.tripID = u.NewTripID
		} else {
			run.tripID = u.TripID + "-duplicated"
		}
		k := tripKey{fi: fi, trip: run.trip, day: run.day, start: u.NewStartTime}
		first, end := f.Trips.First[run.trip], f.Trips.First[run.trip+1]
		base := baseUnix(fi, run.day)
		shift := int64(u.NewStartTime) - int64(f.StopTimes.Departure[first])
		for i := first; i < end; i++ {
			s := addedStop{stop: f.StopTimes.Stop[i], arr: base + shift + int64(f.StopTimes.Arrival[i]), dep: base + shift + int64(f.StopTimes.Departure[i])}
			if f.StopTimes.Headsign != nil {
				s.headsign = f.Strings[f.StopTimes.Headsign[i]]
			}
			s.noPickup = f.StopTimes.Flags[i]&gtfs.NoPickup != 0
			run.stops = append(run.stops, s)
		}
		u2 := *u
		u2.Relationship = realtime.TripScheduled
		run.pred = ix.predict(k, &u2)
		if run.headsign == "" {
			run.headsign = f.Trips.Headsign[run.trip]
		}
	} else {
		var last int64
		run.stops = make([]addedStop, 0, len(u.Stops))
		for _, su := range u.Stops {
			if su.Relationship == realtime.StopSkipped || su.Relationship == realtime.StopNoData {
				continue
			}
			id := su.StopID
			if su.AssignedStopID != "" {
				id = su.AssignedStopID
			}
			stop, ok := fi.stopIdx[id]
			if !ok || f.Stops.Type[stop] > gtfs.StopStation {
				continue // unknown stop, or an entrance or node
			}
			if f.Stops.Type[stop] == gtfs.StopStation {
				if ch := fi.children[stop]; len(ch) == 1 {
					stop = ch[0]
				}
			}
			s := addedStop{stop: stop, headsign: su.Headsign, noPickup: su.NoPickup}
			switch {
			case su.Arrival.HasTime && su.Departure.HasTime:
				s.arr, s.dep = su.Arrival.Time, max(su.Departure.Time, su.Arrival.Time)
			case su.Departure.HasTime:
				s.arr, s.dep = su.Departure.Time, su.Departure.Time
			case su.Arrival.HasTime:
				s.arr, s.dep = su.Arrival.Time, su.Arrival.Time
			default:
				continue // no time: nothing to show
			}
			if s.arr < last {
				continue // time goes back
			}
			last = s.dep
			run.stops = append(run.stops, s)
		}
		if len(run.stops) < 2 {
			return run, false
		}
		run.day = u.StartDate
		if run.day < 0 {
			run.day = fi.dayOf(run.stops[0].dep)
		}
		if u.Relationship == realtime.TripReplacement && run.trip < 0 {
			return run, false // replaces nothing we know
		}
	}
	if len(run.stops) < 2 {
		return run, false
	}
	if run.headsign == "" {
		run.headsign = f.Stops.Name[fi.stationOf(run.stops[len(run.stops)-1].stop)]
	}
	if run.route >= 0 {
		run.line = fi.lineName[run.route]
	}
	run.name = run.line
	short := u.ShortName
	if short == "" && run.trip >= 0 {
		short = f.Trips.ShortName[run.trip]
	}
	if short != "" && short != run.name {
		run.name = strings.TrimSpace(run.name + " " + short)
	}
	return run, true
}

// runID formats "<prefix>-trip-<feed>_<trip>_YYYYMMDD[-HHMMSS]" (start in
// seconds, -1 none) with one allocation (it runs for every board entry).
func (ix *Index) runID(fi *feedIndex, tripID string, day, start int32) string {
	y, m, d := gtfs.DayDate(day)
	b := make([]byte, 0, len(ix.prefix)+len(fi.id)+len(tripID)*3+24)
	b = append(b, ix.prefix...)
	b = append(b, "-trip-"...)
	b = append(b, fi.id...)
	b = append(b, '_')
	b = appendEscaped(b, tripID)
	b = append(b, '_')
	b = appendDigits(b, y, 4)
	b = appendDigits(b, int(m), 2)
	b = appendDigits(b, d, 2)
	if start >= 0 {
		b = append(b, '-')
		b = appendDigits(b, int(start/3600), 2)
		b = appendDigits(b, int(start/60%60), 2)
		b = appendDigits(b, int(start%60), 2)
	}
	return string(b)
}

// addEvents merges the extra runs' departures at stops from now on into
// res (at most max per stop, and every further one tied with the last).
func (ad *addedIndex) addEvents(res []candidate, stops []int32, now int64, max int) []candidate {
	for _, s := range stops {
		evs := ad.byStop[s]
		i, _ := slices.BinarySearchFunc(evs, now, func(e addedEv, t int64) int { return cmp.Compare(e.at, t) })
		n, last := 0, int64(0)
		for _, e := range evs[i:] {
			if n >= max && e.at != last {
				break
			}
			r := &ad.runs[e.run]
			res = append(res, candidate{at: e.at, trip: -1 - e.run, st: e.pos, day: r.day, start: -1, line: r.line})
			n++
			last = e.at
		}
	}
	return res
}

// run is the extra run of a candidate (c.trip < 0).
func (ad *addedIndex) run(trip int32) *addedRun { return &ad.runs[-1-trip] }

// stopPlatform is a stop's platform_code.
func (fi *feedIndex) stopPlatform(stop int32) string { return fi.f.Stops.Platform[stop] }

// addedDeparture is the board entry of an extra run's departure.
func (ix *Index) addedDeparture(fi *feedIndex, run *addedRun, pos int, ac *alertCtx) Departure {
	f := fi.f
	s := run.stops[pos]
	d := Departure{
		Departure: DepartureTime{ScheduledAt: s.dep * 1000, Platform: fi.stopPlatform(s.stop)},
		Trip: TripRef{ID: run.id, Headsign: run.headsign, LineName: run.line, Type: TripType{"other", "other"},
			EndStationID: ix.stationID(fi, fi.stationOf(run.stops[len(run.stops)-1].stop)), Realtime: true, Added: true},
	}
	if s.headsign != "" {
		d.Trip.Headsign = s.headsign
	}
	if run.route >= 0 {
		d.Trip.Type = fi.tripType[run.route]
		d.Trip.Provider = f.Agencies[f.Routes[run.route].Agency].Name
	} else if len(f.Agencies) > 0 {
		d.Trip.Provider = f.Agencies[0].Name
	}
	ps := run.pred.stops[pos]
	d.Trip.Cancelled = run.pred.cancelled
	if ps.hasDep {
		ms := ps.dep * 1000
		d.Departure.PredictedAt = &ms
	}
	if l := ac.forSel(fi, run.route, -1, run.day, s.stop); l != nil {
		d.Trip.Alerts, d.Trip.alertsJSON = l.views, l.json
	}
	return d
}

// addedTrip is the trip view of an extra run.
func (ix *Index) addedTrip(fi *feedIndex, run *addedRun, ac *alertCtx) Trip {
	f := fi.f
	t := Trip{ID: run.id, Name: run.name, Stops: make([]TripStop, 0, len(run.stops)), GeoJSON: Geometry{Type: "MultiLineString", Coordinates: [][][2]float64{}},
		Alerts: ac.forSel(fi, run.route, -1, run.day, -1).get(), Added: true}
	for i, s := range run.stops {
		st := ix.station(fi, fi.stationOf(s.stop))
		ts := TripStop{Station: &st, Status: "predicted", Alerts: ac.atStop(fi, run.route, -1, run.day, s.stop)}
		ps := run.pred.stops[i]
		plat := fi.stopPlatform(s.stop)
		if i > 0 {
			ts.Arrival = &EventTime{ScheduledAt: s.arr * 1000, Platform: plat}
			if ps.hasArr {
				ms := ps.arr * 1000
				ts.Arrival.PredictedAt = &ms
			}
		}
		if i < len(run.stops)-1 {
			ts.Departure = &EventTime{ScheduledAt: s.dep * 1000, Platform: plat}
			if ps.hasDep {
				ms := ps.dep * 1000
				ts.Departure.PredictedAt = &ms
			}
		}
		switch {
		case run.pred.cancelled:
			ts.Status = "cancelled"
		case ps.skipped:
			ts.Status = "skipped"
		case !ps.hasDep:
			ts.Status = "scheduled"
		}
		t.Stops = append(t.Stops, ts)
		if i > 0 {
			prev := run.stops[i-1].stop
			t.GeoJSON.Coordinates = append(t.GeoJSON.Coordinates, [][2]float64{
				{f.Stops.Lon[prev], f.Stops.Lat[prev]}, {f.Stops.Lon[s.stop], f.Stops.Lat[s.stop]},
			})
		}
	}
	return t
}
