package gtfs

import (
	"sort"
	"strconv"
)

// rawStopTimes collects stop_times rows in file order before grouping by trip.
type rawStopTimes struct {
	trip []int32
	line []int32
	StopTimes
}

func (p *parser) stopTimes(t *table) {
	cTrip, cArr, cDep, cStop, cSeq := t.col("trip_id"), t.col("arrival_time"), t.col("departure_time"), t.col("stop_id"), t.col("stop_sequence")
	cHead, cPick, cDrop, cTrack := t.col("stop_headsign"), t.col("pickup_type"), t.col("drop_off_type"), t.col("track")
	var raw rawStopTimes
	hasHead, hasTrack := false, false
	lastTrip, lastTripID := int32(-1), ""
	for t.next() {
		tid := t.get(cTrip)
		var tr int32
		if tid == lastTripID && lastTrip >= 0 {
			tr = lastTrip
		} else {
			var ok bool
			tr, ok = p.trIdx[tid]
			if !ok {
				t.bad("stop time for unknown trip_id " + strconv.Quote(tid))
				continue
			}
			lastTrip, lastTripID = tr, p.f.Trips.ID[tr]
		}
		st, ok := p.stopIdx[t.get(cStop)]
		if !ok {
			t.bad("stop time for unknown stop_id " + strconv.Quote(t.get(cStop)))
			continue
		}
		if lt := p.f.Stops.Type[st]; lt > StopStation {
			t.bad("stop time at stop " + strconv.Quote(t.get(cStop)) + " whose location_type is " + strconv.Itoa(int(lt)))
			continue
		}
		seq, ok := parseInt(t.get(cSeq))
		if !ok || seq < 0 || seq > 1<<31 {
			t.bad("invalid stop_sequence " + strconv.Quote(t.get(cSeq)))
			continue
		}
		arr, ok1 := parseTime(t.get(cArr))
		dep, ok2 := parseTime(t.get(cDep))
		if !ok1 || !ok2 {
			t.bad("invalid arrival_time or departure_time")
			continue
		}
		if arr < 0 {
			arr = dep
		} else if dep < 0 {
			dep = arr
		}
		if dep >= 0 && dep < arr {
			t.bad("departure_time before arrival_time; using the arrival time")
			dep = arr
		}
		var flags uint8
		if t.get(cPick) == "1" {
			flags |= NoPickup
		}
		if t.get(cDrop) == "1" {
			flags |= NoDropOff
		}
		var h, tk uint32
		if v := t.get(cHead); v != "" {
			h, hasHead = p.internIdx(v), true
		}
		if v := t.get(cTrack); v != "" {
			tk, hasTrack = p.internIdx(v), true
		}
		raw.trip = append(raw.trip, tr)
		raw.line = append(raw.line, int32(t.line))
		raw.Stop = append(raw.Stop, st)
		raw.Arrival = append(raw.Arrival, arr)
		raw.Departure = append(raw.Departure, dep)
		raw.Sequence = append(raw.Sequence, uint32(seq))
		raw.Flags = append(raw.Flags, flags)
		raw.Headsign = append(raw.Headsign, h)
		raw.Track = append(raw.Track, tk)
	}
	p.groupStopTimes(&raw, hasHead, hasTrack)
}

// groupStopTimes orders the rows by trip and stop_sequence (a counting sort
// by trip, then an insertion sort inside each trip), drops duplicate
// sequences, interpolates missing times and drops trips whose first or last
// stop has no time.
func (p *parser) groupStopTimes(raw *rawStopTimes, hasHead, hasTrack bool) {
	nt := p.f.Trips.Len()
	n := len(raw.trip)
	start := make([]int32, nt+1)
	for _, tr := range raw.trip {
		start[tr+1]++
	}
	for i := 1; i <= nt; i++ {
		start[i] += start[i-1]
	}
	order := make([]int32, n)
	fill := make([]int32, nt)
	for i, tr := range raw.trip {
		order[start[tr]+fill[tr]] = int32(i)
		fill[tr]++
	}
	st := &p.f.StopTimes
	st.Stop = make([]int32, 0, n)
	st.Arrival = make([]int32, 0, n)
	st.Departure = make([]int32, 0, n)
	st.Sequence = make([]uint32, 0, n)
	st.Flags = make([]uint8, 0, n)
	if hasHead {
		st.Headsign = make([]uint32, 0, n)
	}
	if hasTrack {
		st.Track = make([]uint32, 0, n)
	}
	first := make([]int32, nt+1)
	var maxTime int32
	for tr := 0; tr < nt; tr++ {
		rows := order[start[tr]:start[tr+1]]
		sorted := true
		for i := 1; i < len(rows); i++ {
			if raw.Sequence[rows[i]] < raw.Sequence[rows[i-1]] {
				sorted = false
				break
			}
		}
		if !sorted {
			sort.SliceStable(rows, func(a, b int) bool { return raw.Sequence[rows[a]] < raw.Sequence[rows[b]] })
		}
		first[tr] = int32(len(st.Stop))
		k := 0
		for i, r := range rows {
			if i > 0 && raw.Sequence[r] == raw.Sequence[rows[k-1]] {
				p.pr.add("stop_times.txt", int(raw.line[r]), "duplicate stop_sequence "+strconv.Itoa(int(raw.Sequence[r]))+" in trip "+strconv.Quote(p.f.Trips.ID[tr]))
				continue
			}
			rows[k] = r
			k++
		}
		rows = rows[:k]
		if len(rows) == 0 {
			continue
		}
		if raw.Departure[rows[0]] < 0 || raw.Arrival[rows[len(rows)-1]] < 0 {
			p.pr.add("stop_times.txt", int(raw.line[rows[0]]), "trip "+strconv.Quote(p.f.Trips.ID[tr])+" has no time at its first or last stop; trip dropped")
			continue
		}
		base := len(st.Stop)
		for _, r := range rows {
			st.Stop = append(st.Stop, raw.Stop[r])
			st.Arrival = append(st.Arrival, raw.Arrival[r])
			st.Departure = append(st.Departure, raw.Departure[r])
			st.Sequence = append(st.Sequence, raw.Sequence[r])
			st.Flags = append(st.Flags, raw.Flags[r])
			if hasHead {
				st.Headsign = append(st.Headsign, raw.Headsign[r])
			}
			if hasTrack {
				st.Track = append(st.Track, raw.Track[r])
			}
		}
		interpolate(st, base, len(st.Stop))
		for i := base + 1; i < len(st.Stop); i++ {
			if st.Arrival[i] < st.Departure[i-1] {
				p.pr.add("stop_times.txt", int(raw.line[rows[i-base]]), "trip "+strconv.Quote(p.f.Trips.ID[tr])+" goes back in time; clamped")
				st.Arrival[i] = st.Departure[i-1]
				st.Departure[i] = max(st.Departure[i], st.Arrival[i])
			}
		}
		maxTime = max(maxTime, st.Arrival[len(st.Stop)-1])
	}
	first[nt] = int32(len(st.Stop))
	p.f.Trips.First = first
	p.f.MaxTime = maxTime
}

// interpolate fills missing times (-1) between timed stops linearly by position.
func interpolate(st *StopTimes, from, to int) {
	prev := from
	for i := from + 1; i < to; i++ {
		if st.Departure[i] < 0 {
			continue
		}
		if i > prev+1 {
			t0, t1 := st.Departure[prev], st.Arrival[i]
			steps := int32(i - prev)
			for j := prev + 1; j < i; j++ {
				v := t0 + (t1-t0)*int32(j-prev)/steps
				st.Arrival[j], st.Departure[j] = v, v
				st.Flags[j] |= Estimated
			}
		}
		prev = i
	}
}
