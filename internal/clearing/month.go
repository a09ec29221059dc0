package clearing

import (
	"fmt"
	"time"
)

// Month is a reporting month (a calendar month in the service's time
// zone, Europe/Berlin for the national ticket).
type Month struct {
	Year  int
	Month time.Month
}

// First is the first reportable month: the national ticket was first
// valid in May 2023.
var First = Month{2023, time.May}

// ParseMonth reads "YYYY-MM" (exactly: four digits, a dash, two digits).
func ParseMonth(s string) (Month, error) {
	if len(s) != 7 || s[4] != '-' {
		return Month{}, fmt.Errorf("month %q: want YYYY-MM", clip(s))
	}
	y, m := 0, 0
	for i, c := range []byte(s) {
		if i == 4 {
			continue
		}
		if c < '0' || c > '9' {
			return Month{}, fmt.Errorf("month %q: want YYYY-MM", clip(s))
		}
		if i < 4 {
			y = y*10 + int(c-'0')
		} else {
			m = m*10 + int(c-'0')
		}
	}
	if m < 1 || m > 12 {
		return Month{}, fmt.Errorf("month %q: the month must be 01 to 12", s)
	}
	mo := Month{y, time.Month(m)}
	if mo.Before(First) {
		return Month{}, fmt.Errorf("month %q: the national ticket is reported from %s on", s, First)
	}
	return mo, nil
}

// MonthOf is the month t lies in, in loc.
func MonthOf(t time.Time, loc *time.Location) Month {
	t = t.In(loc)
	return Month{t.Year(), t.Month()}
}

func (m Month) String() string { return fmt.Sprintf("%04d-%02d", m.Year, int(m.Month)) }

// Start is the month's first instant in loc.
func (m Month) Start(loc *time.Location) time.Time {
	return time.Date(m.Year, m.Month, 1, 0, 0, 0, 0, loc)
}

// End is the next month's first instant in loc.
func (m Month) End(loc *time.Location) time.Time { return m.Add(1).Start(loc) }

// Add is the month n months later (earlier for a negative n).
func (m Month) Add(n int) Month {
	t := time.Date(m.Year, m.Month+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
	return Month{t.Year(), t.Month()}
}

// Before reports whether m is earlier than o.
func (m Month) Before(o Month) bool {
	return m.Year < o.Year || (m.Year == o.Year && m.Month < o.Month)
}
