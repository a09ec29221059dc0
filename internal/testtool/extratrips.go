package testtool

import (
	"os"
	"strconv"
	"testing"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/shareddata"
)

// Test feeds of runs that exist only in realtime, derived from the real
// Caltrain TripUpdates (caltrain-2023-trip-updates.pb, Tue 2023-11-07
// 17:05 PST): every real entity, with these changes and additions (times
// are the real predictions of the trip named, shifted):
//
//   - ExtraAdded "X128": ADDED, route L1, trip 128's stops 20 minutes later
//     (San Francisco 17:57, 22nd Street 18:02), twice (a duplicate entity).
//   - ExtraNew "N412": NEW (schedule_relationship 8, newer than the Go
//     bindings: written as an unknown field), route L4, trip_headsign
//     "Giants Special" and trip_short_name "G412" (TripProperties fields 5
//     and 6), trip 412's stops 30 minutes later, stop_headsign "Mission
//     Bay" at 22nd Street (StopTimeProperties field 2) and no pickup at
//     Millbrae (pickup_type 1, field 3).
//   - DUPLICATED trip 126 as ExtraDuplicated "126-extra" starting 17:52:00
//     on 2023-11-07, two minutes late from its first stop.
//   - REPLACEMENT of trip 414: its three stops four minutes later.
//   - Platform changes on real entities: trip 128 at 22nd Street is served
//     at platform 70021 (assigned_stop_id), trip 412 at San Francisco at
//     70011 (stop_id of the sibling platform, matched by stop_sequence)
//     and takes no passengers at San Bruno (pickup_type 1);
//     trip 127 at 22nd Street (70021) is moved to Bayshore (70031), another
//     station.
//   - Edge cases, all ADDED on L1: "X-unknown-stops" (two stop ids the feed
//     lacks among three real ones), "X-all-unknown" (only unknown stops:
//     not shown), "X-no-times" (delays only: not shown), "X-past-midnight"
//     (start_date 20231107, start_time 24:20:00: San Francisco 00:20 on
//     2023-11-08).
//
// CaltrainExtraTripsCanceled is the next fetch, 30 s later: X128 is
// CANCELED (without stops) and everything else is the same.
const (
	ExtraAdded      = "X128"
	ExtraNew        = "N412"
	ExtraDuplicated = "126-extra"
)

// CaltrainExtraTrips is the test feed described above.
func CaltrainExtraTrips(t testing.TB) *gtfsrt.FeedMessage {
	t.Helper()
	return caltrainExtra(t, false)
}

// CaltrainExtraTripsCanceled is the next fetch, with X128 CANCELED.
func CaltrainExtraTripsCanceled(t testing.TB) *gtfsrt.FeedMessage {
	t.Helper()
	return caltrainExtra(t, true)
}

// ManyExtraTrips is the Caltrain TripUpdates with n ADDED copies of X128
// ("X128-0" …), each a minute after the one before.
func ManyExtraTrips(t testing.TB, n int) *gtfsrt.FeedMessage {
	t.Helper()
	msg := realCaltrain(t)
	base := entity(t, msg, "128")
	for i := 0; i < n; i++ {
		e := added(base, "X128-"+strconv.Itoa(i), "L1", int64(20*60+60*i))
		msg.Entity = append(msg.Entity, e)
	}
	return msg
}

func realCaltrain(t testing.TB) *gtfsrt.FeedMessage {
	data, err := os.ReadFile(shareddata.Path("gtfs") + "/caltrain-2023-trip-updates.pb")
	if err != nil {
		t.Fatal(err)
	}
	var msg gtfsrt.FeedMessage
	if err := proto.Unmarshal(data, &msg); err != nil {
		t.Fatal(err)
	}
	return &msg
}

func entity(t testing.TB, msg *gtfsrt.FeedMessage, tripID string) *gtfsrt.FeedEntity {
	for _, e := range msg.Entity {
		if e.GetTripUpdate().GetTrip().GetTripId() == tripID {
			return e
		}
	}
	t.Fatalf("no real entity for trip %s", tripID)
	return nil
}

// added is an ADDED copy of a real entity's stops, shifted by shift
// seconds, without stop sequences.
func added(real *gtfsrt.FeedEntity, tripID, route string, shift int64) *gtfsrt.FeedEntity {
	e := proto.Clone(real).(*gtfsrt.FeedEntity)
	e.Id = proto.String("extra-" + tripID)
	tu := e.TripUpdate
	tu.Vehicle = nil
	tu.Trip = &gtfsrt.TripDescriptor{TripId: proto.String(tripID), RouteId: proto.String(route), StartDate: proto.String("20231107"),
		ScheduleRelationship: gtfsrt.TripDescriptor_ADDED.Enum()}
	for _, s := range tu.StopTimeUpdate {
		s.StopSequence = nil
		shiftEvent(s.Arrival, shift)
		shiftEvent(s.Departure, shift)
	}
	return e
}

func shiftEvent(ev *gtfsrt.TripUpdate_StopTimeEvent, shift int64) {
	if ev != nil && ev.Time != nil {
		ev.Time = proto.Int64(ev.GetTime() + shift)
	}
}

func stopUpdate(stop string, at int64) *gtfsrt.TripUpdate_StopTimeUpdate {
	return &gtfsrt.TripUpdate_StopTimeUpdate{StopId: proto.String(stop),
		Arrival: &gtfsrt.TripUpdate_StopTimeEvent{Time: proto.Int64(at)}, Departure: &gtfsrt.TripUpdate_StopTimeEvent{Time: proto.Int64(at)}}
}

// noPickup is StopTimeProperties.pickup_type (field 3) = 1 (NONE), a field
// newer than the bindings.
var noPickup = protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 1)

// addUnknown appends raw fields the bindings do not know to m.
func addUnknown(m proto.Message, raw []byte) {
	r := m.ProtoReflect()
	r.SetUnknown(append(r.GetUnknown(), raw...))
}

func caltrainExtra(t testing.TB, canceled bool) *gtfsrt.FeedMessage {
	msg := realCaltrain(t)
	// Copies of real entities, taken before the platform changes below.
	x := added(entity(t, msg, "128"), ExtraAdded, "L1", 20*60)
	n := added(entity(t, msg, "412"), ExtraNew, "L4", 30*60)
	r := added(entity(t, msg, "414"), "414", "L4", 4*60)

	// ADDED, twice; or its cancellation.
	if canceled {
		msg.Header.Timestamp = proto.Uint64(msg.Header.GetTimestamp() + 30)
		msg.Entity = append(msg.Entity, &gtfsrt.FeedEntity{Id: proto.String("cancel-X128"), TripUpdate: &gtfsrt.TripUpdate{
			Trip: &gtfsrt.TripDescriptor{TripId: proto.String(ExtraAdded), StartDate: proto.String("20231107"), ScheduleRelationship: gtfsrt.TripDescriptor_CANCELED.Enum()}}})
	} else {
		again := proto.Clone(x).(*gtfsrt.FeedEntity)
		again.Id = proto.String("extra-X128-again")
		msg.Entity = append(msg.Entity, x, again)
	}

	// NEW with trip properties and a stop headsign.
	n.TripUpdate.Trip.ScheduleRelationship = nil
	addUnknown(n.TripUpdate.Trip, protowire.AppendVarint(protowire.AppendTag(nil, 4, protowire.VarintType), 8))
	n.TripUpdate.TripProperties = &gtfsrt.TripUpdate_TripProperties{}
	var props []byte
	props = protowire.AppendString(protowire.AppendTag(props, 5, protowire.BytesType), "Giants Special")
	props = protowire.AppendString(protowire.AppendTag(props, 6, protowire.BytesType), "G412")
	addUnknown(n.TripUpdate.TripProperties, props)
	for _, s := range n.TripUpdate.StopTimeUpdate {
		switch s.GetStopId() {
		case "70022":
			s.StopTimeProperties = &gtfsrt.TripUpdate_StopTimeUpdate_StopTimeProperties{}
			addUnknown(s.StopTimeProperties, protowire.AppendString(protowire.AppendTag(nil, 2, protowire.BytesType), "Mission Bay"))
		case "70062":
			s.StopTimeProperties = &gtfsrt.TripUpdate_StopTimeUpdate_StopTimeProperties{}
			addUnknown(s.StopTimeProperties, noPickup)
		}
	}
	msg.Entity = append(msg.Entity, n)

	// DUPLICATED 126, two minutes late.
	msg.Entity = append(msg.Entity, &gtfsrt.FeedEntity{Id: proto.String("dup-126"), TripUpdate: &gtfsrt.TripUpdate{
		Trip:           &gtfsrt.TripDescriptor{TripId: proto.String("126"), StartDate: proto.String("20231107"), ScheduleRelationship: gtfsrt.TripDescriptor_DUPLICATED.Enum()},
		TripProperties: &gtfsrt.TripUpdate_TripProperties{TripId: proto.String(ExtraDuplicated), StartDate: proto.String("20231107"), StartTime: proto.String("17:52:00")},
		StopTimeUpdate: []*gtfsrt.TripUpdate_StopTimeUpdate{{StopSequence: proto.Uint32(1), Departure: &gtfsrt.TripUpdate_StopTimeEvent{Delay: proto.Int32(120)}}},
	}})

	// REPLACEMENT of 414: four minutes later.
	r.Id = proto.String("replace-414")
	r.TripUpdate.Trip.ScheduleRelationship = gtfsrt.TripDescriptor_REPLACEMENT.Enum()
	msg.Entity = append(msg.Entity, r)

	// Platform changes on real entities.
	for _, s := range entity(t, msg, "128").TripUpdate.StopTimeUpdate {
		if s.GetStopId() == "70022" {
			s.StopTimeProperties = &gtfsrt.TripUpdate_StopTimeUpdate_StopTimeProperties{AssignedStopId: proto.String("70021")}
		}
	}
	for _, s := range entity(t, msg, "412").TripUpdate.StopTimeUpdate {
		if s.GetStopId() == "70012" {
			s.StopId = proto.String("70011")
		}
	}
	for _, s := range entity(t, msg, "412").TripUpdate.StopTimeUpdate {
		if s.GetStopId() == "70052" {
			s.StopTimeProperties = &gtfsrt.TripUpdate_StopTimeUpdate_StopTimeProperties{}
			addUnknown(s.StopTimeProperties, noPickup)
		}
	}
	for _, s := range entity(t, msg, "127").TripUpdate.StopTimeUpdate {
		if s.GetStopId() == "70021" {
			s.StopTimeProperties = &gtfsrt.TripUpdate_StopTimeUpdate_StopTimeProperties{AssignedStopId: proto.String("70031")}
		}
	}

	// Edge cases.
	const sf = 1699408620 // 2023-11-07 17:57:00 PST
	msg.Entity = append(msg.Entity,
		edge("X-unknown-stops", "", stopUpdate("nowhere-1", sf+60), stopUpdate("70012", sf+120), stopUpdate("nowhere-2", sf+300), stopUpdate("70022", sf+420), stopUpdate("70032", sf+720)),
		edge("X-all-unknown", "", stopUpdate("nowhere-1", sf), stopUpdate("nowhere-2", sf+300)),
		edge("X-no-times", "",
			&gtfsrt.TripUpdate_StopTimeUpdate{StopId: proto.String("70012"), Departure: &gtfsrt.TripUpdate_StopTimeEvent{Delay: proto.Int32(60)}},
			&gtfsrt.TripUpdate_StopTimeUpdate{StopId: proto.String("70022"), Arrival: &gtfsrt.TripUpdate_StopTimeEvent{Delay: proto.Int32(60)}}),
		edge("X-past-midnight", "24:20:00", stopUpdate("70012", PastMidnightSF), stopUpdate("70022", PastMidnightSF+350), stopUpdate("70032", PastMidnightSF+660)),
	)
	return msg
}

// PastMidnightSF is when X-past-midnight leaves San Francisco: 2023-11-08
// 00:20:00 PST, 24:20:00 of service day 2023-11-07.
const PastMidnightSF = 1699431600

func edge(tripID, startTime string, stops ...*gtfsrt.TripUpdate_StopTimeUpdate) *gtfsrt.FeedEntity {
	td := &gtfsrt.TripDescriptor{TripId: proto.String(tripID), RouteId: proto.String("L1"), StartDate: proto.String("20231107"), ScheduleRelationship: gtfsrt.TripDescriptor_ADDED.Enum()}
	if startTime != "" {
		td.StartTime = proto.String(startTime)
	}
	return &gtfsrt.FeedEntity{Id: proto.String("edge-" + tripID), TripUpdate: &gtfsrt.TripUpdate{Trip: td, StopTimeUpdate: stops}}
}

// TripDelay delays one timetable run (trip_id on start_date YYYYMMDD) by
// Delay seconds from its first stop on (a departure delay at
// stop_sequence 1, which propagates downstream).
type TripDelay struct {
	TripID, StartDate string
	Delay             int32
}

// CaltrainDelayed is the real Caltrain TripUpdates with a SCHEDULED
// TripUpdate per delay appended (runs that are over in the real fetch, so
// that they would have left boards long before).
func CaltrainDelayed(t testing.TB, delays ...TripDelay) *gtfsrt.FeedMessage {
	t.Helper()
	msg := realCaltrain(t)
	msg.Entity = append(msg.Entity, DelayEntities(delays...)...)
	return msg
}

// DelayEntities are the TripUpdates of CaltrainDelayed, to add to another
// message.
func DelayEntities(delays ...TripDelay) []*gtfsrt.FeedEntity {
	var out []*gtfsrt.FeedEntity
	for _, d := range delays {
		out = append(out, &gtfsrt.FeedEntity{Id: proto.String("late-" + d.TripID), TripUpdate: &gtfsrt.TripUpdate{
			Trip: &gtfsrt.TripDescriptor{TripId: proto.String(d.TripID), StartDate: proto.String(d.StartDate), ScheduleRelationship: gtfsrt.TripDescriptor_SCHEDULED.Enum()},
			StopTimeUpdate: []*gtfsrt.TripUpdate_StopTimeUpdate{{StopSequence: proto.Uint32(1),
				Departure: &gtfsrt.TripUpdate_StopTimeEvent{Delay: proto.Int32(d.Delay)}}},
		}})
	}
	return out
}
