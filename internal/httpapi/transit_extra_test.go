package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"
	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/testtool"
)

func writeRT(t testing.TB, path string, m *gtfsrt.FeedMessage) {
	t.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// serveCaltrainRealtime wires d with the Caltrain feed (platform codes
// set) and its realtime read from rtFile, which it writes with m first,
// polled every interval: it waits for the first realtime snapshot and gives d
// the service, its session key and readiness.
func serveCaltrainRealtime(t testing.TB, d *httpapi.Deps, rtFile string, m *gtfsrt.FeedMessage, interval time.Duration) *transit.Service {
	ctx := context.Background()
	writeRT(t, rtFile, m)
	if _, err := d.Feeds.Import(ctx, transit.Import{FeedID: "caltrain", SourceName: "caltrain-2023.zip", Feed: testtool.CaltrainWithPlatforms(t)}); err != nil {
		panic(err)
	}
	tr := d.Feeds.Serve(transit.Options{Realtime: map[string]string{"caltrain": rtFile}, RealtimeInterval: interval})
	if err := tr.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	waitRealtime(t, tr, "caltrain")
	key, err := d.App.SessionKey(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	d.Transit, d.SessionKey, d.Ready = tr, key, tr.Ready
	return tr
}

// kotlinBoard is the departure board req answers (200), checked against
// the Kotlin client's departure shape, decoded and as raw objects.
func kotlinBoard(t *testing.T, e *apitest.Env, req apitest.Req) ([]departureJSON, []map[string]map[string]any) {
	t.Helper()
	r := e.Must(200, req)
	e.MustMatch("departures", r.Body, apitest.RArr(kotlinDeparture))
	var deps []departureJSON
	r.JSON(t, &deps)
	var raw []map[string]map[string]any
	r.JSON(t, &raw)
	return deps, raw
}

// Runs that exist only in realtime and platform changes over HTTP, on both
// engines: the realtime source is a file with testtool.CaltrainExtraTrips,
// configured and polled every 20 ms; boards keep the Kotlin client's exact departure
// object and match api/openapi.yaml; trips of extra runs are served; a
// later fetch that cancels X128 shows it cancelled.
func TestExtraTripsHTTP(t *testing.T) {
	t.Parallel()
	type engineRT struct {
		file string
		tr   *transit.Service
	}
	var mu sync.Mutex
	engines := map[*app.App]engineRT{} // the engines run in parallel
	opts := apitest.Options{Now: rtNow, Configure: func(d *httpapi.Deps) {
		rtFile := filepath.Join(t.TempDir(), "caltrain-extra.pb")
		tr := serveCaltrainRealtime(t, d, rtFile, testtool.CaltrainExtraTrips(t), 20*time.Millisecond)
		mu.Lock()
		engines[d.App] = engineRT{rtFile, tr}
		mu.Unlock()
	}}
	apitest.ForEachEngine(t, opts, func(t *testing.T, e *apitest.Env) {
		mu.Lock()
		rtFile, tr := engines[e.App].file, engines[e.App].tr
		mu.Unlock()
		if tr == nil {
			t.Fatal("no transit for this engine")
		}
		at := time.Date(2023, 11, 7, 17, 40, 0, 0, time.FixedZone("PST", -8*3600)).UnixMilli()
		board := func(at int64, max int) map[string]departureJSON {
			deps, raw := kotlinBoard(t, e, apitest.Req{Method: "GET", Path: departuresPath(station("caltrain_22nd_street"), at, max), Key: e.LiveKey,
				Header: map[string]string{"Accept": "application/json"}})
			m := map[string]departureJSON{}
			for i, d := range deps {
				if _, dup := m[d.Trip.ID]; dup {
					t.Fatalf("%s twice", d.Trip.ID)
				}
				m[d.Trip.ID] = d
				if len(raw[i]["departure"]) != 3 {
					t.Fatalf("departure object %v: keys beyond the three the Kotlin client accepts", raw[i]["departure"])
				}
				added, _ := raw[i]["trip"]["added"].(bool)
				if (added) != (d.Trip.ID == "farebox-trip-caltrain_X128_20231107" || d.Trip.ID == "farebox-trip-caltrain_N412_20231107" ||
					d.Trip.ID == "farebox-trip-caltrain_126-extra_20231107" || d.Trip.ID == "farebox-trip-caltrain_414_20231107" ||
					d.Trip.ID == "farebox-trip-caltrain_X-unknown-stops_20231107" || d.Trip.ID == "farebox-trip-caltrain_X-past-midnight_20231107") {
					t.Fatalf("%s: added %v", d.Trip.ID, raw[i]["trip"]["added"])
				}
				sp, has := raw[i]["trip"]["scheduled_platform"]
				if has != (d.Trip.ID == "farebox-trip-caltrain_128_20231107") || has && (sp != "2" || d.Departure.Platform != "1") {
					t.Fatalf("%s: scheduled_platform %v, platform %q", d.Trip.ID, sp, d.Departure.Platform)
				}
			}
			return m
		}
		m := board(at, 20)
		for _, id := range []string{"X128", "N412", "126-extra", "414", "X-unknown-stops", "128"} {
			if _, ok := m["farebox-trip-caltrain_"+id+"_20231107"]; !ok {
				t.Fatalf("%s not on the board", id)
			}
		}
		for _, id := range []string{"127", "X-all-unknown", "X-no-times"} {
			if _, ok := m["farebox-trip-caltrain_"+id+"_20231107"]; ok {
				t.Fatalf("%s on the board", id)
			}
		}
		if d := m["farebox-trip-caltrain_N412_20231107"]; d.Trip.Headsign != "Mission Bay" || d.Trip.LineName != "L4" {
			t.Fatalf("N412: %+v", d.Trip)
		}
		// After midnight: the run of service day 2023-11-07.
		if _, ok := board((testtool.PastMidnightSF-600)*1000, 5)["farebox-trip-caltrain_X-past-midnight_20231107"]; !ok {
			t.Fatal("X-past-midnight not on the board after midnight")
		}

		// Trips (the JavaScript client's shape; validated against the document).
		r := e.Must(200, apitest.Req{Method: "GET", Path: "/v1/trips/farebox-trip-caltrain_X128_20231107.json", Key: e.LiveKey})
		e.MustMatch("trip", r.Body, jsTrip)
		tm := r.Map(t)
		if tm["added"] != true || len(tm["stops"].([]any)) != 20 {
			t.Fatalf("X128 trip: added %v, %d stops", tm["added"], len(tm["stops"].([]any)))
		}
		r = e.Must(200, apitest.Req{Method: "GET", Path: "/v1/trips/farebox-trip-caltrain_128_20231107.json", Key: e.LiveKey})
		e.MustMatch("trip", r.Body, jsTrip)
		stop := r.Map(t)["stops"].([]any)[1].(map[string]any)
		if dep := stop["departure"].(map[string]any); dep["platform"] != "1" || dep["scheduled_platform"] != "2" {
			t.Fatalf("128 at 22nd Street: %v", stop)
		}
		for _, id := range []string{"X-no-times", "X-all-unknown"} {
			e.Must(404, apitest.Req{Method: "GET", Path: "/v1/trips/farebox-trip-caltrain_" + id + "_20231107.json", Key: e.LiveKey})
		}

		// The next fetch cancels X128 without its stops: still shown, cancelled.
		writeRT(t, rtFile, testtool.CaltrainExtraTripsCanceled(t))
		deadline := time.Now().Add(30 * time.Second)
		for s := tr.Hub().TripUpdates("caltrain"); s == nil || s.Timestamp.Unix() != testtool.CaltrainRTHeader+30; s = tr.Hub().TripUpdates("caltrain") {
			if time.Now().After(deadline) {
				t.Fatal("the canceling fetch never arrived")
			}
			time.Sleep(5 * time.Millisecond)
		}
		d := board(at, 20)["farebox-trip-caltrain_X128_20231107"]
		if !d.Trip.Cancelled || d.Departure.PredictedAt != nil {
			t.Fatalf("X128 after its cancellation: %+v", d)
		}
		r = e.Must(200, apitest.Req{Method: "GET", Path: "/v1/trips/farebox-trip-caltrain_X128_20231107.json", Key: e.LiveKey})
		if st := r.Map(t)["stops"].([]any)[0].(map[string]any)["status"]; st != "cancelled" {
			t.Fatalf("X128 stop status %v", st)
		}
	})
}

// TestPlatformBoardsAndLateTrainsHTTP, on both engines: a platform's own
// board follows the platform realtime assigns (128 moved from platform 2
// to 1 at 22nd Street is on 1's board, with scheduled_platform "2", and
// not on 2's), and trains more than 30 minutes late stay on the board
// until they leave (408 45 minutes, 122 120 minutes), over HTTP with the
// realtime file polled; the stored gzip copy of a platform board inflates
// to the plain board.
func TestPlatformBoardsAndLateTrainsHTTP(t *testing.T) {
	t.Parallel()
	msg := testtool.CaltrainExtraTrips(t)
	msg.Entity = append(msg.Entity, testtool.DelayEntities(
		testtool.TripDelay{TripID: "408", StartDate: "20231107", Delay: 45 * 60},
		testtool.TripDelay{TripID: "122", StartDate: "20231107", Delay: 120 * 60})...)
	opts := apitest.Options{Now: rtNow, Configure: func(d *httpapi.Deps) {
		// The feed never changes: one poll, so that no new snapshot (and
		// with it a new board identity) lands between the requests below
		// that expect the stored gzip copy of one board.
		serveCaltrainRealtime(t, d, filepath.Join(t.TempDir(), "caltrain-platforms-late.pb"), msg, time.Hour)
	}}
	apitest.ForEachEngine(t, opts, func(t *testing.T, e *apitest.Env) {
		pst := time.FixedZone("PST", -8*3600)
		board := func(id string, at time.Time, max int) (map[string]departureJSON, []departureJSON) {
			deps, raw := kotlinBoard(t, e, apitest.Req{Method: "GET", Path: departuresPath(station(id), at.UnixMilli(), max), Key: e.LiveKey})
			m := map[string]departureJSON{}
			for i, d := range deps {
				m[d.Trip.ID] = d
				if sp, ok := raw[i]["trip"]["scheduled_platform"]; ok && (d.Trip.ID != "farebox-trip-caltrain_128_20231107" || sp != "2") {
					t.Errorf("%s: scheduled_platform %v", d.Trip.ID, sp)
				}
			}
			return m, deps
		}
		at := time.Date(2023, 11, 7, 17, 40, 0, 0, pst)
		p1, _ := board("caltrain_70021", at, 20)
		p2, _ := board("caltrain_70022", at, 20)
		if d, ok := p1["farebox-trip-caltrain_128_20231107"]; !ok || d.Departure.Platform != "1" || d.Departure.PredictedAt == nil {
			t.Fatalf("128 on platform 1's board: %v %+v", ok, d)
		}
		if _, ok := p2["farebox-trip-caltrain_128_20231107"]; ok {
			t.Fatal("128 is still on platform 2's board")
		}
		// The stored gzip copy of platform 1's board (second request).
		path := departuresPath(station("caltrain_70021"), at.UnixMilli(), 20)
		plain := e.Must(200, apitest.Req{Method: "GET", Path: path, Key: e.LiveKey, Header: map[string]string{"Accept-Encoding": "identity"}}).Body
		var gz []byte
		for i := 0; i < 2; i++ {
			r := e.Must(200, apitest.Req{Method: "GET", Path: path, Key: e.LiveKey, Header: map[string]string{"Accept-Encoding": "gzip"}, NoValidate: true})
			if r.Header.Get("Content-Encoding") == "gzip" {
				gz = r.Body
			}
		}
		if gz == nil {
			t.Fatal("platform 1's board was never sent compressed")
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		if inflated, _ := io.ReadAll(zr); !bytes.Equal(inflated, plain) {
			t.Fatalf("the gzip board differs:\n%s\n%s", inflated, plain)
		}
		// Late trains: at 15:50 122 (14:41, predicted 16:41) and 408 (15:14,
		// predicted 15:59) come first; 408 is gone once it left.
		_, deps := board("caltrain_22nd_street", time.Date(2023, 11, 7, 15, 50, 0, 0, pst), 3)
		if len(deps) != 3 || deps[0].Trip.ID != "farebox-trip-caltrain_122_20231107" || deps[1].Trip.ID != "farebox-trip-caltrain_408_20231107" ||
			*deps[0].Departure.PredictedAt != time.Date(2023, 11, 7, 16, 41, 0, 0, pst).UnixMilli() || deps[1].Departure.ScheduledAt != time.Date(2023, 11, 7, 15, 14, 0, 0, pst).UnixMilli() {
			t.Fatalf("board at 15:50: %+v", deps)
		}
		m, _ := board("caltrain_22nd_street", time.Date(2023, 11, 7, 15, 59, 1, 0, pst), 10)
		if _, ok := m["farebox-trip-caltrain_408_20231107"]; ok {
			t.Fatal("408 is on the board after it left")
		}
		if _, ok := m["farebox-trip-caltrain_122_20231107"]; !ok {
			t.Fatal("122 (120 minutes late) left the board before it departs")
		}
	})
}
