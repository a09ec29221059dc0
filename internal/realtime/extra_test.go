package realtime

import (
	"testing"
	"time"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"
	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/testtool"
)

func parseFeed(t *testing.T, m *gtfsrt.FeedMessage) *Snapshot {
	t.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data, time.Unix(testtool.CaltrainRTHeader, 0))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The extra-trip test feed: relationships (NEW and DELETED are newer than
// the bindings), TripProperties (with fields 5 and 6 the bindings lack),
// route ids, StopTimeProperties and the Extra list in feed order.
func TestParseExtraTrips(t *testing.T) {
	msg := testtool.CaltrainExtraTrips(t)
	msg.Entity = append(msg.Entity, &gtfsrt.FeedEntity{Id: proto.String("del"), TripUpdate: &gtfsrt.TripUpdate{
		Trip: &gtfsrt.TripDescriptor{TripId: proto.String("130"), ScheduleRelationship: gtfsrt.TripDescriptor_ScheduleRelationship(7).Enum()}}})
	s := parseFeed(t, msg)
	var ids []string
	for _, u := range s.Extra {
		ids = append(ids, u.TripID)
	}
	want := []string{"X128", "X128", "N412", "126", "414", "X-unknown-stops", "X-all-unknown", "X-no-times", "X-past-midnight"}
	if len(ids) != len(want) {
		t.Fatalf("extra %v, want %v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("extra %v, want %v", ids, want)
		}
	}
	n := s.For("N412")[0]
	if n.Relationship != TripNew || n.Headsign != "Giants Special" || n.ShortName != "G412" || n.RouteID != "L4" || n.StartDate < 0 {
		t.Fatalf("NEW: %+v", n)
	}
	if n.Stops[1].Headsign != "Mission Bay" {
		t.Fatalf("stop headsign %+v", n.Stops[1])
	}
	d := s.For("126")
	var dup *TripUpdate
	for _, u := range d {
		if u.Relationship == TripDuplicated {
			dup = u
		}
	}
	if dup == nil || dup.NewTripID != testtool.ExtraDuplicated || dup.NewStartTime != 17*3600+52*60 || dup.NewStartDate != dup.StartDate {
		t.Fatalf("DUPLICATED: %+v", dup)
	}
	if u := s.For("130")[0]; u.Relationship != TripDeleted {
		t.Fatalf("DELETED: %v", u.Relationship)
	}
	assigned := false
	for _, u := range s.For("128") {
		for _, su := range u.Stops {
			if su.StopID == "70022" && su.AssignedStopID == "70021" {
				assigned = true
			}
		}
	}
	if !assigned {
		t.Fatal("assigned_stop_id lost")
	}
	if r := s.For("414"); len(r) != 2 || r[1].Relationship != TripReplacement || !r[1].Relationship.Extra() || r[0].Relationship.Extra() {
		t.Fatalf("414: %+v", r)
	}
}

// Hub.Set carries an added run that the next fetch cancels without its
// stops, for as long as the fetches cancel it.
func TestHubCarriesCanceledExtraRuns(t *testing.T) {
	hub := NewHub(clocktest.NewFixed(time.Unix(testtool.CaltrainRTHeader, 0)), time.Hour)
	hub.Set("ct", parseFeed(t, testtool.CaltrainExtraTrips(t)))
	for i := 0; i < 3; i++ {
		hub.Set("ct", parseFeed(t, testtool.CaltrainExtraTripsCanceled(t)))
		var carried []*TripUpdate
		for _, u := range hub.TripUpdates("ct").Extra {
			if u.CanceledLater {
				carried = append(carried, u)
			}
		}
		if len(carried) != 1 || carried[0].TripID != testtool.ExtraAdded || len(carried[0].Stops) != 20 {
			t.Fatalf("fetch %d: carried %d", i, len(carried))
		}
	}
	hub.Set("ct", parseFeed(t, testtool.ManyExtraTrips(t, 0)))
	if n := len(hub.TripUpdates("ct").Extra); n != 0 {
		t.Fatalf("%d extra runs after a fetch without them", n)
	}
}
