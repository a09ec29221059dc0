package gtfs

import (
	"archive/zip"
	"cmp"
	"io"
	"math"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
)

// ParseFile parses the GTFS zip at name.
func ParseFile(name string) (*Feed, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, apperr.E("gtfs.ParseFile", apperr.Invalid, CodeGTFSUnreadable, "cannot open the GTFS file: "+err.Error())
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, apperr.Wrap("gtfs.ParseFile", err)
	}
	return Parse(f, st.Size())
}

// Parse reads a GTFS zip. Bad rows are skipped and listed in Feed.Problems;
// a missing required file or an unknown time zone is an apperr.Unprocessable error.
func Parse(r io.ReaderAt, size int64) (*Feed, error) {
	const op = "gtfs.Parse"
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeGTFSNotZip, "the GTFS file is not a readable zip: "+err.Error())
	}
	files := map[string]*zip.File{}
	for _, zf := range zr.File {
		base := strings.ToLower(path.Base(zf.Name))
		if !strings.HasSuffix(base, ".txt") || zf.FileInfo().IsDir() {
			continue
		}
		if old, ok := files[base]; ok && strings.Count(old.Name, "/") <= strings.Count(zf.Name, "/") {
			continue
		}
		files[base] = zf
	}
	p := &parser{files: files, f: &Feed{Strings: []string{""}}, intern: map[string]uint32{"": 0}, strs: map[string]string{}}
	for _, req := range []string{"agency.txt", "stops.txt", "routes.txt", "trips.txt", "stop_times.txt"} {
		if files[req] == nil {
			return nil, apperr.E(op, apperr.Unprocessable, CodeGTFSMissingFile, "the GTFS feed has no "+req)
		}
	}
	if files["calendar.txt"] == nil && files["calendar_dates.txt"] == nil {
		return nil, apperr.E(op, apperr.Unprocessable, CodeGTFSMissingFile, "the GTFS feed has neither calendar.txt nor calendar_dates.txt")
	}
	steps := []func(*table){p.agency, p.stops, p.routes, p.calendar, p.calendarDates, p.shapes, p.trips, p.stopTimes, p.frequencies, p.attributions, p.feedInfo}
	names := []string{"agency.txt", "stops.txt", "routes.txt", "calendar.txt", "calendar_dates.txt", "shapes.txt", "trips.txt", "stop_times.txt", "frequencies.txt", "attributions.txt", "feed_info.txt"}
	for i, step := range steps {
		if err := p.read(names[i], step); err != nil {
			return nil, apperr.E(op, apperr.Unprocessable, CodeGTFSUnreadable, names[i]+": "+err.Error())
		}
		if i == 0 {
			if len(p.f.Agencies) == 0 {
				return nil, apperr.E(op, apperr.Unprocessable, CodeGTFSNoAgency, "agency.txt has no valid agency")
			}
			if _, err := time.LoadLocation(p.f.Timezone); err != nil || p.f.Timezone == "" {
				return nil, apperr.E(op, apperr.Unprocessable, CodeGTFSBadTimezone, "unknown agency_timezone "+strconv.Quote(p.f.Timezone))
			}
		}
	}
	p.finishServices()
	p.f.Problems, p.f.ProblemCount = p.pr.list, p.pr.count
	return p.f, nil
}

type parser struct {
	files   map[string]*zip.File
	f       *Feed
	pr      problems
	intern  map[string]uint32
	strs    map[string]string
	stopIdx map[string]int32
	agIdx   map[string]int32
	rtIdx   map[string]int32
	svIdx   map[string]int32
	trIdx   map[string]int32
	shIdx   map[string]int32 // nil without shapes.txt
}

func (p *parser) read(name string, fn func(*table)) error {
	zf := p.files[name]
	if zf == nil {
		return nil
	}
	rc, err := zf.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	fn(newTable(name, rc, &p.pr))
	return nil
}

// str returns a shared copy of s (detached from the reused CSV record).
func (p *parser) str(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := p.strs[s]; ok {
		return v
	}
	v := strings.Clone(s)
	p.strs[v] = v
	return v
}

// internIdx returns the Strings index of s.
func (p *parser) internIdx(s string) uint32 {
	if i, ok := p.intern[s]; ok {
		return i
	}
	v := p.str(s)
	i := uint32(len(p.f.Strings))
	p.f.Strings = append(p.f.Strings, v)
	p.intern[v] = i
	return i
}

// newID returns the current row's id in column c. A row whose id is empty or
// already in seen is reported ("stop without stop_id", "duplicate stop_id
// \"S1\"" for kind "stop") and yields false.
func (t *table) newID(c int, seen map[string]int32, kind string) (string, bool) {
	id := t.get(c)
	if id == "" {
		t.bad(kind + " without " + kind + "_id")
		return "", false
	}
	if _, dup := seen[id]; dup {
		t.bad("duplicate " + kind + "_id " + strconv.Quote(id))
		return "", false
	}
	return id, true
}

func (p *parser) agency(t *table) {
	cID, cName, cURL, cTZ := t.col("agency_id"), t.col("agency_name"), t.col("agency_url"), t.col("agency_timezone")
	p.agIdx = map[string]int32{}
	for t.next() {
		a := Agency{ID: p.str(t.get(cID)), Name: p.str(t.get(cName)), URL: p.str(t.get(cURL)), Timezone: p.str(t.get(cTZ))}
		if a.Name == "" {
			t.bad("agency without agency_name")
		}
		if a.Timezone == "" {
			t.bad("agency without agency_timezone")
			continue
		}
		if _, dup := p.agIdx[a.ID]; dup {
			t.bad("duplicate agency_id " + strconv.Quote(a.ID))
			continue
		}
		if p.f.Timezone == "" {
			p.f.Timezone = a.Timezone
		} else if a.Timezone != p.f.Timezone {
			t.bad("agency_timezone " + a.Timezone + " differs from " + p.f.Timezone + "; the feed uses " + p.f.Timezone)
		}
		p.agIdx[a.ID] = int32(len(p.f.Agencies))
		p.f.Agencies = append(p.f.Agencies, a)
	}
}

func (p *parser) stops(t *table) {
	cID, cCode, cName, cLat, cLon := t.col("stop_id"), t.col("stop_code"), t.col("stop_name"), t.col("stop_lat"), t.col("stop_lon")
	cType, cParent, cPlat := t.col("location_type"), t.col("parent_station"), t.col("platform_code")
	s := &p.f.Stops
	p.stopIdx = map[string]int32{}
	var parents []string
	var lines []int
	for t.next() {
		id, ok := t.newID(cID, p.stopIdx, "stop")
		if !ok {
			continue
		}
		lt := uint8(0)
		if v := t.get(cType); v != "" {
			n, ok := parseInt(v)
			if !ok || n < 0 || n > 4 {
				t.bad("invalid location_type " + strconv.Quote(v))
				continue
			}
			lt = uint8(n)
		}
		lat, err1 := strconv.ParseFloat(t.get(cLat), 64)
		lon, err2 := strconv.ParseFloat(t.get(cLon), 64)
		if (err1 != nil || err2 != nil || lat < -90 || lat > 90 || lon < -180 || lon > 180) && lt <= StopStation {
			t.bad("stop " + strconv.Quote(id) + " has no valid stop_lat/stop_lon")
			continue
		}
		p.stopIdx[strings.Clone(id)] = int32(len(s.ID))
		s.ID = append(s.ID, p.str(id))
		s.Code = append(s.Code, p.str(t.get(cCode)))
		s.Name = append(s.Name, p.str(t.get(cName)))
		s.Platform = append(s.Platform, p.str(t.get(cPlat)))
		s.Lat = append(s.Lat, lat)
		s.Lon = append(s.Lon, lon)
		s.Type = append(s.Type, lt)
		parents = append(parents, p.str(t.get(cParent)))
		lines = append(lines, t.line)
	}
	s.Parent = make([]int32, len(s.ID))
	for i, ps := range parents {
		s.Parent[i] = -1
		if ps == "" {
			continue
		}
		j, ok := p.stopIdx[ps]
		if !ok {
			p.pr.add("stops.txt", lines[i], "unknown parent_station "+strconv.Quote(ps))
			continue
		}
		s.Parent[i] = j
	}
	for i := range s.Name {
		if s.Name[i] == "" && s.Type[i] <= StopStation {
			if par := s.Parent[i]; par >= 0 {
				s.Name[i] = s.Name[par]
			} else {
				s.Name[i] = s.ID[i]
			}
		}
	}
}

func (p *parser) routes(t *table) {
	cID, cAg, cShort, cLong, cType := t.col("route_id"), t.col("agency_id"), t.col("route_short_name"), t.col("route_long_name"), t.col("route_type")
	cColor := t.col("route_color")
	p.rtIdx = map[string]int32{}
	for t.next() {
		id, ok := t.newID(cID, p.rtIdx, "route")
		if !ok {
			continue
		}
		ag := int32(0)
		if a := t.get(cAg); a != "" || len(p.f.Agencies) > 1 {
			i, ok := p.agIdx[a]
			if !ok {
				t.bad("route " + strconv.Quote(id) + " has unknown agency_id " + strconv.Quote(a) + "; using the first agency")
			}
			ag = i
		}
		rt, ok := parseInt(t.get(cType))
		if !ok || rt < 0 || rt > 1999 {
			t.bad("route " + strconv.Quote(id) + " has invalid route_type " + strconv.Quote(t.get(cType)))
			continue
		}
		r := Route{ID: p.str(id), Agency: ag, ShortName: p.str(t.get(cShort)), LongName: p.str(t.get(cLong)), Type: int32(rt)}
		if c := t.get(cColor); c != "" {
			if r.Color = routeColor(c); r.Color == "" {
				t.bad("route " + strconv.Quote(id) + " has invalid route_color " + strconv.Quote(c))
			} else {
				r.Color = p.str(r.Color)
			}
		}
		if r.ShortName == "" && r.LongName == "" {
			t.bad("route " + strconv.Quote(id) + " has neither route_short_name nor route_long_name")
		}
		p.rtIdx[r.ID] = int32(len(p.f.Routes))
		p.f.Routes = append(p.f.Routes, r)
	}
}

func (p *parser) service(id string) int32 {
	if p.svIdx == nil {
		p.svIdx = map[string]int32{}
	}
	if i, ok := p.svIdx[id]; ok {
		return i
	}
	i := int32(len(p.f.Services))
	p.f.Services = append(p.f.Services, Service{ID: p.str(id), Start: 1, End: 0})
	p.svIdx[p.f.Services[i].ID] = i
	return i
}

func (p *parser) calendar(t *table) {
	cID, cStart, cEnd := t.col("service_id"), t.col("start_date"), t.col("end_date")
	var cDays [7]int
	for i, d := range []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"} {
		cDays[i] = t.col(d)
	}
	seen := map[string]bool{}
	for t.next() {
		id := t.get(cID)
		if id == "" || seen[id] {
			t.bad("missing or duplicate service_id " + strconv.Quote(id))
			continue
		}
		start, ok1 := parseDate(t.get(cStart))
		end, ok2 := parseDate(t.get(cEnd))
		if !ok1 || !ok2 {
			t.bad("service " + strconv.Quote(id) + " has an invalid start_date or end_date")
			continue
		}
		var days uint8
		valid := true
		for i, c := range cDays {
			switch t.get(c) {
			case "1":
				days |= 1 << i
			case "0":
			default:
				valid = false
			}
		}
		if !valid {
			t.bad("service " + strconv.Quote(id) + " has a weekday value other than 0 or 1")
			continue
		}
		seen[strings.Clone(id)] = true
		s := &p.f.Services[p.service(id)]
		s.Weekdays, s.Start, s.End = days, start, end
	}
}

func (p *parser) calendarDates(t *table) {
	cID, cDate, cType := t.col("service_id"), t.col("date"), t.col("exception_type")
	for t.next() {
		id := t.get(cID)
		day, ok := parseDate(t.get(cDate))
		if id == "" || !ok {
			t.bad("calendar_dates row without service_id or with an invalid date")
			continue
		}
		s := &p.f.Services[p.service(id)]
		switch t.get(cType) {
		case "1":
			s.Added = append(s.Added, day)
		case "2":
			s.Removed = append(s.Removed, day)
		default:
			t.bad("invalid exception_type " + strconv.Quote(t.get(cType)))
		}
	}
}

// finishServices sorts exceptions and computes the feed's day window.
func (p *parser) finishServices() {
	f := p.f
	f.MinDay, f.MaxDay = 1<<30, -(1 << 30)
	for i := range f.Services {
		s := &f.Services[i]
		sort.Slice(s.Added, func(a, b int) bool { return s.Added[a] < s.Added[b] })
		sort.Slice(s.Removed, func(a, b int) bool { return s.Removed[a] < s.Removed[b] })
		if s.Weekdays != 0 && s.Start <= s.End {
			f.MinDay, f.MaxDay = min(f.MinDay, s.Start), max(f.MaxDay, s.End)
		}
		for _, d := range s.Added {
			f.MinDay, f.MaxDay = min(f.MinDay, d), max(f.MaxDay, d)
		}
	}
	if f.MinDay > f.MaxDay {
		f.MinDay, f.MaxDay = 0, -1
	}
}

func (p *parser) trips(t *table) {
	cRoute, cSvc, cID, cHead, cShort := t.col("route_id"), t.col("service_id"), t.col("trip_id"), t.col("trip_headsign"), t.col("trip_short_name")
	cShape := t.col("shape_id")
	tr := &p.f.Trips
	p.trIdx = map[string]int32{}
	for t.next() {
		id, ok := t.newID(cID, p.trIdx, "trip")
		if !ok {
			continue
		}
		r, ok := p.rtIdx[t.get(cRoute)]
		if !ok {
			t.bad("trip " + strconv.Quote(id) + " has unknown route_id " + strconv.Quote(t.get(cRoute)))
			continue
		}
		sv, ok := p.svIdx[t.get(cSvc)]
		if !ok {
			t.bad("trip " + strconv.Quote(id) + " has unknown service_id " + strconv.Quote(t.get(cSvc)))
			continue
		}
		v := strings.Clone(id)
		p.trIdx[v] = int32(len(tr.ID))
		tr.ID = append(tr.ID, v)
		tr.Route = append(tr.Route, r)
		tr.Service = append(tr.Service, sv)
		tr.Headsign = append(tr.Headsign, p.str(t.get(cHead)))
		tr.ShortName = append(tr.ShortName, p.str(t.get(cShort)))
		if p.shIdx != nil {
			sh, ok := p.shIdx[t.get(cShape)]
			if !ok {
				sh = -1
				if v := t.get(cShape); v != "" {
					t.bad("trip " + strconv.Quote(id) + " has unknown shape_id " + strconv.Quote(v))
				}
			}
			tr.Shape = append(tr.Shape, sh)
		}
	}
}

// routeColor normalises a route_color (six hex digits, an optional '#'
// tolerated) to upper case; "" when it is not one.
func routeColor(c string) string {
	c = strings.TrimPrefix(c, "#")
	if len(c) != 6 {
		return ""
	}
	for i := 0; i < 6; i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c[i])) {
			return ""
		}
	}
	return strings.ToUpper(c)
}

// shapes reads shapes.txt: points grouped by shape, sorted by
// shape_pt_sequence. Shapes with fewer than two valid points are dropped
// (their trips are drawn from the stop sequence).
func (p *parser) shapes(t *table) {
	cID, cLat, cLon, cSeq := t.col("shape_id"), t.col("shape_pt_lat"), t.col("shape_pt_lon"), t.col("shape_pt_sequence")
	type pt struct {
		seq      int64
		lat, lon int32
	}
	byID := map[string][]pt{}
	var order []string
	// Feeds list a shape's points together: the current shape's points
	// collect in cur and go to byID when another shape begins.
	var curID string
	var cur []pt
	flush := func() {
		if curID != "" {
			byID[curID] = cur
		}
	}
	for t.next() {
		id := t.get(cID)
		lat, err1 := strconv.ParseFloat(t.get(cLat), 64)
		lon, err2 := strconv.ParseFloat(t.get(cLon), 64)
		seq, ok := parseInt(t.get(cSeq))
		if id == "" || err1 != nil || err2 != nil || !ok || seq < 0 || !(lat >= -90 && lat <= 90) || !(lon >= -180 && lon <= 180) {
			t.bad("invalid shape point of shape " + strconv.Quote(id))
			continue
		}
		if id != curID {
			flush()
			pts, seen := byID[id]
			if !seen {
				id = strings.Clone(id)
				order = append(order, id)
			}
			curID, cur = id, pts
		}
		cur = append(cur, pt{seq, int32(math.Round(lat * 1e7)), int32(math.Round(lon * 1e7))})
	}
	flush()
	sh := &p.f.Shapes
	p.shIdx = map[string]int32{}
	sh.First = []int32{0}
	for _, id := range order {
		pts := byID[id]
		if len(pts) < 2 {
			continue
		}
		if !slices.IsSortedFunc(pts, func(a, b pt) int { return cmp.Compare(a.seq, b.seq) }) {
			slices.SortStableFunc(pts, func(a, b pt) int { return cmp.Compare(a.seq, b.seq) })
		}
		p.shIdx[id] = int32(len(sh.ID))
		sh.ID = append(sh.ID, id)
		for _, q := range pts {
			sh.Lat = append(sh.Lat, q.lat)
			sh.Lon = append(sh.Lon, q.lon)
		}
		sh.First = append(sh.First, int32(len(sh.Lat)))
	}
}

func (p *parser) frequencies(t *table) {
	cTrip, cStart, cEnd, cHead, cExact := t.col("trip_id"), t.col("start_time"), t.col("end_time"), t.col("headway_secs"), t.col("exact_times")
	for t.next() {
		tr, ok := p.trIdx[t.get(cTrip)]
		if !ok {
			t.bad("frequency for unknown trip_id " + strconv.Quote(t.get(cTrip)))
			continue
		}
		st, ok1 := parseTime(t.get(cStart))
		en, ok2 := parseTime(t.get(cEnd))
		hw, ok3 := parseInt(t.get(cHead))
		if !ok1 || !ok2 || !ok3 || st < 0 || en <= st || hw <= 0 || hw > 86400 {
			t.bad("invalid frequency window or headway_secs")
			continue
		}
		p.f.Frequencies = append(p.f.Frequencies, Frequency{Trip: tr, Start: st, End: en, Headway: int32(hw), ExactTimes: t.get(cExact) == "1"})
	}
	sort.SliceStable(p.f.Frequencies, func(a, b int) bool {
		x, y := p.f.Frequencies[a], p.f.Frequencies[b]
		if x.Trip != y.Trip {
			return x.Trip < y.Trip
		}
		return x.Start < y.Start
	})
}

func (p *parser) attributions(t *table) {
	cOrg, cURL := t.col("organization_name"), t.col("attribution_url")
	cProd, cOp, cAuth := t.col("is_producer"), t.col("is_operator"), t.col("is_authority")
	for t.next() {
		org := t.get(cOrg)
		if org == "" {
			t.bad("attribution without organization_name")
			continue
		}
		role := "producer"
		switch {
		case t.get(cOp) == "1":
			role = "operator"
		case t.get(cAuth) == "1":
			role = "authority"
		case t.get(cProd) == "1":
			role = "producer"
		}
		p.f.Attributions = append(p.f.Attributions, Attribution{Organization: p.str(org), URL: p.str(t.get(cURL)), Role: role})
	}
}

func (p *parser) feedInfo(t *table) {
	cName, cURL, cVer := t.col("feed_publisher_name"), t.col("feed_publisher_url"), t.col("feed_version")
	if t.next() {
		p.f.Version = p.str(t.get(cVer))
		if n := t.get(cName); n != "" {
			p.f.Attributions = append(p.f.Attributions, Attribution{Organization: p.str(n), URL: p.str(t.get(cURL)), Role: "publisher"})
		}
	}
}
