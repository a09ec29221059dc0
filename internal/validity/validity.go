package validity

import (
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/apperr"
)

// Kind is a product's duration_definition.
type Kind string

// The duration definitions the interface names.
const (
	DurationInMinutes Kind = "duration_in_minutes"
	CalendarMonth     Kind = "calendar_month"
)

// TicketTypeDay is the ticket_type of day passes.
const TicketTypeDay = "day"

// ServiceDayEndHour is the local hour on the day after the start at which a
// day pass ends (German day tickets: "bis 3 Uhr des Folgetages").
const ServiceDayEndHour = 3

// DefaultHorizon is how long after the order a duration ticket may start when
// the product has no validity_in_minutes.
const DefaultHorizon = 30 * 24 * time.Hour

// Definition is how long a product's tickets are valid, derived from the
// product's duration_definition, duration_in_minutes, validity_in_minutes and
// ticket_type by FromProduct.
type Definition struct {
	Kind     Kind
	Duration time.Duration // ticket length for DurationInMinutes; zero for months and day passes
	DayPass  bool          // valid to the end of the service day
	Horizon  time.Duration // latest start after the order, for DurationInMinutes
}

// FromProduct builds a Definition from a product's fields and rejects
// inconsistent product data with an apperr.Invalid error (catalog import
// calls it, so a bad product never reaches activation).
func FromProduct(durationDefinition string, durationInMinutes, validityInMinutes *int, ticketType string) (Definition, error) {
	const op = "validity.FromProduct"
	bad := func(msg string) (Definition, error) {
		return Definition{}, apperr.E(op, apperr.Invalid, CodeInvalidProductDuration, msg)
	}
	switch Kind(durationDefinition) {
	case CalendarMonth:
		if durationInMinutes != nil || validityInMinutes != nil {
			return bad("calendar_month products must have null duration_in_minutes and validity_in_minutes")
		}
		if ticketType == TicketTypeDay {
			return bad("a day pass cannot have duration_definition calendar_month")
		}
		return Definition{Kind: CalendarMonth}, nil
	case DurationInMinutes:
		d := Definition{Kind: DurationInMinutes, Horizon: DefaultHorizon, DayPass: ticketType == TicketTypeDay}
		if validityInMinutes != nil {
			if *validityInMinutes <= 0 {
				return bad("validity_in_minutes must be positive")
			}
			d.Horizon = time.Duration(*validityInMinutes) * time.Minute
		}
		if d.DayPass {
			return d, nil
		}
		if durationInMinutes == nil || *durationInMinutes <= 0 {
			return bad("duration_in_minutes must be a positive number of minutes")
		}
		d.Duration = time.Duration(*durationInMinutes) * time.Minute
		return d, nil
	default:
		return bad(fmt.Sprintf("unknown duration_definition %q", durationDefinition))
	}
}

// Window is the validity of a ticket of def that starts at start: from is
// start (whole seconds, UTC) or, for calendar_month, the first instant of the
// month; until is the inclusive last second.
func Window(def Definition, start time.Time, loc *time.Location) (from, until time.Time) {
	start = start.UTC().Truncate(time.Second)
	switch {
	case def.Kind == CalendarMonth:
		return MonthWindow(start, loc)
	case def.DayPass:
		return start, ServiceDayEnd(start, loc)
	default:
		return start, start.Add(def.Duration - time.Second)
	}
}

// MonthWindow is the calendar month of t in loc: its first instant and its
// last second, both in UTC.
func MonthWindow(t time.Time, loc *time.Location) (from, until time.Time) {
	l := t.In(loc)
	first := time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
	next := time.Date(l.Year(), l.Month()+1, 1, 0, 0, 0, 0, loc)
	return first.UTC(), next.Add(-time.Second).UTC()
}

// ServiceDayEnd is the last second of a day pass started at t: 02:59:59 local
// time on the calendar day after t's local day.
func ServiceDayEnd(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	end := time.Date(l.Year(), l.Month(), l.Day()+1, ServiceDayEndHour, 0, 0, 0, loc)
	return end.Add(-time.Second).UTC()
}

// Contains reports whether t lies in the window [from, until], where until is
// the inclusive last second (any fraction of that second is still valid).
func Contains(from, until, t time.Time) bool {
	return !t.Before(from) && t.Before(until.Add(time.Second))
}
