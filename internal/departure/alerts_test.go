package departure

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"
	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
	"github.com/farebox/farebox/internal/testtool"
)

// The test alerts feed is testtool.CaltrainAlerts.
const (
	ctHeader    = testtool.CaltrainRTHeader
	agencyStart = testtool.CaltrainAgencyAlertStart
)

func parseMsg(t testing.TB, m *gtfsrt.FeedMessage) *realtime.Snapshot {
	t.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := realtime.Parse(data, time.Unix(ctHeader, 0))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// alertsHub is the Caltrain TripUpdates plus the test alerts; combined:
// the alerts inside the TripUpdates message, else from an alerts source.
func alertsHub(t testing.TB, combined bool) *realtime.Hub {
	t.Helper()
	data, err := os.ReadFile(dataDir + "caltrain-2023-trip-updates.pb")
	if err != nil {
		t.Fatal(err)
	}
	var tu gtfsrt.FeedMessage
	if err := proto.Unmarshal(data, &tu); err != nil {
		t.Fatal(err)
	}
	hub := realtime.NewHub(clocktest.NewFixed(time.Unix(ctHeader+30, 0)), 5*time.Minute)
	if combined {
		tu.Entity = append(tu.Entity, testtool.CaltrainAlerts().Entity...)
		hub.Set("ct", parseMsg(t, &tu))
	} else {
		hub.Set("ct", parseMsg(t, &tu))
		hub.SetAlerts("ct", parseMsg(t, testtool.CaltrainAlerts()))
	}
	return hub
}

func alertIDs(as []Alert) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

// expectedAlerts derives from the raw feed which test alerts select a
// 22nd Street board entry: its route, its trip run, its platform, and
// the agency alert from 17:00:30.
func expectedAlerts(t *testing.T, f *gtfs.Feed, d Departure, at int64) []string {
	t.Helper()
	tripID, date := d.Trip.ID[len("farebox-trip-ct_"):len(d.Trip.ID)-9], d.Trip.ID[len(d.Trip.ID)-8:]
	tr := slices.Index(f.Trips.ID, tripID)
	if tr < 0 {
		t.Fatalf("trip %s not in the feed", tripID)
	}
	var platform string
	for i := f.Trips.First[tr]; i < f.Trips.First[tr+1]; i++ {
		s := f.StopTimes.Stop[i]
		if p := f.Stops.Parent[s]; p >= 0 && f.Stops.ID[p] == "22nd_street" {
			platform = f.Stops.ID[s]
		}
	}
	want := []string{}
	if f.Routes[f.Trips.Route[tr]].ID == "L4" {
		want = append(want, "route-L4")
	}
	want = append(want, "station-22nd")
	if platform == "70021" {
		want = append(want, "platform-70021")
	}
	if tripID == "412" && date == "20231107" {
		want = append(want, "trip-412")
	}
	if at >= agencyStart {
		want = append(want, "agency-from-17:00:30")
	}
	return want
}

// TestAlertsOnBoards: the alerts that apply (route, station, platform,
// trip run, agency; active at the query's second) and no others (past,
// other service day, other feed's ids, other station, no entities), in
// the feed's order, texts by Accept-Language; computed and cached boards
// byte-identical, also in the minute in which an alert starts.
func TestAlertsOnBoards(t *testing.T) {
	f := feed(t, "caltrain-2023.zip")
	loc := la(t)
	const id = "farebox-station-ct_22nd_street"
	for _, combined := range []bool{false, true} {
		ix := index(t, alertsHub(t, combined), "ct", "caltrain-2023.zip")
		var st cacheStats
		for _, at := range []time.Time{
			time.Date(2023, 11, 7, 17, 0, 0, 0, loc),
			time.Date(2023, 11, 7, 17, 0, 29, 999e6, loc), // second 17:00:30: the agency alert is active
			time.Date(2023, 11, 7, 17, 0, 29, 0, loc),
			time.Date(2023, 11, 7, 17, 0, 45, 0, loc),
			time.Date(2023, 11, 7, 17, 2, 10, 0, loc),
			time.Date(2023, 11, 7, 17, 2, 50, 0, loc),
		} {
			deps, err := ix.Departures(id, at, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(deps) != 10 {
				t.Fatalf("%d departures", len(deps))
			}
			l4 := 0
			for _, d := range deps {
				want := expectedAlerts(t, f, d, querySecond(at))
				if got := alertIDs(d.Trip.Alerts); !slices.Equal(got, want) {
					t.Fatalf("combined %v, at %s, %s: alerts %v, want %v", combined, at.Format(time.TimeOnly+".000"), d.Trip.ID, got, want)
				}
				for _, a := range d.Trip.Alerts {
					if a.ID == "route-L4" {
						l4++
						if a.Header != "Header route-L4" || a.Description != "Description of route-L4 \"quoted\" <b>&</b>" || a.URL != "https://www.caltrain.com/alerts/route-L4" ||
							a.Cause != "construction" || a.Effect != "reduced_service" || len(a.ActivePeriods) != 1 ||
							*a.ActivePeriods[0].Start != 1699400000000 || *a.ActivePeriods[0].End != 1699500000000 {
							t.Fatalf("route-L4 view %+v", a)
						}
					}
					if a.ID == "agency-from-17:00:30" && (len(a.ActivePeriods) != 2 || a.ActivePeriods[1].End != nil || *a.ActivePeriods[1].Start != agencyStart*1000) {
						t.Fatalf("agency alert periods %+v", a.ActivePeriods)
					}
				}
			}
			if l4 == 0 {
				t.Fatal("no L4 departure on the board: the route alert is not exercised")
			}
			for _, max := range []int{1, 6, 10, 40} {
				checkCached(t, ix, id, at, max, &st, "alerts")
			}
			for _, lang := range []string{"es", "fr", "es-MX;q=0.9, en;q=0.8", "de, en;q=0.5", "*"} {
				want, err := ix.DeparturesLang(id, at, 6, lang)
				if err != nil {
					t.Fatal(err)
				}
				header := "Header "
				if lang == "es" || lang[0] == 'e' {
					header = "Encabezado "
				}
				for _, d := range want {
					for _, a := range d.Trip.Alerts {
						if a.Header != header+a.ID {
							t.Fatalf("Accept-Language %q: header %q", lang, a.Header)
						}
					}
				}
				for round := 0; round < 2; round++ {
					b, err := ix.DeparturesJSONLang(id, at, 6, lang)
					if err != nil {
						t.Fatal(err)
					}
					if got := string(b.AppendJSON(nil)); got != string(AppendDeparturesJSON(nil, want)) {
						t.Fatalf("Accept-Language %q: cached board\n%s\nwant\n%s", lang, got, AppendDeparturesJSON(nil, want))
					}
				}
			}
		}
		if st.cached == 0 || st.direct == 0 {
			t.Errorf("cached %d, computed %d: both paths must be exercised (the 17:00 minute has an alert start)", st.cached, st.direct)
		}
	}
}

// TestAlertsOnTrips: the run's alerts on the trip, those naming a stop on
// its stops (the station's, and rail-at-sf: route type 2 at San Francisco,
// which the run's board entry there shows too).
func TestAlertsOnTrips(t *testing.T) {
	ix := index(t, alertsHub(t, false), "ct", "caltrain-2023.zip")
	at := time.Unix(1699405200, 0)
	tr, err := ix.TripLang("farebox-trip-ct_412_20231107", at, "es")
	if err != nil {
		t.Fatal(err)
	}
	if got := alertIDs(tr.Alerts); !slices.Equal(got, []string{"route-L4", "trip-412"}) {
		t.Fatalf("trip alerts %v", got)
	}
	if tr.Alerts[1].Header != "Encabezado trip-412" || tr.Alerts[1].Effect != "significant_delays" || tr.Alerts[1].ActivePeriods == nil {
		t.Fatalf("trip alert %+v", tr.Alerts[1])
	}
	seen := 0
	for _, s := range tr.Stops {
		got := alertIDs(s.Alerts)
		switch s.Station.ID {
		case "farebox-station-ct_22nd_street":
			seen++
			if !slices.Equal(got, []string{"station-22nd"}) {
				t.Fatalf("22nd Street: %v", got)
			}
		case "farebox-station-ct_san_francisco":
			if !slices.Equal(got, []string{"rail-at-sf"}) {
				t.Fatalf("San Francisco: %v", got)
			}
		default:
			if len(got) != 0 {
				t.Fatalf("%s: %v", s.Station.ID, got)
			}
		}
	}
	if seen != 1 {
		t.Fatal("trip 412 does not stop at 22nd Street")
	}
	// Wednesday's run: the route alert, its own trip alert (start_date
	// 20231108), not Tuesday's, and the agency alert active by then.
	tr2, err := ix.TripLang("farebox-trip-ct_412_20231108", time.Unix(1699405200+86400, 0), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := alertIDs(tr2.Alerts); !slices.Equal(got, []string{"route-L4", "trip-412-wednesday", "agency-from-17:00:30"}) {
		t.Fatalf("Wednesday's 412: %v", got)
	}
	// Without alerts the key is absent from the JSON.
	plain := index(t, caltrainHub(t), "ct", "caltrain-2023.zip")
	deps, _ := plain.Departures("farebox-station-ct_22nd_street", at, 3)
	if js := AppendDeparturesJSON(nil, deps); strings.Contains(string(js), "alerts") || len(deps[0].Trip.Alerts) != 0 {
		t.Fatal("alerts without an alerts feed")
	}
}

// BenchmarkBoardsWithAlerts: Caltrain 22nd Street with the real
// TripUpdates and no alerts ("none"), with an alerts feed of one alert at
// each of the other 30 stations ("elsewhere": the board's bytes are the
// same, the cost is the alert lookup), and with the test alerts feed
// ("applying": every entry carries one to three alerts, the JSON is about
// 2.5 times as long). Boards computed (DeparturesLang) and answered from
// the board cache (DeparturesJSONLang + AppendJSON, each query a new
// millisecond of the same minute), 10 and 100 entries, the three cases
// side by side in one run.
func BenchmarkBoardsWithAlerts(b *testing.B) {
	const id = "farebox-station-ct_22nd_street"
	at := time.Unix(agencyStart+90, 0) // 17:02:00 PST: no alert starts in this minute
	f := feed(b, "caltrain-2023.zip")
	elsewhere := &gtfsrt.FeedMessage{Header: testtool.CaltrainAlerts().Header}
	for i, sid := range f.Stops.ID {
		if f.Stops.Type[i] == gtfs.StopStation && sid != "22nd_street" {
			elsewhere.Entity = append(elsewhere.Entity, testtool.AlertEntity("elevator-"+sid, [][2]uint64{{1699400000, 1699500000}}, gtfsrt.Alert_MAINTENANCE, gtfsrt.Alert_OTHER_EFFECT, testtool.AlertSelector("", "", sid)))
		}
	}
	if len(elsewhere.Entity) < 20 {
		b.Fatalf("%d stations", len(elsewhere.Entity))
	}
	hubElsewhere := caltrainHub(b)
	hubElsewhere.SetAlerts("ct", parseMsg(b, elsewhere))
	cases := []struct {
		name string
		ix   *Index
	}{
		{"none", index(b, caltrainHub(b), "ct", "caltrain-2023.zip")},
		{"elsewhere", index(b, hubElsewhere, "ct", "caltrain-2023.zip")},
		{"applying", index(b, alertsHub(b, false), "ct", "caltrain-2023.zip")},
	}
	for _, n := range []int{10, 100} {
		for _, c := range cases {
			ix := c.ix
			b.Run("computed/max"+strconv.Itoa(n)+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if deps, err := ix.DeparturesLang(id, at.Add(time.Duration(i%60000)*time.Millisecond), n, "en"); err != nil || len(deps) != n {
						b.Fatal(err)
					}
				}
			})
		}
		for _, c := range cases {
			ix := c.ix
			b.Run("cached/max"+strconv.Itoa(n)+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				buf := make([]byte, 0, 64<<10)
				for i := 0; i < b.N; i++ {
					bj, err := ix.DeparturesJSONLang(id, at.Add(time.Duration(i%60000)*time.Millisecond), n, "en")
					if err != nil || bj.e == nil {
						b.Fatal("not from the cache", err)
					}
					buf = bj.AppendJSON(buf[:0])
				}
				b.SetBytes(int64(len(buf)))
			})
		}
	}
}

// staticAlerts serves one alerts snapshot (and no TripUpdates).
type staticAlerts struct{ s *realtime.Snapshot }

func (staticAlerts) TripUpdates(string) *realtime.Snapshot { return nil }
func (a staticAlerts) Alerts(string) *realtime.Snapshot    { return a.s }

// A feed whose only agency has no agency_id: an alert's agency_id means
// that agency; a feed with agency ids needs the right one.
func TestAlertAgencyOfOneAgencyFeed(t *testing.T) {
	at := time.Date(2024, 6, 12, 9, 0, 0, 0, loadLoc(t, "Europe/Berlin"))
	msg := &gtfsrt.FeedMessage{Header: &gtfsrt.FeedHeader{GtfsRealtimeVersion: proto.String("2.0"), Timestamp: proto.Uint64(uint64(at.Unix()))},
		Entity: []*gtfsrt.FeedEntity{testtool.AlertEntity("strike", nil, gtfsrt.Alert_STRIKE, gtfsrt.Alert_NO_SERVICE, testtool.AlertSelector("ANY", "", ""))}}
	snap := parseMsg(t, msg)
	named := *busyFeed(t) // agency_id A
	unnamed := named
	unnamed.Agencies = []gtfs.Agency{{Name: "Busy Lines", URL: "https://example.org", Timezone: "Europe/Berlin"}}
	for _, c := range []struct {
		f    *gtfs.Feed
		want int
	}{{&named, 0}, {&unnamed, 1}} {
		ix, err := New([]FeedInput{{ID: "busy", Feed: c.f}}, Options{Realtime: staticAlerts{snap}})
		if err != nil {
			t.Fatal(err)
		}
		deps, err := ix.Departures("farebox-station-busy_HUB", at, 5)
		if err != nil || len(deps) != 5 {
			t.Fatal(err)
		}
		for _, d := range deps {
			if len(d.Trip.Alerts) != c.want {
				t.Fatalf("agency %q: %d alerts, want %d", c.f.Agencies[0].ID, len(d.Trip.Alerts), c.want)
			}
		}
	}
}

// Boards with alerts from several goroutines (languages, minutes, maxima):
// the lazily built alert index and shared alert lists are safe, and every
// answer equals the computed board (run with -race).
func TestAlertsConcurrent(t *testing.T) {
	ix := index(t, alertsHub(t, false), "ct", "caltrain-2023.zip")
	const id = "farebox-station-ct_22nd_street"
	langs := []string{"", "es", "en-US", "fr, es;q=0.4"}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				at := time.Unix(testtool.CaltrainAgencyAlertStart-120+int64(i*7+g*3), 0)
				lang, max := langs[(i+g)%len(langs)], 1+(i*g)%20
				b, err := ix.DeparturesJSONLang(id, at, max, lang)
				want, err2 := ix.DeparturesLang(id, at, max, lang)
				if err != nil || err2 != nil {
					errs <- fmt.Sprint(err, err2)
					return
				}
				if got := b.AppendJSON(nil); string(got) != string(AppendDeparturesJSON(nil, want)) {
					errs <- fmt.Sprintf("at %d lang %q max %d: cached and computed boards differ", at.Unix(), lang, max)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkBoardsWithAlertsNYC: the same board (the busiest New York
// station, all nine feeds loaded, the same times) without alerts
// (alerts=none: an alert source without alerts, as a server's realtime.Hub
// is for feeds that publish none; every board asks it), with a realistic alerts feed none of whose alerts applies
// to it (alerts=elsewhere: the cost of looking) and with that feed plus
// alerts on every entry (alerts=applying: one agency alert, one per route
// of the station's first 100 departures and one about the station, so each
// entry carries two or three, the JSON about three times as long).
// "Realistic": nycAlerts gives every feed alerts on a quarter of its routes,
// one stop in 40 and one trip in 2,000 (about 700 alerts in all, MTA-like
// texts), as the MTA's alert feeds carry hundreds at a time. Boards computed
// (DeparturesLang + JSON, each query another minute) and from the board
// cache (each query a new millisecond of one minute). cpu-ns/op is the
// process's CPU time per board (with the garbage collector's), which other
// processes on a busy machine disturb less than ns/op. The three cases run
// one after another inside one repetition, so -count N interleaves them;
// names are benchstat's key=value form:
//
//	go test ./internal/departure -run '^$' -bench BoardsWithAlertsNYC -count 10 | tee new.txt
//	benchstat -col /alerts new.txt
func BenchmarkBoardsWithAlertsNYC(b *testing.B) {
	loadNYC(b)
	ix := nycIdx
	id, _ := ix.BusiestStation()
	at := time.Date(2026, 10, 6, 8, 0, 0, 0, loadLoc(b, "America/New_York"))
	fi, stop, ok := ix.parseStationID(id)
	if !ok {
		b.Fatal(id)
	}
	deps, err := ix.Departures(id, at, MaxDepartures)
	if err != nil {
		b.Fatal(err)
	}
	period := [][2]uint64{{uint64(at.Unix()) - 86400, uint64(at.Unix()) + 86400}}
	elsewhere := nycAlerts(b, ix, fi, stop, period)
	applying := map[string]*gtfsrt.FeedMessage{}
	for feedID, m := range elsewhere {
		applying[feedID] = &gtfsrt.FeedMessage{Header: m.Header, Entity: slices.Clone(m.Entity)}
	}
	msg := applying[fi.id]
	for _, a := range fi.f.Agencies {
		msg.Entity = append(msg.Entity, nycAlert("agency-"+a.ID, period, testtool.AlertSelector(a.ID, "", "")))
	}
	seen := map[string]bool{}
	for _, d := range deps {
		k, _ := ix.parseTripID(d.Trip.ID)
		r := fi.f.Routes[fi.f.Trips.Route[k.trip]].ID
		if !seen[r] {
			seen[r] = true
			msg.Entity = append(msg.Entity, nycAlert("route-"+r, period, testtool.AlertSelector("", r, "")))
		}
	}
	msg.Entity = append(msg.Entity, nycAlert("station", period, testtool.AlertSelector("", "", fi.f.Stops.ID[stop])))
	saved := ix.alertSrc
	defer func() { ix.alertSrc, ix.cache = saved, newBoardCache(0) }()
	cases := []struct {
		name string
		src  AlertSource
	}{{"none", feedAlertsSrc{}}, {"elsewhere", feedAlerts(b, elsewhere)}, {"applying", feedAlerts(b, applying)}}
	for _, n := range []int{10, 100} {
		for _, mode := range []string{"computed", "cached"} {
			for _, c := range cases {
				b.Run("board="+mode+"/max="+strconv.Itoa(n)+"/alerts="+c.name, func(b *testing.B) {
					ix.alertSrc, ix.cache = c.src, newBoardCache(0)
					buf := make([]byte, 0, 256<<10)
					if ds, err := ix.DeparturesLang(id, at, n, "en"); err != nil || len(ds) != n || (c.name == "applying") != (len(ds[0].Trip.Alerts) > 0) {
						b.Fatal("alerts not as expected", err)
					}
					b.ReportAllocs()
					b.ResetTimer()
					cpu0 := cpuTime()
					for i := 0; i < b.N; i++ {
						if mode == "computed" {
							ds, err := ix.DeparturesLang(id, at.Add(time.Duration(i%600)*time.Minute), n, "en")
							if err != nil {
								b.Fatal(err)
							}
							buf = AppendDeparturesJSON(buf[:0], ds)
							continue
						}
						bj, err := ix.DeparturesJSONLang(id, at.Add(time.Duration(i%60000)*time.Millisecond), n, "en")
						if err != nil || bj.e == nil {
							b.Fatal("not from the cache", err)
						}
						buf = bj.AppendJSON(buf[:0])
					}
					b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
					b.ReportMetric(float64(len(buf)), "json-B")
				})
			}
		}
	}
}

// nycAlert is an alert with texts of the length the MTA publishes (a
// header of about 90 and a description of about 400 characters, with the
// typographic quotes and dashes they use) in English and Spanish.
func nycAlert(id string, periods [][2]uint64, sels ...*gtfsrt.EntitySelector) *gtfsrt.FeedEntity {
	e := testtool.AlertEntity(id, periods, gtfsrt.Alert_CONSTRUCTION, gtfsrt.Alert_REDUCED_SERVICE, sels...)
	tr := func(en, es string) *gtfsrt.TranslatedString {
		return &gtfsrt.TranslatedString{Translation: []*gtfsrt.TranslatedString_Translation{
			{Language: proto.String("en"), Text: proto.String(en)}, {Language: proto.String("es"), Text: proto.String(es)}}}
	}
	e.Alert.HeaderText = tr("In "+id+", trains run every 12 minutes – no service at some stops, take the shuttle bus instead",
		"En "+id+", los trenes pasan cada 12 minutos – sin servicio en algunas paradas, tome el autobús")
	e.Alert.DescriptionText = tr("What’s happening? We’re replacing track and signals on "+id+". Trains run every 12 minutes "+
		"instead of every 8 and skip some stations in both directions. Free shuttle buses stop at the skipped stations; "+
		"allow up to 20 additional minutes. Travel tip: transfer at the next express station for faster trips. "+
		"Accessibility: elevators at the affected stations remain in service. Weekdays 10:30 PM to 5 AM, Oct 1 – Nov 30.",
		"¿Qué sucede? Estamos reemplazando vías y señales en "+id+". Los trenes pasan cada 12 minutos y omiten algunas estaciones.")
	return e
}

// nycAlerts is a realistic alerts message per feed that selects nothing on
// the board of stop in feed fi at any time: every feed gets an alert on
// every fourth route (of fi, only routes that never stop at the station),
// one stop in 40 (of fi, not the station's) and one trip in 2,000 (of fi,
// trips of such routes), all active in period.
func nycAlerts(b *testing.B, ix *Index, fi *feedIndex, stop int32, period [][2]uint64) map[string]*gtfsrt.FeedMessage {
	here := map[int32]bool{stop: true}
	for _, s := range fi.departStops(stop) {
		here[s] = true
	}
	atStation := map[int32]bool{} // routes of fi stopping at the station
	for t := range fi.f.Trips.ID {
		for st := fi.f.Trips.First[t]; st < fi.f.Trips.First[t+1]; st++ {
			if here[fi.f.StopTimes.Stop[st]] {
				atStation[fi.f.Trips.Route[t]] = true
				break
			}
		}
	}
	out := map[string]*gtfsrt.FeedMessage{}
	total := 0
	for _, f := range ix.feeds {
		m := &gtfsrt.FeedMessage{Header: &gtfsrt.FeedHeader{GtfsRealtimeVersion: proto.String("2.0"), Timestamp: proto.Uint64(period[0][0])}}
		for r, route := range f.f.Routes {
			if r%4 == 0 && !(f == fi && atStation[int32(r)]) {
				m.Entity = append(m.Entity, nycAlert(f.id+"-route-"+route.ID, period, testtool.AlertSelector("", route.ID, "")))
			}
		}
		for s, sid := range f.f.Stops.ID {
			if s%40 == 0 && !(f == fi && (here[int32(s)] || here[f.stationOf(int32(s))])) {
				m.Entity = append(m.Entity, nycAlert(f.id+"-stop-"+sid, period, testtool.AlertSelector("", "", sid)))
			}
		}
		for t, tid := range f.f.Trips.ID {
			if t%2000 == 0 && !(f == fi && atStation[f.f.Trips.Route[t]]) {
				e := nycAlert(f.id+"-trip-"+tid, period)
				e.Alert.InformedEntity = []*gtfsrt.EntitySelector{{Trip: &gtfsrt.TripDescriptor{TripId: proto.String(tid)}}}
				m.Entity = append(m.Entity, e)
			}
		}
		out[f.id] = m
		total += len(m.Entity)
	}
	if total < 300 {
		b.Fatalf("only %d alerts", total)
	}
	return out
}

// cpuTime is the user and system CPU time this process has used, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// feedAlerts serves one alerts snapshot per feed (and no TripUpdates).
type feedAlertsSrc map[string]*realtime.Snapshot

func (feedAlertsSrc) TripUpdates(string) *realtime.Snapshot { return nil }
func (a feedAlertsSrc) Alerts(id string) *realtime.Snapshot { return a[id] }

func feedAlerts(b *testing.B, msgs map[string]*gtfsrt.FeedMessage) feedAlertsSrc {
	src := feedAlertsSrc{}
	for id, m := range msgs {
		src[id] = parseMsg(b, m)
	}
	return src
}

// The per-query memo of alert lists (alertCtx.memo) gives every run at
// every stop the list the full lookup gives: runs of trips with selectors
// of their own (412 on two days), routes, agency, route type and stops, on
// two service days and the day after, with and without a route selector
// that names a service day (then the day is part of the memo's key).
func TestAlertMemoMatchesLookup(t *testing.T) {
	f := feed(t, "caltrain-2023.zip")
	for _, dated := range []bool{false, true} {
		msg := testtool.CaltrainAlerts()
		if dated {
			msg.Entity = append(msg.Entity, testtool.AlertEntity("L1-tuesday", nil, gtfsrt.Alert_STRIKE, gtfsrt.Alert_NO_SERVICE,
				&gtfsrt.EntitySelector{Trip: &gtfsrt.TripDescriptor{RouteId: proto.String("L1"), StartDate: proto.String("20231107")}}))
		}
		ix, err := New([]FeedInput{{ID: "ct", Feed: f}}, Options{Realtime: staticAlerts{parseMsg(t, msg)}})
		if err != nil {
			t.Fatal(err)
		}
		fi := ix.byID["ct"]
		ai := ix.alertsOf(fi)
		if ai == nil || ai.dayOff == dated || ai.tripSel == nil {
			t.Fatalf("dated %v: index %+v", dated, ai)
		}
		at := int64(agencyStart + 90)
		hits, memoHits := 0, 0
		byStop := map[int32][]int32{} // stop → stop times
		for st, s := range f.StopTimes.Stop {
			byStop[s] = append(byStop[s], int32(st))
		}
		for s, sts := range byStop {
			c := ix.alertCtxFor(fi, at, "es")
			plain := ix.alertCtxFor(fi, at, "es")
			for _, day := range []int32{gtfs.DayNumber(2023, 11, 7), gtfs.DayNumber(2023, 11, 8), gtfs.DayNumber(2023, 11, 9)} {
				for _, st := range sts {
					trip, _ := slices.BinarySearch(f.Trips.First, st+1)
					k := tripKey{fi: fi, trip: int32(trip - 1), day: day}
					n := c.nmemo
					got := c.forRun(k, s)
					want := plain.lookup(fi, f.Trips.Route[k.trip], k.trip, day, s)
					if got != want {
						t.Fatalf("dated %v: trip %s day %d stop %s: memo %v, lookup %v", dated, f.Trips.ID[k.trip], day, f.Stops.ID[s],
							alertIDs(got.get()), alertIDs(want.get()))
					}
					if want != nil {
						hits++
					}
					if c.nmemo == n && !ai.hasTripSel(k.trip) {
						memoHits++
					}
				}
			}
		}
		if hits < 1000 || memoHits < 1000 {
			t.Fatalf("dated %v: %d runs with alerts, %d memo hits", dated, hits, memoHits)
		}
	}
}

// PrepareAlerts resolves a newly stored alerts snapshot before any board
// asks (pollers call it), and a new Index resolves the alerts already
// there; boards then use that index.
func TestPrepareAlerts(t *testing.T) {
	hub := caltrainHub(t)
	hub.SetAlerts("ct", parseMsg(t, testtool.CaltrainAlerts()))
	ix := index(t, hub, "ct", "caltrain-2023.zip")
	fi := ix.byID["ct"]
	first := fi.alerts.Load()
	if first == nil || first.snap != hub.Alerts("ct") {
		t.Fatal("New did not resolve the alerts already polled")
	}
	next := parseMsg(t, testtool.CaltrainAlerts())
	hub.SetAlerts("ct", next)
	ix.PrepareAlerts("ct")
	ix.PrepareAlerts("no-such-feed")
	ai := fi.alerts.Load()
	if ai == first || ai.snap != next {
		t.Fatal("PrepareAlerts did not resolve the new snapshot")
	}
	deps, err := ix.Departures("farebox-station-ct_22nd_street", time.Unix(agencyStart+90, 0), 3)
	if err != nil || len(deps[0].Trip.Alerts) == 0 || fi.alerts.Load() != ai {
		t.Fatal("the board did not use the prepared alerts", err)
	}
}
