package departure

import (
	"time"

	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
)

// stopPrediction is the realtime state of one stop of a trip run.
type stopPrediction struct {
	arr, dep       int64 // predicted Unix seconds
	hasArr, hasDep bool
	skipped        bool
	updated        bool  // a StopTimeUpdate (not propagation) gave this stop's values
	assigned       int32 // the stop served instead of the timetable's, plus one (0: the timetable's)
	moved          bool  // assigned is at another station: the run leaves this station's boards (skipped)
	noPickup       bool  // realtime pickup_type 1: served, but not a departure (skipped on boards)
}

type tripPrediction struct {
	cancelled bool
	stops     []stopPrediction // per stop of the trip, in order
	run       *addedRun        // the extra run this predicts (nil: a timetable run)
}

// match finds the TripUpdate for a trip run: same trip_id and start_date (and
// start_time for frequency instances). Updates without start_date apply to
// the run whose scheduled span is closest to the snapshot's timestamp.
// ADDED, NEW and DUPLICATED updates describe extra runs and never match; of
// several updates of one run a CANCELED, DELETED or REPLACEMENT one wins,
// else the first.
func (ix *Index) match(snap *realtime.Snapshot, k tripKey) *realtime.TripUpdate {
	if snap == nil {
		return nil
	}
	var found *realtime.TripUpdate
	for _, u := range snap.For(k.fi.f.Trips.ID[k.trip]) {
		if u.Relationship == realtime.TripAdded || u.Relationship == realtime.TripNew || u.Relationship == realtime.TripDuplicated || u.Relationship == realtime.TripUnscheduled {
			continue
		}
		if k.start >= 0 {
			if u.StartTime != k.start {
				continue
			}
		}
		if u.StartDate >= 0 {
			if u.StartDate != k.day {
				continue
			}
		} else if k.fi.impliedDay(k, snap.Timestamp.Unix()) != k.day {
			continue
		}
		if u.Relationship != realtime.TripScheduled {
			// CANCELED, DELETED or REPLACEMENT win over predictions
			// of the same run.
			return u
		}
		if found == nil {
			found = u
		}
	}
	return found
}

// impliedDay is the active service day whose run of the trip is closest in
// time to ts (zero distance while the run is under way).
func (fi *feedIndex) impliedDay(k tripKey, ts int64) int32 {
	f := fi.f
	first, last := f.Trips.First[k.trip], f.Trips.First[k.trip+1]-1
	if first > last {
		return -1
	}
	startOff, endOff := int64(f.StopTimes.Departure[first]), int64(f.StopTimes.Arrival[last])
	if k.start >= 0 {
		shift := int64(k.start) - startOff
		startOff, endOff = startOff+shift, endOff+shift
	}
	local := unixIn(ts, fi)
	today := gtfs.DayNumber(local.Year(), int(local.Month()), local.Day())
	best, bestDist := int32(-1), int64(1<<62)
	for d := today - fi.backDays; d <= today+1; d++ {
		if !fi.active(k.trip, d) {
			continue
		}
		base := gtfs.ServiceBase(d, fi.loc).Unix()
		var dist int64
		switch {
		case ts < base+startOff:
			dist = base + startOff - ts
		case ts > base+endOff:
			dist = ts - base - endOff
		}
		if dist < bestDist {
			best, bestDist = d, dist
		}
	}
	return best
}

// predict applies a TripUpdate to a trip run: stop updates match by
// stop_sequence when given, else by stop_id in trip order; a stop uses its
// update's time, else its delay, else the other event's values; the last
// known delay propagates downstream (never upstream); NO_DATA clears it;
// SKIPPED marks the stop; CANCELED marks the whole run; DELETED and
// REPLACEMENT (an extra run replaces it, added.go) skip every stop, so the
// run leaves boards (DELETED also marks it cancelled). A stop served at
// assigned_stop_id, or at another stop_id of the station matched by
// stop_sequence, is predicted there (assigned); when that is another
// station, the stop also counts as skipped for boards (moved), as does a
// stop whose StopTimeProperties.pickup_type is 1 (noPickup).
func (ix *Index) predict(k tripKey, u *realtime.TripUpdate) *tripPrediction {
	f := k.fi.f
	first, end := f.Trips.First[k.trip], f.Trips.First[k.trip+1]
	n := int(end - first)
	p := &tripPrediction{stops: make([]stopPrediction, n)}
	switch u.Relationship {
	case realtime.TripCanceled:
		p.cancelled = true
		return p
	case realtime.TripDeleted, realtime.TripReplacement:
		p.cancelled = u.Relationship == realtime.TripDeleted
		for i := range p.stops {
			p.stops[i].skipped = true
		}
		return p
	}
	base := gtfs.ServiceBase(k.day, k.fi.loc).Unix()
	shift := int64(0)
	if k.start >= 0 {
		shift = int64(k.start) - int64(f.StopTimes.Departure[first])
	}
	sched := func(i int) (int64, int64) {
		r := first + int32(i)
		return base + shift + int64(f.StopTimes.Arrival[r]), base + shift + int64(f.StopTimes.Departure[r])
	}
	upd := make([]*realtime.StopUpdate, n)
	cursor := 0
	for j := range u.Stops {
		su := &u.Stops[j]
		if pos := k.fi.findStop(first, n, cursor, su); pos >= 0 {
			upd[pos] = su
			cursor = pos + 1
		}
	}
	var delay int64
	known := u.Delay.HasDelay
	if known {
		delay = int64(u.Delay.Delay)
	}
	for i := 0; i < n; i++ {
		sa, sd := sched(i)
		ps := &p.stops[i]
		su := upd[i]
		if su != nil {
			switch su.Relationship {
			case realtime.StopSkipped:
				ps.skipped = true
				continue
			case realtime.StopNoData:
				known = false
				continue
			}
			k.fi.assign(ps, f.StopTimes.Stop[first+int32(i)], su)
			if su.NoPickup {
				ps.noPickup, ps.skipped = true, true
			}
			arr, hasArr := eventTime(su.Arrival, sa)
			dep, hasDep := eventTime(su.Departure, sd)
			switch {
			case hasArr && !hasDep:
				dep, hasDep = max64(sd+(arr-sa), arr), true
			case hasDep && !hasArr:
				arr, hasArr = min(sa+(dep-sd), dep), true
			}
			if hasDep {
				ps.arr, ps.dep, ps.hasArr, ps.hasDep, ps.updated = arr, max64(dep, arr), true, true, true
				delay, known = ps.dep-sd, true
				continue
			}
		}
		if known {
			ps.arr, ps.dep, ps.hasArr, ps.hasDep = sa+delay, sd+delay, true, true
		}
	}
	return p
}

// eventTime is the event's absolute time, else scheduled plus its delay.
func eventTime(e realtime.Event, scheduled int64) (int64, bool) {
	switch {
	case e.HasTime:
		return e.Time, true
	case e.HasDelay:
		return scheduled + int64(e.Delay), true
	}
	return 0, false
}

// assign records the stop an update serves instead of the timetable's
// stop sched: its assigned_stop_id, else its stop_id when that is another
// platform (location_type 0) of the same station.
func (fi *feedIndex) assign(ps *stopPrediction, sched int32, su *realtime.StopUpdate) {
	s, ok := int32(-1), false
	if su.AssignedStopID != "" {
		s, ok = fi.stopIdx[su.AssignedStopID]
	} else if su.StopID != "" && su.StopID != fi.f.Stops.ID[sched] {
		if s, ok = fi.stopIdx[su.StopID]; ok && (fi.f.Stops.Type[s] != gtfs.StopPlatform || fi.stationOf(s) != fi.stationOf(sched)) {
			ok = false
		}
	}
	if !ok || s == sched || fi.f.Stops.Type[s] > gtfs.StopStation {
		return
	}
	ps.assigned = s + 1
	if fi.stationOf(s) != fi.stationOf(sched) {
		ps.moved, ps.skipped = true, true
	}
}

// findStop returns the trip position a stop update refers to, searching
// from cursor (so a loop visiting a stop twice matches in order), or -1.
// By stop_id, a stop matches its platform, its station or another
// platform of that station (a platform change).
func (fi *feedIndex) findStop(first int32, n, cursor int, su *realtime.StopUpdate) int {
	st := &fi.f.StopTimes
	target, known := int32(-1), false
	if !su.HasSequence {
		if target, known = fi.stopIdx[su.StopID]; known {
			target = fi.stationOf(target)
		}
	}
	for pass := 0; pass < 2; pass++ {
		from, to := cursor, n
		if pass == 1 {
			from, to = 0, cursor
		}
		for i := from; i < to; i++ {
			r := first + int32(i)
			if su.HasSequence {
				if st.Sequence[r] == su.Sequence {
					return i
				}
			} else if known && fi.stationOf(st.Stop[r]) == target {
				return i // the platform, its parent station or a sibling
			}
		}
	}
	return -1
}

func unixIn(ts int64, fi *feedIndex) time.Time { return time.Unix(ts, 0).In(fi.loc) }
