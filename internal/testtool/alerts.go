package testtool

import (
	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"
	"google.golang.org/protobuf/proto"
)

// Test service alerts (GTFS-Realtime Alerts) for departure and API tests.
const (
	// CaltrainRTHeader is the header time of caltrain-2023-trip-updates.pb
	// (2023-11-07 17:05:34 PST).
	CaltrainRTHeader = 1699405534
	// CaltrainAgencyAlertStart (17:00:30 PST) starts the agency-wide test
	// alert within the minute of the 17:00 reference board.
	CaltrainAgencyAlertStart = 1699405230
)

func translated(pairs ...string) *gtfsrt.TranslatedString {
	ts := &gtfsrt.TranslatedString{}
	for i := 0; i+1 < len(pairs); i += 2 {
		tr := &gtfsrt.TranslatedString_Translation{Text: proto.String(pairs[i+1])}
		if pairs[i] != "" {
			tr.Language = proto.String(pairs[i])
		}
		ts.Translation = append(ts.Translation, tr)
	}
	return ts
}

// AlertEntity is a GTFS-RT Alert entity with English and Spanish texts.
func AlertEntity(id string, periods [][2]uint64, cause gtfsrt.Alert_Cause, effect gtfsrt.Alert_Effect, sels ...*gtfsrt.EntitySelector) *gtfsrt.FeedEntity {
	a := &gtfsrt.Alert{Cause: cause.Enum(), Effect: effect.Enum(), InformedEntity: sels,
		HeaderText:      translated("en", "Header "+id, "es", "Encabezado "+id),
		DescriptionText: translated("en", "Description of "+id+" \"quoted\" <b>&</b>", "es", "Descripción de "+id),
		Url:             translated("", "https://www.caltrain.com/alerts/"+id)}
	for _, p := range periods {
		r := &gtfsrt.TimeRange{}
		if p[0] != 0 {
			r.Start = proto.Uint64(p[0])
		}
		if p[1] != 0 {
			r.End = proto.Uint64(p[1])
		}
		a.ActivePeriod = append(a.ActivePeriod, r)
	}
	return &gtfsrt.FeedEntity{Id: proto.String(id), Alert: a}
}

// AlertSelector selects an agency, route and/or stop ("" = unset).
func AlertSelector(agency, route, stop string) *gtfsrt.EntitySelector {
	s := &gtfsrt.EntitySelector{}
	if agency != "" {
		s.AgencyId = proto.String(agency)
	}
	if route != "" {
		s.RouteId = proto.String(route)
	}
	if stop != "" {
		s.StopId = proto.String(stop)
	}
	return s
}

// CaltrainAlerts is the test alerts feed over the real Caltrain feed (ids
// from its stops.txt, routes.txt, trips.txt and agency.txt) with BART ids
// that must not leak into Caltrain, in this order (views keep it). Header
// time: that of caltrain-2023-trip-updates.pb.
func CaltrainAlerts() *gtfsrt.FeedMessage {
	trip412 := &gtfsrt.EntitySelector{Trip: &gtfsrt.TripDescriptor{TripId: proto.String("412"), StartDate: proto.String("20231107")}}
	trip412Wed := &gtfsrt.EntitySelector{Trip: &gtfsrt.TripDescriptor{TripId: proto.String("412"), StartDate: proto.String("20231108")}}
	rail := &gtfsrt.EntitySelector{RouteType: proto.Int32(2), StopId: proto.String("san_francisco")}
	return &gtfsrt.FeedMessage{
		Header: &gtfsrt.FeedHeader{GtfsRealtimeVersion: proto.String("2.0"), Incrementality: gtfsrt.FeedHeader_FULL_DATASET.Enum(), Timestamp: proto.Uint64(CaltrainRTHeader)},
		Entity: []*gtfsrt.FeedEntity{
			AlertEntity("route-L4", [][2]uint64{{1699400000, 1699500000}}, gtfsrt.Alert_CONSTRUCTION, gtfsrt.Alert_REDUCED_SERVICE, AlertSelector("", "L4", "")),
			AlertEntity("station-22nd", nil, gtfsrt.Alert_MAINTENANCE, gtfsrt.Alert_STOP_MOVED, AlertSelector("", "", "22nd_street")),
			AlertEntity("platform-70021", nil, gtfsrt.Alert_OTHER_CAUSE, gtfsrt.Alert_DETOUR, AlertSelector("", "", "70021")),
			AlertEntity("trip-412", nil, gtfsrt.Alert_TECHNICAL_PROBLEM, gtfsrt.Alert_SIGNIFICANT_DELAYS, trip412),
			AlertEntity("trip-412-wednesday", nil, gtfsrt.Alert_TECHNICAL_PROBLEM, gtfsrt.Alert_SIGNIFICANT_DELAYS, trip412Wed),
			AlertEntity("agency-past", [][2]uint64{{1699000000, 1699300000}}, gtfsrt.Alert_STRIKE, gtfsrt.Alert_NO_SERVICE, AlertSelector("CT", "", "")),
			AlertEntity("agency-from-17:00:30", [][2]uint64{{1699000000, 1699100000}, {CaltrainAgencyAlertStart, 0}}, gtfsrt.Alert_WEATHER, gtfsrt.Alert_OTHER_EFFECT, AlertSelector("CT", "", "")),
			AlertEntity("bart-yellow", nil, gtfsrt.Alert_ACCIDENT, gtfsrt.Alert_NO_SERVICE, AlertSelector("BART", "1", ""), AlertSelector("", "", "MONT")),
			AlertEntity("rail-at-sf", nil, gtfsrt.Alert_HOLIDAY, gtfsrt.Alert_MODIFIED_SERVICE, rail),
			AlertEntity("no-entities", nil, gtfsrt.Alert_HOLIDAY, gtfsrt.Alert_MODIFIED_SERVICE),
		},
	}
}
