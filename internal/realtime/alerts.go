package realtime

import (
	"strings"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"
)

// Translation is one language version of an alert text ("" = unspecified).
type Translation struct {
	Language string
	Text     string
}

// Period is an alert's active period in Unix seconds, both ends included;
// 0 means open (GTFS-RT TimeRange without start or end).
type Period struct {
	Start, End int64
}

// Contains reports whether the whole second t lies in the period.
func (p Period) Contains(t int64) bool {
	return (p.Start == 0 || t >= p.Start) && (p.End == 0 || t <= p.End)
}

// Selector is one informed entity: every field set must match (GTFS-RT
// EntitySelector). RouteType and DirectionID are -1 when absent,
// StartDate -1 (a day number otherwise).
type Selector struct {
	AgencyID    string
	RouteID     string
	RouteType   int32
	StopID      string
	TripID      string
	DirectionID int32
	StartDate   int32
}

// Alert is one GTFS-Realtime service alert.
type Alert struct {
	ID          string
	Active      []Period // empty: always active
	Entities    []Selector
	Cause       string // lower case GTFS-RT Cause ("unknown_cause", "strike", …)
	Effect      string // lower case GTFS-RT Effect ("no_service", "detour", …)
	Header      []Translation
	Description []Translation
	URL         []Translation
}

// ActiveAt reports whether the alert is active at Unix second t.
func (a *Alert) ActiveAt(t int64) bool {
	if len(a.Active) == 0 {
		return true
	}
	for _, p := range a.Active {
		if p.Contains(t) {
			return true
		}
	}
	return false
}

// parseAlert converts one Alert entity; it returns nil for an alert
// without informed entities (it applies to nothing).
func parseAlert(id string, a *gtfsrt.Alert) *Alert {
	out := &Alert{ID: id,
		Cause:       strings.ToLower(a.GetCause().String()),
		Effect:      strings.ToLower(a.GetEffect().String()),
		Header:      translations(a.GetHeaderText()),
		Description: translations(a.GetDescriptionText()),
		URL:         translations(a.GetUrl()),
	}
	for _, r := range a.GetActivePeriod() {
		out.Active = append(out.Active, Period{Start: int64(r.GetStart()), End: int64(r.GetEnd())})
	}
	for _, e := range a.GetInformedEntity() {
		s := Selector{AgencyID: e.GetAgencyId(), RouteID: e.GetRouteId(), StopID: e.GetStopId(), RouteType: -1, DirectionID: -1, StartDate: -1}
		if e.RouteType != nil {
			s.RouteType = e.GetRouteType()
		}
		if td := e.GetTrip(); td != nil {
			s.TripID = td.GetTripId()
			if s.RouteID == "" {
				s.RouteID = td.GetRouteId()
			}
			if td.DirectionId != nil {
				s.DirectionID = int32(td.GetDirectionId())
			}
			if day, ok := parseDate(td.GetStartDate()); ok {
				s.StartDate = day
			}
		}
		if s == (Selector{RouteType: -1, DirectionID: -1, StartDate: -1}) {
			continue // selects nothing
		}
		out.Entities = append(out.Entities, s)
	}
	if len(out.Entities) == 0 {
		return nil
	}
	return out
}

func translations(ts *gtfsrt.TranslatedString) []Translation {
	var out []Translation
	for _, t := range ts.GetTranslation() {
		if t.GetText() != "" {
			out = append(out, Translation{Language: t.GetLanguage(), Text: t.GetText()})
		}
	}
	return out
}
