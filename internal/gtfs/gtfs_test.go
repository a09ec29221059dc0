package gtfs

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/farebox/farebox/internal/shareddata"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
)

var dataDir = shareddata.Path("gtfs") + "/"

func mustParse(t testing.TB, name string) *Feed {
	t.Helper()
	f, err := ParseFile(shareddata.File("gtfs/" + name))
	if err != nil {
		t.Fatalf("parse %s: %v (testdata/README.md: `%s` fetches the feeds the repository does not carry)", name, err, shareddata.Fetch)
	}
	return f
}

// mustParseFiles parses the feed made of files (name → content).
func mustParseFiles(t *testing.T, files map[string]string) *Feed {
	t.Helper()
	z := zipOf(t, files)
	f, err := Parse(z, int64(z.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// zipOf builds an in-memory GTFS zip from file name → content.
func zipOf(t testing.TB, files map[string]string) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(buf.Bytes())
}

func stopIndex(f *Feed, id string) int32 {
	for i, s := range f.Stops.ID {
		if s == id {
			return int32(i)
		}
	}
	return -1
}

func tripIndex(f *Feed, id string) int32 {
	for i, s := range f.Trips.ID {
		if s == id {
			return int32(i)
		}
	}
	return -1
}

func TestParseCaltrain(t *testing.T) {
	f := mustParse(t, "caltrain-2023.zip")
	if f.Timezone != "America/Los_Angeles" || f.Stops.Len() != 109 || f.Trips.Len() != 176 || f.StopTimes.Len() != 3498 {
		t.Fatalf("tz %s stops %d trips %d stop times %d", f.Timezone, f.Stops.Len(), f.Trips.Len(), f.StopTimes.Len())
	}
	if f.ProblemCount != 0 {
		t.Fatalf("problems: %v", f.Problems)
	}
	if got := f.Agencies[0]; got != (Agency{ID: "CT", Name: "Caltrain", URL: "http://www.caltrain.com", Timezone: "America/Los_Angeles"}) {
		t.Fatalf("agency %+v", got)
	}
	// attributions.txt: "511 SF Bay,1,https://511.org/open-data" and feed_info publisher.
	want := []Attribution{{"511 SF Bay", "https://511.org/open-data", "producer"}, {"511 SF Bay", "https://511.org/open-data/transit", "publisher"}}
	if !reflect.DeepEqual(f.Attributions, want) {
		t.Fatalf("attributions %+v", f.Attributions)
	}
	// stops.txt: 22nd_street is a station (location_type 1) with two platforms.
	st := stopIndex(f, "22nd_street")
	if f.Stops.Type[st] != StopStation || f.Stops.Name[st] != "22nd Street" || f.Stops.Lat[st] != 37.756972 || f.Stops.Lon[st] != -122.392492 {
		t.Fatalf("22nd_street: type %d name %q %v %v", f.Stops.Type[st], f.Stops.Name[st], f.Stops.Lat[st], f.Stops.Lon[st])
	}
	var kids []string
	for i, p := range f.Stops.Parent {
		if p == st {
			kids = append(kids, f.Stops.ID[i])
		}
	}
	if !reflect.DeepEqual(kids, []string{"70021", "70022"}) {
		t.Fatalf("children of 22nd_street: %v", kids)
	}
	// stop_times.txt first row: 501,5:00:00,5:00:00,70271,1 (unpadded hour).
	tr := tripIndex(f, "501")
	i := f.Trips.First[tr]
	if f.StopTimes.Stop[i] != stopIndex(f, "70271") || f.StopTimes.Arrival[i] != 5*3600 || f.StopTimes.Departure[i] != 5*3600 || f.StopTimes.Sequence[i] != 1 {
		t.Fatalf("first stop time of 501: stop %d arr %d dep %d seq %d", f.StopTimes.Stop[i], f.StopTimes.Arrival[i], f.StopTimes.Departure[i], f.StopTimes.Sequence[i])
	}
	if f.Trips.Headsign[tr] != "San Francisco" || f.Services[f.Trips.Service[tr]].ID != "72982" || f.Routes[f.Trips.Route[tr]].ID != "L5" {
		t.Fatalf("trip 501: %q %q", f.Trips.Headsign[tr], f.Services[f.Trips.Service[tr]].ID)
	}
	// Trips are in stop_sequence order.
	for tr := 0; tr < f.Trips.Len(); tr++ {
		for j := f.Trips.First[tr] + 1; j < f.Trips.First[tr+1]; j++ {
			if f.StopTimes.Sequence[j] <= f.StopTimes.Sequence[j-1] || f.StopTimes.Arrival[j] < f.StopTimes.Departure[j-1] {
				t.Fatalf("trip %s out of order at %d", f.Trips.ID[tr], j)
			}
		}
	}
	if f.MaxTime != 25*3600+49*60 {
		t.Fatalf("max time %s", formatTime(f.MaxTime))
	}
	// calendar.txt: 72981 runs Sat+Sun 2023-09-23..2024-06-01; calendar_dates add 2024-05-27.
	var sv *Service
	for i := range f.Services {
		if f.Services[i].ID == "72981" {
			sv = &f.Services[i]
		}
	}
	if sv.Weekdays != 0b1100000 || sv.Start != DayNumber(2023, 9, 23) || sv.End != DayNumber(2024, 6, 1) {
		t.Fatalf("service 72981: %+v", sv)
	}
	if !sv.Active(DayNumber(2024, 5, 27)) || !sv.Active(DayNumber(2023, 11, 25)) || sv.Active(DayNumber(2023, 11, 22)) || !sv.Active(DayNumber(2023, 11, 23)) {
		t.Fatal("service 72981 activation wrong (Memorial Day added, Thanksgiving added, Wednesday off)")
	}
}

func TestParseTracksHeadsignsAndInterpolation(t *testing.T) {
	f := mustParse(t, "sample-gtfs-feed-0.13.0.zip")
	// The MTA agency's Europe/Berlin differs from FTA's Europe/Warsaw: one problem, first zone kept.
	if f.Timezone != "Europe/Warsaw" || f.ProblemCount != 1 || f.Problems[0].File != "agency.txt" || f.Problems[0].Line != 3 {
		t.Fatalf("tz %s problems %v", f.Timezone, f.Problems)
	}
	// c-outbound-all-day: ",19:20:00" then "19:50:00," → arrival and departure filled from each other.
	tr := tripIndex(f, "c-outbound-all-day")
	a, b := f.Trips.First[tr], f.Trips.First[tr+1]-1
	if f.StopTimes.Arrival[a] != 19*3600+20*60 || f.StopTimes.Departure[b] != 19*3600+50*60 {
		t.Fatalf("filled times %d %d", f.StopTimes.Arrival[a], f.StopTimes.Departure[b])
	}
	// pickup_type 1 at lake in b-downtown-on-weekends.
	tr = tripIndex(f, "b-downtown-on-weekends")
	if f.StopTimes.Flags[f.Trips.First[tr]+1]&NoPickup == 0 {
		t.Fatal("pickup_type=1 not recorded")
	}
	if len(f.Frequencies) != 2 || f.Frequencies[0] != (Frequency{Trip: tripIndex(f, "b-downtown-on-working-days"), Start: 8 * 3600, End: 8*3600 + 59*60, Headway: 300, ExactTimes: true}) {
		t.Fatalf("frequencies %+v", f.Frequencies)
	}
	mn := mustParse(t, "nyc/metro-north.zip")
	// metro-north stop_times first row: 246129324612933+2339282+0,01:04:00,01:04:00,33,1,0,0,2,
	tr = tripIndex(mn, "246129324612933+2339282+0")
	i := mn.Trips.First[tr]
	if mn.Strings[mn.StopTimes.Track[i]] != "2" || mn.Stops.ID[mn.StopTimes.Stop[i]] != "33" || mn.StopTimes.Departure[i] != 3840 {
		t.Fatalf("metro-north track %q stop %s dep %d", mn.Strings[mn.StopTimes.Track[i]], mn.Stops.ID[mn.StopTimes.Stop[i]], mn.StopTimes.Departure[i])
	}
	if mn.StopTimes.Headsign != nil {
		t.Fatal("metro-north has no stop_headsign column; the column must stay nil")
	}
}

func TestParseBadRowsAreReportedNotFatal(t *testing.T) {
	files := map[string]string{
		"agency.txt": "\uFEFF\"agency_id\",\"agency_name\",\"agency_url\",\"agency_timezone\"\r\n\"A\",\"Bus, Inc.\",\"https://x\",\"Europe/Berlin\"\r\n",
		"stops.txt": "stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station\n" +
			"S,Hauptbahnhof,52.5,13.4,1,\nS1,Gleis 1,52.5,13.4,0,S\nX,Nowhere,abc,13,0,\nP,Orphan,52,13,0,MISSING\nS1,Dup,1,1,0,\nT, Tal ,  52.1,  13.1,,\n",
		"routes.txt":     "route_id,agency_id,route_short_name,route_type\nR,A,1,3\nBAD,A,2,x\n",
		"calendar.txt":   "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nW,1,1,1,1,1,0,0,20250101,20251231\nZ,1,1,1,1,1,0,0,2025,20251231\n",
		"trips.txt":      "route_id,service_id,trip_id\nR,W,t1\nR,NOPE,t2\nNOPE,W,t3\nR,W,t4\n",
		"stop_times.txt": "trip_id,arrival_time,departure_time,stop_id,stop_sequence\nt1,08:00:00,08:00:00,S1,1\nt1,,,P,2\nt1,08:10:00,08:10:00,T,3\nt1,8:20,08:20:00,T,4\nt9,08:00:00,08:00:00,S1,1\nt1,08:00:00,08:00:00,NOPE,5\nt4,,,S1,1\nt4,09:00:00,09:00:00,T,2\n",
		"desktop.ini":    "junk",
	}
	f := mustParseFiles(t, files)
	if f.Agencies[0].Name != "Bus, Inc." {
		t.Fatalf("quoted agency name %q", f.Agencies[0].Name)
	}
	want := []Problem{
		{"stops.txt", 4, `stop "X" has no valid stop_lat/stop_lon`},
		{"stops.txt", 6, `duplicate stop_id "S1"`},
		{"stops.txt", 5, `unknown parent_station "MISSING"`},
		{"routes.txt", 3, `route "BAD" has invalid route_type "x"`},
		{"calendar.txt", 3, `service "Z" has an invalid start_date or end_date`},
		{"trips.txt", 3, `trip "t2" has unknown service_id "NOPE"`},
		{"trips.txt", 4, `trip "t3" has unknown route_id "NOPE"`},
		{"stop_times.txt", 5, "invalid arrival_time or departure_time"},
		{"stop_times.txt", 6, `stop time for unknown trip_id "t9"`},
		{"stop_times.txt", 7, `stop time for unknown stop_id "NOPE"`},
		{"stop_times.txt", 8, `trip "t4" has no time at its first or last stop; trip dropped`},
	}
	if !reflect.DeepEqual(f.Problems, want) || f.ProblemCount != len(want) {
		t.Fatalf("problems:\n%v\nwant\n%v", f.Problems, want)
	}
	// t1 keeps three stops; P's missing time is interpolated between 08:00 and 08:10.
	tr := tripIndex(f, "t1")
	if got := f.Trips.First[tr+1] - f.Trips.First[tr]; got != 3 {
		t.Fatalf("t1 has %d stop times", got)
	}
	mid := f.Trips.First[tr] + 1
	if f.StopTimes.Arrival[mid] != 8*3600+300 || f.StopTimes.Flags[mid]&Estimated == 0 {
		t.Fatalf("interpolated %d flags %d", f.StopTimes.Arrival[mid], f.StopTimes.Flags[mid])
	}
	if tr4 := tripIndex(f, "t4"); f.Trips.First[tr4] != f.Trips.First[tr4+1] {
		t.Fatal("dropped trip t4 must have no stop times")
	}
	ti := stopIndex(f, "T")
	if f.Stops.Name[ti] != "Tal" || f.Stops.Lat[ti] != 52.1 || f.Stops.Type[ti] != StopPlatform {
		t.Fatalf("trimmed stop %q %v", f.Stops.Name[ti], f.Stops.Lat[ti])
	}
	if err := f.validate(); err != nil {
		t.Fatal(err)
	}
}

func TestParseFatalErrors(t *testing.T) {
	base := map[string]string{
		"agency.txt":     "agency_name,agency_url,agency_timezone\nA,https://x,Mars/Olympus\n",
		"stops.txt":      "stop_id,stop_name,stop_lat,stop_lon\nS,S,1,1\n",
		"routes.txt":     "route_id,route_short_name,route_type\nR,1,3\n",
		"trips.txt":      "route_id,service_id,trip_id\n",
		"stop_times.txt": "trip_id,arrival_time,departure_time,stop_id,stop_sequence\n",
	}
	for name, mutate := range map[string]func(map[string]string){
		"bad timezone": func(m map[string]string) { m["calendar.txt"] = "service_id\n" },
		"no calendar":  func(m map[string]string) {},
		"no stops": func(m map[string]string) {
			m["calendar.txt"] = "service_id\n"
			delete(m, "stops.txt")
		},
	} {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		mutate(m)
		z := zipOf(t, m)
		_, err := Parse(z, int64(z.Len()))
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Kind != apperr.Unprocessable {
			t.Fatalf("%s: want Unprocessable, got %v", name, err)
		}
	}
	if _, err := Parse(strings.NewReader("not a zip"), 9); err == nil {
		t.Fatal("garbage must fail")
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, name := range []string{"caltrain-2023.zip", "sample-gtfs-feed-0.13.0.zip", "cdmx-2019-frequencies.zip", "nyc/metro-north.zip"} {
		f := mustParse(t, name)
		var buf bytes.Buffer
		if err := f.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		g, err := Decode(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(f, g) {
			t.Fatalf("%s: round trip differs", name)
		}
		// Any flipped byte is detected.
		b := bytes.Clone(buf.Bytes())
		b[len(b)/2] ^= 0x40
		if _, err := Decode(bytes.NewReader(b)); err == nil {
			t.Fatalf("%s: corrupt snapshot accepted", name)
		}
		if _, err := Decode(bytes.NewReader(buf.Bytes()[:buf.Len()-1])); err == nil {
			t.Fatalf("%s: truncated snapshot accepted", name)
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]int32{"5:00:00": 18000, "00:00:00": 0, "25:49:00": 93 * 60 * 60 / 1, "28:33:50": 28*3600 + 33*60 + 50, "": -1} {
		if in == "25:49:00" {
			want = 25*3600 + 49*60
		}
		got, ok := parseTime(in)
		if !ok || got != want {
			t.Fatalf("parseTime(%q) = %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"8:20", "08:60:00", "08:00:61", "a:00:00", "08:00:00:00", ":00:00", "08::00"} {
		if _, ok := parseTime(in); ok {
			t.Fatalf("parseTime(%q) accepted", in)
		}
	}
}

func TestParseShapesAndRouteColors(t *testing.T) {
	f := mustParse(t, "caltrain-2023.zip")
	if f.Routes[0].ID != "L6" || f.Routes[0].Color != "FCEDC7" {
		t.Fatalf("route %+v, want L6 with colour FCEDC7", f.Routes[0])
	}
	tr := -1
	for i, id := range f.Trips.ID {
		if id == "501" {
			tr = i
		}
	}
	if tr < 0 || len(f.Trips.Shape) != f.Trips.Len() || f.Trips.Shape[tr] < 0 {
		t.Fatalf("trip 501 has no shape (%d shapes, %d trip shapes)", f.Shapes.Len(), len(f.Trips.Shape))
	}
	sh := f.Trips.Shape[tr]
	if f.Shapes.ID[sh] != "p_1277346" || f.Shapes.First[sh+1]-f.Shapes.First[sh] != 281 {
		t.Fatalf("trip 501 shape %s with %d points, want p_1277346 with 281", f.Shapes.ID[sh], f.Shapes.First[sh+1]-f.Shapes.First[sh])
	}
	// p_1277284 starts at (37.003512298, -121.5661454201): stored in 1e-7 degrees.
	p0 := f.Shapes.First[0]
	if f.Shapes.ID[0] != "p_1277284" || f.Shapes.Lat[p0] != 370035123 || f.Shapes.Lon[p0] != -1215661454 {
		t.Fatalf("first shape %s starts at %d, %d", f.Shapes.ID[0], f.Shapes.Lat[p0], f.Shapes.Lon[p0])
	}
}

func TestParseShapesOutOfOrderAndBad(t *testing.T) {
	files := map[string]string{
		"agency.txt":     "agency_name,agency_url,agency_timezone\nA,https://x,Europe/Berlin\n",
		"stops.txt":      "stop_id,stop_name,stop_lat,stop_lon\nS1,One,0,0\nS2,Two,1,1\n",
		"calendar.txt":   "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nS,1,1,1,1,1,0,0,20250101,20251231\n",
		"stop_times.txt": "trip_id,arrival_time,departure_time,stop_id,stop_sequence\nT1,08:00:00,08:00:00,S1,1\nT1,08:10:00,08:10:00,S2,2\n",
		"routes.txt":     "route_id,route_short_name,route_type,route_color\nR1,1,3,#00ff7f\nR2,2,3,green\n",
		"trips.txt":      "route_id,service_id,trip_id,shape_id\nR1,S,T1,A\nR2,S,T2,NOPE\n",
		"shapes.txt":     "shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\nA,1,1,3\nA,0,0,1\nA,x,0,2\nA,0.5,0.5,2\nB,1,1,1\n",
	}
	f := mustParseFiles(t, files)
	if f.Routes[0].Color != "00FF7F" || f.Routes[1].Color != "" {
		t.Fatalf("colours %q %q", f.Routes[0].Color, f.Routes[1].Color)
	}
	// B has one point and is dropped; A is sorted by sequence without the bad row.
	if f.Shapes.Len() != 1 || !reflect.DeepEqual(f.Shapes.Lat, []int32{0, 5_000_000, 10_000_000}) {
		t.Fatalf("shapes %+v", f.Shapes)
	}
	if !reflect.DeepEqual(f.Trips.Shape, []int32{0, -1}) {
		t.Fatalf("trip shapes %v", f.Trips.Shape)
	}
	msgs := ""
	for _, p := range f.Problems {
		msgs += p.String() + "\n"
	}
	for _, want := range []string{"invalid route_color \"green\"", "unknown shape_id \"NOPE\"", "invalid shape point"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("problems lack %q:\n%s", want, msgs)
		}
	}
}

// A snapshot of format 1 (written before shapes were kept) still decodes,
// without colours and shapes.
func TestDecodeFormat1Snapshot(t *testing.T) {
	f := mustParse(t, "sample-gtfs-feed-0.13.0.zip")
	g := *f
	g.Routes = append([]Route(nil), f.Routes...)
	for i := range g.Routes {
		g.Routes[i].Color = ""
	}
	g.Trips.Shape, g.Shapes = nil, Shapes{}
	var buf bytes.Buffer
	if err := g.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	// Format 2's tail for no colours and no shapes: the colour count, one
	// empty string per route, five empty columns; then the CRC.
	b := buf.Bytes()
	tail := len(binary.AppendUvarint(nil, uint64(len(g.Routes)))) + len(g.Routes) + 5
	v1 := bytes.Clone(b[:len(b)-4-tail])
	v1[7] = 1
	v1 = binary.LittleEndian.AppendUint32(v1, crc32.ChecksumIEEE(v1))
	h, err := Decode(bytes.NewReader(v1))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&g, h) {
		t.Fatal("format 1 snapshot decodes differently")
	}
	v1[7] = 3
	if _, err := Decode(bytes.NewReader(v1)); err == nil {
		t.Fatal("an unknown format version was accepted")
	}
}
