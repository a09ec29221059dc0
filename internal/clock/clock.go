// Package clock injects time. Production code takes a Clock and calls Now once
// per use case; tests use clocktest.Fixed to stand on any instant. Calendar rules
// (months, the 10th, service days) are computed in the Berlin location.
package clock

import (
	"time"
)

// Clock returns the current instant.
type Clock interface{ Now() time.Time }

// System is the real clock.
type System struct{}

func (System) Now() time.Time { return time.Now().UTC() }

// Berlin is the location calendar rules use (Europe/Berlin). cmd/farebox
// imports time/tzdata so it loads in a bare container.
var Berlin = mustLoad("Europe/Berlin")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic("clock: cannot load " + name + ": " + err.Error())
	}
	return loc
}

// MonthStart is the first instant of the calendar month containing t in loc.
func MonthStart(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
}

// NextMonthStart is the first instant of the month after the one containing t in loc.
func NextMonthStart(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month()+1, 1, 0, 0, 0, 0, loc)
}

// Timestamp formats t as the service sends times: RFC 3339, UTC, whole seconds.
func Timestamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// ParseTimestamp accepts RFC 3339 with Z, +hh:mm or +hhmm, with or without fractions.
func ParseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil {
		return t.UTC(), nil
	}
	if t2, err2 := time.Parse("2006-01-02T15:04:05.999999999Z0700", s); err2 == nil {
		return t2.UTC(), nil
	}
	return time.Time{}, err
}
