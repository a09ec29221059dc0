package realtime

import (
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"
	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/gtfs"
)

// TripRelationship is a trip's schedule relationship.
type TripRelationship uint8

// Trip relationships (GTFS-RT TripDescriptor.ScheduleRelationship).
const (
	TripScheduled TripRelationship = iota
	TripAdded
	TripUnscheduled
	TripCanceled
	TripReplacement
	TripDuplicated
	TripDeleted // DELETED (7): removed, and not to be shown (newer than the bindings: read from the unknown fields)
	TripNew     // NEW (8): an extra trip unrelated to the timetable (the successor of ADDED; idem)
)

// Extra reports whether the relationship describes a run that is not in the
// timetable: ADDED, NEW, DUPLICATED or REPLACEMENT (a trip whose whole
// schedule the update replaces).
func (r TripRelationship) Extra() bool {
	return r == TripAdded || r == TripNew || r == TripDuplicated || r == TripReplacement
}

// StopRelationship is a stop time update's schedule relationship.
type StopRelationship uint8

// Stop relationships (GTFS-RT StopTimeUpdate.ScheduleRelationship).
const (
	StopScheduled StopRelationship = iota
	StopSkipped
	StopNoData
	StopUnscheduled
)

// Event is a predicted arrival or departure: an absolute time, a delay, or both.
type Event struct {
	Time     int64 // Unix seconds; valid when HasTime
	Delay    int32 // seconds; valid when HasDelay
	HasTime  bool
	HasDelay bool
}

// Known reports whether the event carries a time or a delay.
func (e Event) Known() bool { return e.HasTime || e.HasDelay }

// StopUpdate is one StopTimeUpdate.
type StopUpdate struct {
	Sequence     uint32
	HasSequence  bool
	StopID       string
	Arrival      Event
	Departure    Event
	Relationship StopRelationship
	// AssignedStopID is StopTimeProperties.assigned_stop_id: the stop
	// (another platform, or another station) the vehicle serves instead of
	// the timetable's.
	AssignedStopID string
	// Headsign is StopTimeProperties.stop_headsign (field 2, newer than the
	// bindings).
	Headsign string
	// NoPickup: StopTimeProperties.pickup_type (field 3, idem) is 1, no
	// pickup: not a departure.
	NoPickup bool
}

// TripUpdate is one TripUpdate entity.
type TripUpdate struct {
	TripID       string
	StartDate    int32 // day number; -1 when absent
	StartTime    int32 // seconds (GTFS time); -1 when absent
	Relationship TripRelationship
	Delay        Event // trip-level delay (experimental field), HasDelay when set
	Stops        []StopUpdate
	RouteID      string // TripDescriptor.route_id

	// TripProperties (DUPLICATED, NEW): the new run's trip id, service
	// day (-1 absent) and start time (-1 absent); trip_headsign and
	// trip_short_name (fields 5 and 6, newer than the bindings).
	NewTripID    string
	NewStartDate int32
	NewStartTime int32
	Headsign     string
	ShortName    string

	// CanceledLater: a CANCELED update of a run that an earlier snapshot
	// added; the stops are those the run had then (Hub.Set carries them).
	CanceledLater bool
}

// Snapshot is one decoded FULL_DATASET fetch. It is immutable.
type Snapshot struct {
	Timestamp time.Time // header timestamp, or Received when absent
	Received  time.Time
	Trips     map[string][]*TripUpdate // by trip_id
	Entities  int
	Updates   int      // TripUpdates kept
	Alerts    []*Alert // service alerts with at least one informed entity, in feed order
	// Extra lists, in feed order, the updates of runs that are not in the
	// timetable (Relationship.Extra), and the CanceledLater ones.
	Extra []*TripUpdate
}

// For returns the updates for a trip id (several service dates are possible).
func (s *Snapshot) For(tripID string) []*TripUpdate {
	if s == nil {
		return nil
	}
	return s.Trips[tripID]
}

// Parse decodes a GTFS-Realtime FeedMessage: its TripUpdates and its
// Alerts (a message may hold both). TripUpdates without a trip id and
// alerts without informed entities are skipped; a message that is not protobuf or is DIFFERENTIAL is an
// apperr.Invalid error.
func Parse(data []byte, received time.Time) (*Snapshot, error) {
	const op = "realtime.Parse"
	var msg gtfsrt.FeedMessage
	if err := proto.Unmarshal(data, &msg); err != nil {
		return nil, &apperr.Error{Op: op, Kind: apperr.Invalid, Code: CodeGTFSRTInvalid, Msg: "the GTFS-Realtime message cannot be decoded", Err: err}
	}
	if msg.GetHeader().GetIncrementality() == gtfsrt.FeedHeader_DIFFERENTIAL {
		return nil, apperr.E(op, apperr.Invalid, CodeGTFSRTDifferential, "DIFFERENTIAL GTFS-Realtime feeds are not supported")
	}
	s := &Snapshot{Received: received.UTC(), Timestamp: received.UTC(), Trips: map[string][]*TripUpdate{}, Entities: len(msg.GetEntity())}
	if ts := msg.GetHeader().GetTimestamp(); ts > 0 {
		s.Timestamp = time.Unix(int64(ts), 0).UTC()
	}
	for _, ent := range msg.GetEntity() {
		if al := ent.GetAlert(); al != nil && !ent.GetIsDeleted() {
			if a := parseAlert(ent.GetId(), al); a != nil {
				s.Alerts = append(s.Alerts, a)
			}
		}
		tu := ent.GetTripUpdate()
		if tu == nil || ent.GetIsDeleted() {
			continue
		}
		td := tu.GetTrip()
		if td.GetTripId() == "" {
			continue
		}
		u := &TripUpdate{TripID: td.GetTripId(), StartDate: -1, StartTime: -1, NewStartDate: -1, NewStartTime: -1,
			Relationship: tripRel(td.GetScheduleRelationship()), RouteID: td.GetRouteId()}
		if tp := tu.GetTripProperties(); tp != nil {
			u.NewTripID = tp.GetTripId()
			if day, ok := parseDate(tp.GetStartDate()); ok {
				u.NewStartDate = day
			}
			if secs, ok := parseClock(tp.GetStartTime()); ok {
				u.NewStartTime = secs
			}
			unk := tp.ProtoReflect().GetUnknown()
			u.Headsign, _ = unknownString(unk, 5)
			u.ShortName, _ = unknownString(unk, 6)
		}
		if d := td.GetStartDate(); d != "" {
			if day, ok := parseDate(d); ok {
				u.StartDate = day
			}
		}
		if st := td.GetStartTime(); st != "" {
			if secs, ok := parseClock(st); ok {
				u.StartTime = secs
			}
		}
		if tu.Delay != nil {
			u.Delay = Event{Delay: tu.GetDelay(), HasDelay: true}
		}
		if n := len(tu.GetStopTimeUpdate()); n > 0 {
			u.Stops = make([]StopUpdate, 0, n)
		}
		for _, stu := range tu.GetStopTimeUpdate() {
			su := StopUpdate{StopID: stu.GetStopId(), Arrival: event(stu.GetArrival()), Departure: event(stu.GetDeparture())}
			if p := stu.GetStopTimeProperties(); p != nil {
				su.AssignedStopID = p.GetAssignedStopId()
				unk := p.ProtoReflect().GetUnknown()
				su.Headsign, _ = unknownString(unk, 2)
				if v, ok := unknownVarint(unk, 3); ok && v == 1 {
					su.NoPickup = true
				}
			}
			if stu.StopSequence != nil {
				su.Sequence, su.HasSequence = stu.GetStopSequence(), true
			}
			switch stu.GetScheduleRelationship() {
			case gtfsrt.TripUpdate_StopTimeUpdate_SKIPPED:
				su.Relationship = StopSkipped
			case gtfsrt.TripUpdate_StopTimeUpdate_NO_DATA:
				su.Relationship = StopNoData
			case gtfsrt.TripUpdate_StopTimeUpdate_UNSCHEDULED:
				su.Relationship = StopUnscheduled
			}
			u.Stops = append(u.Stops, su)
		}
		s.Trips[u.TripID] = append(s.Trips[u.TripID], u)
		s.Updates++
		if u.Relationship.Extra() {
			s.Extra = append(s.Extra, u)
		}
	}
	return s, nil
}

func event(e *gtfsrt.TripUpdate_StopTimeEvent) Event {
	if e == nil {
		return Event{}
	}
	var out Event
	if e.Time != nil && e.GetTime() > 0 {
		out.Time, out.HasTime = e.GetTime(), true
	}
	if e.Delay != nil {
		out.Delay, out.HasDelay = e.GetDelay(), true
	}
	return out
}

func tripRel(r gtfsrt.TripDescriptor_ScheduleRelationship) TripRelationship {
	switch r {
	case gtfsrt.TripDescriptor_ADDED:
		return TripAdded
	case gtfsrt.TripDescriptor_UNSCHEDULED:
		return TripUnscheduled
	case gtfsrt.TripDescriptor_CANCELED:
		return TripCanceled
	case gtfsrt.TripDescriptor_REPLACEMENT:
		return TripReplacement
	case gtfsrt.TripDescriptor_DUPLICATED:
		return TripDuplicated
	case 7: // DELETED: newer than the bindings, whose enum keeps the value
		return TripDeleted
	case 8: // NEW: idem
		return TripNew
	}
	return TripScheduled
}

// parseDate parses YYYYMMDD to a day number.
func parseDate(s string) (int32, bool) {
	t, err := time.Parse("20060102", s)
	if err != nil {
		return 0, false
	}
	return gtfs.DayNumber(t.Year(), int(t.Month()), t.Day()), true
}

// parseClock parses a GTFS time HH:MM:SS (hours may exceed 24).
func parseClock(s string) (int32, bool) {
	var h, m, sec int32
	parts := [3]*int32{&h, &m, &sec}
	i, n := 0, 0
	for j := 0; j <= len(s); j++ {
		if j == len(s) || s[j] == ':' {
			if n == 0 || i > 2 {
				return 0, false
			}
			i++
			n = 0
			continue
		}
		c := s[j]
		if c < '0' || c > '9' || n >= 3 || i > 2 {
			return 0, false
		}
		*parts[i] = *parts[i]*10 + int32(c-'0')
		n++
	}
	if i != 3 || m > 59 || sec > 59 {
		return 0, false
	}
	return h*3600 + m*60 + sec, true
}

// unknownVarint is the last varint field num among raw unknown fields.
func unknownVarint(raw []byte, num protowire.Number) (uint64, bool) {
	var out uint64
	found := false
	walkUnknown(raw, func(n protowire.Number, t protowire.Type, b []byte) {
		if n == num && t == protowire.VarintType {
			if v, m := protowire.ConsumeVarint(b); m > 0 {
				out, found = v, true
			}
		}
	})
	return out, found
}

// unknownString is the last bytes field num among raw unknown fields.
func unknownString(raw []byte, num protowire.Number) (string, bool) {
	var out string
	found := false
	walkUnknown(raw, func(n protowire.Number, t protowire.Type, b []byte) {
		if n == num && t == protowire.BytesType {
			if v, m := protowire.ConsumeBytes(b); m >= 0 {
				out, found = string(v), true
			}
		}
	})
	return out, found
}

// walkUnknown calls f with each field's number, type and value bytes;
// malformed input ends the walk.
func walkUnknown(raw []byte, f func(protowire.Number, protowire.Type, []byte)) {
	for len(raw) > 0 {
		n, t, m := protowire.ConsumeTag(raw)
		if m < 0 {
			return
		}
		raw = raw[m:]
		l := protowire.ConsumeFieldValue(n, t, raw)
		if l < 0 {
			return
		}
		f(n, t, raw[:l])
		raw = raw[l:]
	}
}

// carryCanceled adds to s (not yet shared) the runs prev added that s
// cancels (a CANCELED update with the same trip id and start date, or
// without one) and no longer describes.
func (s *Snapshot) carryCanceled(prev *Snapshot) {
	if prev == nil || len(prev.Extra) == 0 {
		return
	}
	type runKey struct {
		id  string
		day int32
	}
	carried := map[runKey]bool{}
	for _, old := range prev.Extra {
		id := old.TripID
		if old.Relationship == TripDuplicated && old.NewTripID != "" {
			id = old.NewTripID
		}
		canceled, described := false, false
		for _, u := range s.Trips[id] {
			if u.StartDate >= 0 && old.StartDate >= 0 && u.StartDate != old.StartDate {
				continue
			}
			switch {
			case u.Relationship == TripCanceled || u.Relationship == TripDeleted:
				canceled = true
			case u.Relationship.Extra():
				described = true
			}
		}
		if canceled && !described && !carried[runKey{id, old.StartDate}] {
			carried[runKey{id, old.StartDate}] = true
			c := *old
			c.CanceledLater = true
			s.Extra = append(s.Extra, &c)
		}
	}
}
