package departure

import (
	"html"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/gtfs"
)

// Trip returns one run of a trip (an id from a board entry) with every stop,
// scheduled and predicted times and a MultiLineString of consecutive stop
// pairs. Unknown ids, and runs whose service does not operate on the id's
// date, are apperr.NotFound. Alerts are those active now (TripLang).
func (ix *Index) Trip(id string) (Trip, error) {
	return ix.TripLang(id, time.Now(), "")
}

// TripLang is Trip with the service alerts active at at: the run's (its
// trip, route, route type or agency, without a stop) in Trip.Alerts, and
// each stop's station's (a stop or station without route, trip or agency)
// on the stop, texts in the language picked from acceptLanguage.
func (ix *Index) TripLang(id string, at time.Time, acceptLanguage string) (Trip, error) {
	if fi, _, _ := ix.cutID(id, "-trip-"); fi != nil {
		// A run that exists only in realtime (or replaces a timetable run).
		if ad := ix.addedOf(fi, ix.snapshot(fi)); ad != nil {
			if n, ok := ad.byID[id]; ok {
				return ix.addedTrip(fi, &ad.runs[n], ix.alertCtxFor(fi, querySecond(at), acceptLanguage)), nil
			}
		}
	}
	k, ok := ix.parseTripID(id)
	if ok && !k.fi.active(k.trip, k.day) {
		ok = false
	}
	if ok && k.start >= 0 && !k.fi.validStart(k.trip, k.start) {
		ok = false
	}
	if ok && (k.start >= 0) != (len(k.fi.freq[k.trip]) > 0) {
		ok = false
	}
	if !ok {
		return Trip{}, apperr.E("departure.Trip", apperr.NotFound, CodeTripNotFound, "no trip with id "+id)
	}
	fi, f := k.fi, k.fi.f
	var snap = ix.snapshot(fi)
	var p *tripPrediction
	if u := ix.match(snap, k); u != nil {
		p = ix.predict(k, u)
	}
	first, end := f.Trips.First[k.trip], f.Trips.First[k.trip+1]
	base := baseUnix(fi, k.day)
	shift := int64(0)
	if k.start >= 0 {
		shift = int64(k.start) - int64(f.StopTimes.Departure[first])
	}
	r := f.Trips.Route[k.trip]
	name := fi.lineName[r]
	if sn := f.Trips.ShortName[k.trip]; sn != "" && sn != name {
		name = strings.TrimSpace(name + " " + sn)
	}
	ac := ix.alertCtxFor(fi, querySecond(at), acceptLanguage)
	t := Trip{ID: ix.tripID(k), Name: name, Stops: make([]TripStop, 0, end-first), GeoJSON: Geometry{Type: "MultiLineString", Coordinates: [][][2]float64{}},
		Alerts: ac.forRun(k, -1).get()}
	prevStop := int32(-1)
	for i := first; i < end; i++ {
		pos := int(i - first)
		stop := f.StopTimes.Stop[i]
		plat := fi.platform(i)
		var schedPlat *string
		if p != nil && p.stops[pos].assigned > 0 {
			// Served at another stop: its station and platform.
			served := p.stops[pos].assigned - 1
			if np := fi.stopPlatform(served); np != plat {
				schedPlat, plat = ptrString(plat), np
			}
			stop = served
		}
		st := ix.station(fi, fi.stationOf(stop))
		ts := TripStop{Station: &st, Status: "scheduled", Alerts: ac.atStop(fi, r, k.trip, k.day, stop)}
		if i > first {
			ts.Arrival = &EventTime{ScheduledAt: (base + shift + int64(f.StopTimes.Arrival[i])) * 1000, Platform: plat, ScheduledPlatform: schedPlat}
		}
		if i < end-1 {
			ts.Departure = &EventTime{ScheduledAt: (base + shift + int64(f.StopTimes.Departure[i])) * 1000, Platform: plat, ScheduledPlatform: schedPlat}
		}
		if p != nil {
			ps := p.stops[pos]
			switch {
			case p.cancelled:
				ts.Status = "cancelled"
			case ps.skipped && !ps.moved && !ps.noPickup:
				ts.Status = "skipped"
			case ps.hasDep:
				ts.Status = "predicted"
				if ts.Arrival != nil {
					ms := ps.arr * 1000
					ts.Arrival.PredictedAt = &ms
				}
				if ts.Departure != nil {
					ms := ps.dep * 1000
					ts.Departure.PredictedAt = &ms
				}
			}
		}
		t.Stops = append(t.Stops, ts)
		if i > first {
			t.GeoJSON.Coordinates = append(t.GeoJSON.Coordinates, [][2]float64{
				{f.Stops.Lon[prevStop], f.Stops.Lat[prevStop]}, {f.Stops.Lon[stop], f.Stops.Lat[stop]},
			})
		}
		prevStop = stop
	}
	return t, nil
}

// validStart reports whether start is an instance start of a frequency trip.
func (fi *feedIndex) validStart(trip, start int32) bool {
	for _, w := range fi.freq[trip] {
		if start >= w.Start && start < w.End && (start-w.Start)%w.Headway == 0 {
			return true
		}
	}
	return false
}

// Attributions names every agency and attributed organisation of all feeds
// (deduplicated, in feed order) as text, as HTML links, and the first URL.
func (ix *Index) Attributions() Attribution {
	type org struct{ name, url string }
	var orgs []org
	seen := map[string]bool{}
	add := func(name, url string) {
		if name == "" || seen[name] {
			return
		}
		seen[name] = true
		orgs = append(orgs, org{name, url})
	}
	for _, fi := range ix.feeds {
		for _, a := range fi.f.Agencies {
			add(a.Name, a.URL)
		}
		for _, a := range fi.f.Attributions {
			add(a.Organization, a.URL)
		}
	}
	var text, h []string
	out := Attribution{}
	for _, o := range orgs {
		text = append(text, o.name)
		if o.url != "" {
			h = append(h, `<a href="`+html.EscapeString(o.url)+`">`+html.EscapeString(o.name)+`</a>`)
			if out.URL == "" {
				out.URL = o.url
			}
		} else {
			h = append(h, html.EscapeString(o.name))
		}
	}
	if len(orgs) > 0 {
		out.Text = "Timetable data: " + strings.Join(text, ", ")
		out.HTML = "Timetable data: " + strings.Join(h, ", ")
	}
	return out
}

// FindTrip finds the run that departs fromStation at dep and later arrives
// at toStation at arr (scheduled times, whole seconds), optionally only on
// lineName ("" = any): the search_by_characteristics lookup. No such run is
// apperr.NotFound.
func (ix *Index) FindTrip(fromStation string, dep time.Time, toStation string, arr time.Time, lineName string) (Trip, error) {
	return ix.FindTripLang(fromStation, dep, toStation, arr, lineName, time.Now(), "")
}

// FindTripLang is FindTrip with the alerts of TripLang(id, at, acceptLanguage).
func (ix *Index) FindTripLang(fromStation string, dep time.Time, toStation string, arr time.Time, lineName string, at time.Time, acceptLanguage string) (Trip, error) {
	notFound := apperr.E("departure.FindTrip", apperr.NotFound, CodeTripNotFound, "no trip matches these characteristics")
	fi, from, ok := ix.parseStationID(fromStation)
	fi2, to, ok2 := ix.parseStationID(toStation)
	if !ok || !ok2 || fi != fi2 || fi.f.Stops.Type[from] > gtfs.StopStation || fi.f.Stops.Type[to] > gtfs.StopStation {
		return Trip{}, notFound
	}
	f := fi.f
	targets := map[int32]bool{}
	for _, s := range fi.departStops(to) {
		targets[s] = true
	}
	for _, c := range fi.board(fi.departStops(from), dep.Unix(), dep.In(fi.loc), MaxDepartures, 0, nil) {
		if c.at != dep.Unix() {
			break
		}
		if lineName != "" && fi.lineName[f.Trips.Route[c.trip]] != lineName {
			continue
		}
		base := baseUnix(fi, c.day)
		shift := int64(0)
		if c.start >= 0 {
			shift = int64(c.start) - int64(f.StopTimes.Departure[f.Trips.First[c.trip]])
		}
		for i := c.st + 1; i < f.Trips.First[c.trip+1]; i++ {
			if targets[f.StopTimes.Stop[i]] && base+shift+int64(f.StopTimes.Arrival[i]) == arr.Unix() {
				return ix.TripLang(ix.tripID(tripKey{fi: fi, trip: c.trip, day: c.day, start: c.start}), at, acceptLanguage)
			}
		}
	}
	return Trip{}, notFound
}
