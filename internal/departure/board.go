package departure

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
)

// MaxDepartures is the largest board size a query may ask for.
const MaxDepartures = 100

// LateWindow is how far before the query time a board looks in the
// timetable for departures that realtime predicts to leave at or after it
// (delayed trains).
const LateWindow = 30 * time.Minute

// LateLookBack bounds how late a departure may be and still stay on boards
// until it leaves: departures scheduled more than LateWindow and at most
// LateLookBack before the query time come from the departures each
// realtime snapshot predicts more than LateWindow late (indexed once per
// snapshot), not from the timetable, so the work stays that of the
// snapshot.
const LateLookBack = 3 * time.Hour

const lookBackSeconds = int64(LateLookBack / time.Second)

// candidate is one scheduled departure found for a board.
type candidate struct {
	at    int64 // scheduled Unix seconds
	trip  int32
	st    int32 // stop time index (template row for frequency trips)
	day   int32
	start int32 // frequency instance start seconds, or -1
	line  string
}

func lessCandidate(fi *feedIndex, ad *addedIndex) func(a, b candidate) int {
	tripID := func(c candidate) string {
		if c.trip < 0 {
			return ad.run(c.trip).tripID
		}
		return fi.f.Trips.ID[c.trip]
	}
	return func(a, b candidate) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.line, b.line); c != 0 {
			return c
		}
		if c := strings.Compare(tripID(a), tripID(b)); c != 0 {
			return c
		}
		if a.day != b.day {
			return int(a.day - b.day)
		}
		if a.start != b.start {
			return int(a.start - b.start)
		}
		return int(a.st - b.st)
	}
}

// Departures returns up to max departures at or after at from the station
// (with its platforms) or platform stationID: scheduled at or after at, or
// scheduled up to LateWindow earlier but predicted at or after at. An unknown id is
// apperr.NotFound; max outside 1..MaxDepartures is apperr.Invalid. An empty
// board (nothing runs in the next MaxDaysAhead days) is an empty slice.
//
// With realtime, stops a TripUpdate skips leave the board and later
// departures take their place: the board reads max+10 candidates and,
// while the skipped ones leave it short and more departures exist, reads
// again with twice as many. So a board is short only when the service days
// scanned hold no more departures. Bound: a board without more than 10
// skipped stops among its first candidates reads max+10; otherwise all
// rounds together read fewer than 4·(max+s) candidates, s being the
// skipped ones among them, and each skipped candidate is a SKIPPED
// StopTimeUpdate of the snapshot, so the work is bounded by the snapshot.
func (ix *Index) Departures(stationID string, at time.Time, max int) ([]Departure, error) {
	return ix.DeparturesLang(stationID, at, max, "")
}

// DeparturesLang is Departures with the service alerts' texts in the
// language picked from acceptLanguage (an Accept-Language header value;
// "" or no match: each text's first translation).
func (ix *Index) DeparturesLang(stationID string, at time.Time, max int, acceptLanguage string) ([]Departure, error) {
	fi, stop, err := ix.boardStation(stationID, max)
	if err != nil {
		return nil, err
	}
	stops := fi.departStops(stop)
	now := querySecond(at)
	at = time.Unix(now, 0)
	snap := ix.snapshot(fi)
	var acv alertCtx
	ac := ix.initAlertCtx(&acv, fi, now, acceptLanguage)
	if snap == nil {
		cands := fi.board(stops, now, at.In(fi.loc), max, ix.daysAhead, nil)
		out := make([]Departure, 0, len(cands))
		for _, c := range cands {
			out = append(out, ix.departureOf(tripKey{fi: fi, trip: c.trip, day: c.day, start: c.start}, c, nil, 0, ac))
		}
		return out, nil
	}
	// Delayed departures scheduled before at but predicted at or after it
	// come first: those scheduled more than LateWindow (up to
	// LateLookBack) before at, from the snapshot's index of long delays,
	// then those within LateWindow, from the timetable.
	ad := ix.addedOf(fi, snap)
	out := make([]Departure, 0, max)
	for _, e := range ad.lateEvents(stops, now-lookBackSeconds, now-lateSeconds, now) {
		if len(out) == max {
			return out, nil
		}
		if k, p, pos, skip := ix.resolve(fi, snap, ad, stops, e.c); !skip {
			out = append(out, ix.departureOf(k, e.c, p, pos, ac))
		}
	}
	var late []candidate
	from := at.Add(-LateWindow)
	for _, c := range fi.board(stops, from.Unix(), from.In(fi.loc), MaxDepartures, 1, ad) {
		if c.at < now {
			late = append(late, c)
		}
	}
	for _, c := range late {
		if len(out) == max {
			return out, nil
		}
		k, p, pos, skip := ix.resolve(fi, snap, ad, stops, c)
		if p == nil || skip || !p.stops[pos].hasDep || p.stops[pos].dep < now {
			continue // not predicted to leave here at or after at
		}
		out = append(out, ix.departureOf(k, c, p, pos, ac))
	}
	nLate := len(out)
	for m := max + 10; ; m *= 2 {
		out = out[:nLate]
		cands := fi.board(stops, now, at.In(fi.loc), m, ix.daysAhead, ad)
		for _, c := range cands {
			if len(out) == max {
				return out, nil
			}
			k, p, pos, skip := ix.resolve(fi, snap, ad, stops, c)
			if skip {
				continue
			}
			out = append(out, ix.departureOf(k, c, p, pos, ac))
		}
		if len(cands) < m { // exhausted: every departure of the days scanned was read
			return out, nil
		}
	}
}

// querySecond is the first whole second at or after at. Stop times and
// predictions are whole seconds, so a departure leaves at or after the
// instant at exactly when it leaves at or after querySecond(at): a query
// at 12:00:00.894 must not list a departure at 12:00:00.
func querySecond(at time.Time) int64 {
	s := at.Unix()
	if at.Nanosecond() > 0 {
		s++
	}
	return s
}

// boardStation checks a board query (max, then the station id) and returns
// the station's feed and stop; cached boards share it so that their errors
// are the same.
func (ix *Index) boardStation(stationID string, max int) (*feedIndex, int32, error) {
	const op = "departure.Departures"
	if max < 1 || max > MaxDepartures {
		return nil, 0, apperr.E(op, apperr.Invalid, CodeInvalidMaxDepartures, "max_departures must be between 1 and 100")
	}
	fi, stop, ok := ix.parseStationID(stationID)
	if !ok || fi.f.Stops.Type[stop] > gtfs.StopStation {
		return nil, 0, apperr.E(op, apperr.NotFound, CodeStationNotFound, "no station with id "+stationID)
	}
	return fi, stop, nil
}

// predictionOf returns a candidate's trip run, the run's prediction under
// snap (nil without a matching TripUpdate) and the stop's position in the
// trip. The prediction of an extra run (c.trip < 0, from ad) is always set
// and names the run.
func (ix *Index) predictionOf(fi *feedIndex, snap *realtime.Snapshot, ad *addedIndex, c candidate) (tripKey, *tripPrediction, int) {
	k := tripKey{fi: fi, trip: c.trip, day: c.day, start: c.start}
	if c.trip < 0 {
		return k, ad.run(c.trip).pred, int(c.st)
	}
	pos := int(c.st - fi.f.Trips.First[c.trip])
	var p *tripPrediction
	if tu := ix.match(snap, k); tu != nil {
		p = ix.predict(k, tu)
	}
	return k, p, pos
}

// resolve is predictionOf and whether the departure leaves the board of
// stops: realtime skips the stop (or moves it to another station, or
// takes no passengers there), or serves it at another platform of the
// station that is not among stops (a platform's board).
func (ix *Index) resolve(fi *feedIndex, snap *realtime.Snapshot, ad *addedIndex, stops []int32, c candidate) (tripKey, *tripPrediction, int, bool) {
	k, p, pos := ix.predictionOf(fi, snap, ad, c)
	if p == nil {
		return k, p, pos, false
	}
	ps := &p.stops[pos]
	return k, p, pos, ps.skipped || ps.assigned > 0 && !slices.Contains(stops, ps.assigned-1)
}

// departureOf is the board entry of a candidate with its prediction and
// the alerts of ac that apply to it at the stop it is served at (the
// realtime platform when it changed).
func (ix *Index) departureOf(k tripKey, c candidate, p *tripPrediction, pos int, ac *alertCtx) Departure {
	if p != nil && p.run != nil {
		return ix.addedDeparture(k.fi, p.run, pos, ac)
	}
	d := Departure{
		Departure: DepartureTime{ScheduledAt: c.at * 1000, Platform: k.fi.platform(c.st)},
		Trip:      ix.tripRef(k, c.st),
	}
	if ac != nil {
		stop := k.fi.f.StopTimes.Stop[c.st]
		if p != nil && p.stops[pos].assigned > 0 {
			stop = p.stops[pos].assigned - 1
		}
		if l := ac.forRun(k, stop); l != nil {
			d.Trip.Alerts, d.Trip.alertsJSON = l.views, l.json
		}
	}
	if p != nil {
		d.Trip.Realtime = true
		d.Trip.Cancelled = p.cancelled
		ps := p.stops[pos]
		if ps.hasDep {
			ms := ps.dep * 1000
			d.Departure.PredictedAt = &ms
		}
		if ps.assigned > 0 {
			if plat := k.fi.stopPlatform(ps.assigned - 1); plat != d.Departure.Platform {
				d.Trip.ScheduledPlatform = ptrString(d.Departure.Platform)
				d.Departure.Platform = plat
			}
		}
	}
	return d
}

// board finds the next max scheduled departures from stops at or after
// now, with the departures of ad's extra runs (nil: none).
func (fi *feedIndex) board(stops []int32, now int64, local time.Time, max int, daysAhead int32, ad *addedIndex) []candidate {
	today := gtfs.DayNumber(local.Year(), int(local.Month()), local.Day())
	res := make([]candidate, 0, 2*max+8) // each stop adds up to max per day before the cut to max
	less := lessCandidate(fi, ad)
	for day := today - fi.backDays; day <= today+daysAhead; day++ {
		base := gtfs.ServiceBase(day, fi.loc).Unix()
		if len(res) >= max && res[max-1].at < base {
			break
		}
		if day < fi.f.MinDay || day > fi.f.MaxDay {
			continue
		}
		from := now - base
		if from > int64(fi.maxTime) {
			continue
		}
		from = max64(from, 0)
		n0 := len(res)
		limit := int64(1 << 62)
		if n0 >= max {
			limit = res[max-1].at
		}
		for _, s := range stops {
			res = fi.dayEvents(res, s, day, base, int32(from), max, limit)
			res = fi.dayFrequencies(res, s, day, base, int32(from), max)
		}
		if len(res) > n0 {
			slices.SortFunc(res, less)
			if len(res) > max {
				res = res[:max]
			}
		}
	}
	if ad != nil {
		// Extra runs and the departures realtime moves to one of stops
		// from another platform are not per service day: their first max
		// departures at each stop, merged.
		n0 := len(res)
		res = ad.addEvents(res, stops, now, max)
		if res = ad.addMoved(res, stops, now, max); len(res) > n0 {
			slices.SortFunc(res, less)
			if len(res) > max {
				res = res[:max]
			}
		}
	}
	return res
}

func ptrString(s string) *string { return &s }

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// dayEvents appends the first max active timetable departures of stop on
// day at or after from, and any more leaving at the same second as the last.
// Departures later than limit cannot make the board and end the scan.
func (fi *feedIndex) dayEvents(res []candidate, s int32, day int32, base int64, from int32, max int, limit int64) []candidate {
	lo, hi := fi.evStart[s], fi.evStart[s+1]
	deps := fi.evDep[lo:hi]
	i, _ := slices.BinarySearch(deps, from)
	bits := fi.activeOn(day)
	if bits == nil {
		return res
	}
	svc := fi.f.Trips.Service
	n := 0
	last := int64(math.MinInt64)
	for j := int(lo) + i; j < int(hi); j++ {
		at := base + int64(fi.evDep[j])
		// After max events, only those leaving at the same second as the
		// last taken still come: the board breaks such ties by line and
		// trip id, not by timetable row, so it must see all of them.
		if at > limit || (n >= max && at != last) {
			break
		}
		tr := fi.evTrip[j]
		if s := svc[tr]; bits[s>>6]>>(s&63)&1 == 0 {
			continue
		}
		res = append(res, candidate{at: at, trip: tr, st: fi.evST[j], day: day, start: -1, line: fi.lineName[fi.f.Trips.Route[tr]]})
		n++
		last = at
	}
	return res
}

// dayFrequencies expands frequency-based trips at stop s on day.
func (fi *feedIndex) dayFrequencies(res []candidate, s int32, day int32, base int64, from int32, max int) []candidate {
	st := &fi.f.StopTimes
	for j := fi.fqStart[s]; j < fi.fqStart[s+1]; j++ {
		tr, row := fi.fqTrip[j], fi.fqST[j]
		if !fi.active(tr, day) {
			continue
		}
		offset := st.Departure[row] - st.Departure[fi.f.Trips.First[tr]]
		for _, w := range fi.freq[tr] {
			k := int32(0)
			if need := from - offset - w.Start; need > 0 {
				k = (need + w.Headway - 1) / w.Headway
			}
			for n := 0; n < max; n, k = n+1, k+1 {
				start := w.Start + k*w.Headway
				if start >= w.End {
					break
				}
				res = append(res, candidate{at: base + int64(start+offset), trip: tr, st: row, day: day, start: start, line: fi.lineName[fi.f.Trips.Route[tr]]})
			}
		}
	}
	return res
}

// platform is the stop's platform_code, else the stop time's track, else "".
func (fi *feedIndex) platform(st int32) string {
	if p := fi.f.Stops.Platform[fi.f.StopTimes.Stop[st]]; p != "" {
		return p
	}
	if fi.f.StopTimes.Track != nil {
		return fi.f.Strings[fi.f.StopTimes.Track[st]]
	}
	return ""
}

// headsign is stop_headsign, else trip_headsign, else the last stop's name.
func (fi *feedIndex) headsign(trip, st int32) string {
	f := fi.f
	if f.StopTimes.Headsign != nil {
		if h := f.StopTimes.Headsign[st]; h != 0 {
			return f.Strings[h]
		}
	}
	if h := f.Trips.Headsign[trip]; h != "" {
		return h
	}
	last := f.Trips.First[trip+1] - 1
	return f.Stops.Name[fi.stationOf(f.StopTimes.Stop[last])]
}

func (ix *Index) tripRef(k tripKey, st int32) TripRef {
	fi, f := k.fi, k.fi.f
	r := f.Trips.Route[k.trip]
	last := f.Trips.First[k.trip+1] - 1
	return TripRef{
		ID:           ix.tripID(k),
		Headsign:     fi.headsign(k.trip, st),
		LineName:     fi.lineName[r],
		Type:         fi.tripType[r],
		Provider:     f.Agencies[f.Routes[r].Agency].Name,
		EndStationID: ix.stationID(fi, fi.stationOf(f.StopTimes.Stop[last])),
	}
}

func (ix *Index) snapshot(fi *feedIndex) *realtime.Snapshot {
	if ix.rt == nil {
		return nil
	}
	return ix.rt.TripUpdates(fi.id)
}

func baseUnix(fi *feedIndex, day int32) int64 { return gtfs.ServiceBase(day, fi.loc).Unix() }
