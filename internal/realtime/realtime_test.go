package realtime

import (
	"context"
	"encoding/json"
	"github.com/farebox/farebox/internal/shareddata"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/testtool"
)

var dataDir = shareddata.Path("gtfs") + "/"

// jsonFeed mirrors the transitland JSON dumps next to the .pb files.
type jsonFeed struct {
	Header struct {
		Timestamp string `json:"timestamp"`
	} `json:"header"`
	Entity []struct {
		TripUpdate *struct {
			Trip struct {
				TripID               string `json:"tripId"`
				StartDate            string `json:"startDate"`
				StartTime            string `json:"startTime"`
				ScheduleRelationship string `json:"scheduleRelationship"`
			} `json:"trip"`
			StopTimeUpdate []struct {
				StopSequence         *uint32    `json:"stopSequence"`
				StopID               string     `json:"stopId"`
				Arrival              *jsonEvent `json:"arrival"`
				Departure            *jsonEvent `json:"departure"`
				ScheduleRelationship string     `json:"scheduleRelationship"`
			} `json:"stopTimeUpdate"`
		} `json:"tripUpdate"`
	} `json:"entity"`
}

type jsonEvent struct {
	Delay *int32 `json:"delay"`
	Time  string `json:"time"`
}

func checkEvent(t *testing.T, what string, got Event, want *jsonEvent) {
	t.Helper()
	if want == nil {
		if got.Known() {
			t.Fatalf("%s: unexpected %+v", what, got)
		}
		return
	}
	if want.Time != "" {
		ts, _ := strconv.ParseInt(want.Time, 10, 64)
		if !got.HasTime || got.Time != ts {
			t.Fatalf("%s: time %+v want %d", what, got, ts)
		}
	} else if got.HasTime {
		t.Fatalf("%s: unexpected time", what)
	}
	if want.Delay != nil {
		if !got.HasDelay || got.Delay != *want.Delay {
			t.Fatalf("%s: delay %+v want %d", what, got, *want.Delay)
		}
	} else if got.HasDelay {
		t.Fatalf("%s: unexpected delay", what)
	}
}

// TestParseMatchesJSONDumps decodes both real TripUpdates feeds and compares
// every trip and stop time update with the JSON rendering of the same message.
func TestParseMatchesJSONDumps(t *testing.T) {
	for _, c := range []struct {
		name           string
		trips, updates int
	}{{"caltrain-2023-trip-updates", 19, 220}, {"bart-2019-trip-updates", 91, 1060}} {
		data, err := os.ReadFile(dataDir + c.name + ".pb")
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(dataDir + c.name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var want jsonFeed
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		recv := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		s, err := Parse(data, recv)
		if err != nil {
			t.Fatal(err)
		}
		hts, _ := strconv.ParseInt(want.Header.Timestamp, 10, 64)
		if !s.Timestamp.Equal(time.Unix(hts, 0)) || !s.Received.Equal(recv) || s.Updates != c.trips {
			t.Fatalf("%s: ts %v updates %d", c.name, s.Timestamp, s.Updates)
		}
		seen := map[string]int{}
		nstu := 0
		for _, e := range want.Entity {
			w := e.TripUpdate
			if w == nil {
				continue
			}
			got := s.For(w.Trip.TripID)[seen[w.Trip.TripID]]
			seen[w.Trip.TripID]++
			wantRel := map[string]TripRelationship{"": TripScheduled, "SCHEDULED": TripScheduled, "ADDED": TripAdded, "CANCELED": TripCanceled}[w.Trip.ScheduleRelationship]
			if got.Relationship != wantRel {
				t.Fatalf("%s %s: relationship %d want %s", c.name, w.Trip.TripID, got.Relationship, w.Trip.ScheduleRelationship)
			}
			if w.Trip.StartDate != "" {
				d, _ := time.Parse("20060102", w.Trip.StartDate)
				if got.StartDate != gtfs.DayNumber(d.Year(), int(d.Month()), d.Day()) {
					t.Fatalf("start date %d", got.StartDate)
				}
			} else if got.StartDate != -1 {
				t.Fatalf("start date %d for absent", got.StartDate)
			}
			if w.Trip.StartTime != "" {
				if got.StartTime < 0 || testtool.GTFSTime(got.StartTime) != w.Trip.StartTime {
					t.Fatalf("start time %d want %s", got.StartTime, w.Trip.StartTime)
				}
			}
			if len(got.Stops) != len(w.StopTimeUpdate) {
				t.Fatalf("%s: %d stop updates want %d", w.Trip.TripID, len(got.Stops), len(w.StopTimeUpdate))
			}
			for i, ws := range w.StopTimeUpdate {
				gs := got.Stops[i]
				nstu++
				if gs.StopID != ws.StopID || gs.HasSequence != (ws.StopSequence != nil) || (ws.StopSequence != nil && gs.Sequence != *ws.StopSequence) {
					t.Fatalf("%s/%d: %+v", w.Trip.TripID, i, gs)
				}
				checkEvent(t, w.Trip.TripID+" arrival", gs.Arrival, ws.Arrival)
				checkEvent(t, w.Trip.TripID+" departure", gs.Departure, ws.Departure)
				if (ws.ScheduleRelationship == "SKIPPED") != (gs.Relationship == StopSkipped) {
					t.Fatal("stop relationship")
				}
			}
		}
		if nstu != c.updates {
			t.Fatalf("%s: %d stop updates, want %d", c.name, nstu, c.updates)
		}
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	if _, err := Parse([]byte("<html>502 Bad Gateway</html>"), time.Now()); err == nil {
		t.Fatal("garbage accepted")
	}
}

func FuzzParse(f *testing.F) {
	data, err := os.ReadFile(dataDir + "caltrain-2023-trip-updates.pb")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b, time.Unix(0, 0))
		if err == nil && s.Trips == nil {
			t.Fatal("nil map on success")
		}
	})
}

func TestHubStalenessAndFailures(t *testing.T) {
	data, _ := os.ReadFile(dataDir + "caltrain-2023-trip-updates.pb")
	header := time.Unix(1699405534, 0)
	clk := clocktest.NewFixed(header.Add(time.Minute))
	hub := NewHub(clk, 5*time.Minute)
	if hub.TripUpdates("ct") != nil || !hub.Status("ct").Stale {
		t.Fatal("empty hub must have nothing")
	}
	s, err := Parse(data, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	hub.Set("ct", s)
	if hub.TripUpdates("ct") != s || hub.TripUpdates("other") != nil {
		t.Fatal("snapshot not served")
	}
	hub.Fail("ct", os.ErrNotExist)
	st := hub.Status("ct")
	if hub.TripUpdates("ct") != s || st.LastError == "" || st.Failures != 1 || st.Stale || st.TripUpdates != 19 || !st.HeaderTime.Equal(header) {
		t.Fatalf("failure must keep the last good snapshot: %+v", st)
	}
	clk.Set(header.Add(5*time.Minute + time.Second))
	if hub.TripUpdates("ct") != nil || !hub.Status("ct").Stale {
		t.Fatal("stale snapshot still served")
	}
}

// TestPollerHTTPAndFile drives Run with an injected timer: a good fetch, a
// 500 (old data kept, error exposed), garbage, then a file source.
func TestPollerHTTPAndFile(t *testing.T) {
	data, _ := os.ReadFile(dataDir + "caltrain-2023-trip-updates.pb")
	var mode atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case 0:
			w.Write(data)
		case 1:
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			w.Write([]byte("not protobuf \xff\xff\xff"))
		}
	}))
	defer srv.Close()
	clk := clocktest.NewFixed(time.Unix(1699405534, 0))
	hub := NewHub(clk, 0)
	ticks := make(chan time.Time)
	polled := make(chan struct{}, 10)
	p := &Poller{FeedID: "ct", Source: srv.URL, Interval: time.Hour, Hub: hub, Clock: clk, After: func(d time.Duration) <-chan time.Time {
		if d != time.Hour {
			t.Errorf("interval %v", d)
		}
		polled <- struct{}{}
		return ticks
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	<-polled
	first := hub.TripUpdates("ct")
	if first == nil || first.Updates != 19 {
		t.Fatal("first poll did not store the snapshot")
	}
	mode.Store(1)
	ticks <- time.Now()
	<-polled
	if hub.TripUpdates("ct") != first || hub.Status("ct").LastError == "" {
		t.Fatalf("HTTP 500 must keep old data and expose the error: %+v", hub.Status("ct"))
	}
	mode.Store(2)
	ticks <- time.Now()
	<-polled
	if st := hub.Status("ct"); hub.TripUpdates("ct") != first || st.Failures != 2 {
		t.Fatalf("garbage must keep old data: %+v", st)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run returned %v", err)
	}
	// Stored hears of every snapshot stored, after it is in the Hub, and of
	// nothing else.
	var stored []string
	fp := &Poller{FeedID: "file", Source: dataDir + "bart-2019-trip-updates.pb", Hub: hub, Clock: clocktest.NewFixed(time.Unix(1565199921, 0)),
		Stored: func(id string) {
			if hub.Status(id).LastSuccess.IsZero() {
				t.Errorf("Stored(%s) before the snapshot is in the Hub", id)
			}
			stored = append(stored, id)
		}}
	if err := fp.PollOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	bad := &Poller{FeedID: "missing", Source: "file:///nonexistent.pb", Hub: hub, Stored: fp.Stored}
	if err := bad.PollOnce(context.Background()); err == nil || hub.Status("missing").LastError == "" {
		t.Fatal("missing file must be reported")
	}
	if !slices.Equal(stored, []string{"file"}) {
		t.Fatalf("Stored called for %v", stored)
	}
}

// TestParseAlerts: the test alerts feed decodes with its informed
// entities, periods, causes, effects and translations; an alert without
// entities is dropped; alerts in a TripUpdates message count too.
func TestParseAlerts(t *testing.T) {
	data, err := proto.Marshal(testtool.CaltrainAlerts())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Alerts) != 9 || s.Updates != 0 {
		t.Fatalf("%d alerts, %d trip updates", len(s.Alerts), s.Updates)
	}
	byID := map[string]*Alert{}
	for _, a := range s.Alerts {
		byID[a.ID] = a
	}
	if byID["no-entities"] != nil {
		t.Error("an alert without informed entities was kept")
	}
	l4 := byID["route-L4"]
	if l4 == nil || l4.Cause != "construction" || l4.Effect != "reduced_service" || len(l4.Active) != 1 || l4.Active[0] != (Period{1699400000, 1699500000}) ||
		len(l4.Entities) != 1 || l4.Entities[0] != (Selector{RouteID: "L4", RouteType: -1, DirectionID: -1, StartDate: -1}) ||
		len(l4.Header) != 2 || l4.Header[1] != (Translation{"es", "Encabezado route-L4"}) || len(l4.URL) != 1 || l4.URL[0].Language != "" {
		t.Fatalf("route-L4: %+v", l4)
	}
	trip := byID["trip-412"].Entities[0]
	if trip.TripID != "412" || trip.StartDate != gtfs.DayNumber(2023, 11, 7) {
		t.Fatalf("trip selector %+v", trip)
	}
	if rt := byID["rail-at-sf"].Entities[0]; rt.RouteType != 2 || rt.StopID != "san_francisco" {
		t.Fatalf("route type selector %+v", rt)
	}
	ag := byID["agency-from-17:00:30"]
	if ag.ActiveAt(testtool.CaltrainAgencyAlertStart-1) || !ag.ActiveAt(testtool.CaltrainAgencyAlertStart) || !ag.ActiveAt(1<<40) || !ag.ActiveAt(1699000000) || ag.ActiveAt(1699100001) {
		t.Fatal("active periods: start inclusive, open end, both periods")
	}
	if !byID["station-22nd"].ActiveAt(0) {
		t.Fatal("an alert without periods is always active")
	}
	// Combined with TripUpdates in one message.
	tu, err := os.ReadFile(dataDir + "caltrain-2023-trip-updates.pb")
	if err != nil {
		t.Fatal(err)
	}
	both, err := Parse(append(tu, data...), time.Now()) // concatenated messages merge their entities
	if err != nil || len(both.Alerts) != 9 || both.Updates != 19 {
		t.Fatalf("combined: %v alerts %d updates %d", err, len(both.Alerts), both.Updates)
	}
}

// TestHubAlerts: an alerts source wins over the TripUpdates message's
// alerts, and alerts expire like predictions; the poller with Alerts set
// feeds SetAlerts.
func TestHubAlerts(t *testing.T) {
	clk := clocktest.NewFixed(time.Unix(testtool.CaltrainRTHeader+10, 0))
	h := NewHub(clk, 5*time.Minute)
	if h.Alerts("ct") != nil {
		t.Fatal("alerts of an unknown feed")
	}
	combined := &Snapshot{Timestamp: time.Unix(testtool.CaltrainRTHeader, 0), Alerts: []*Alert{{ID: "in-tu"}}}
	h.Set("ct", combined)
	if h.Alerts("ct") != combined {
		t.Fatal("the TripUpdates message's alerts are not used")
	}
	data, err := proto.Marshal(testtool.CaltrainAlerts())
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/alerts.pb"
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Poller{FeedID: "ct", Source: file, Hub: h, Alerts: true, Clock: clk}
	if err := p.PollOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a := h.Alerts("ct"); a == nil || len(a.Alerts) != 9 || h.TripUpdates("ct") != combined {
		t.Fatalf("after the alerts poll: %v, trip updates replaced: %v", a, h.TripUpdates("ct") != combined)
	}
	clk.Set(time.Unix(testtool.CaltrainRTHeader, 0).Add(6 * time.Minute))
	if h.Alerts("ct") != nil {
		t.Fatal("stale alerts used")
	}
}
