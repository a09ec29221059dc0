package gtfs

import (
	"fmt"
	"time"
)

// MaxProblems bounds the problems kept per feed.
const MaxProblems = 1000

// Problem is one validation finding: the file, the 1-based line and what is wrong.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message) }

type problems struct {
	list  []Problem
	count int
}

func (p *problems) add(file string, line int, msg string) {
	p.count++
	if len(p.list) < MaxProblems {
		p.list = append(p.list, Problem{File: file, Line: line, Message: msg})
	}
}

// Location types of stops.txt.
const (
	StopPlatform     uint8 = 0 // a stop or platform (empty location_type)
	StopStation      uint8 = 1
	StopEntrance     uint8 = 2
	StopNode         uint8 = 3
	StopBoardingArea uint8 = 4
)

// Flags of a stop time.
const (
	NoPickup  uint8 = 1 << iota // pickup_type 1: no boarding here
	NoDropOff                   // drop_off_type 1: no alighting here
	Estimated                   // the time was interpolated
)

// Agency is one row of agency.txt.
type Agency struct {
	ID, Name, URL, Timezone string
}

// Attribution is one row of attributions.txt (or the feed publisher).
type Attribution struct {
	Organization string
	URL          string
	Role         string // "producer", "operator", "authority" or "publisher"
}

// Route is one row of routes.txt.
type Route struct {
	ID        string
	Agency    int32 // index into Feed.Agencies
	ShortName string
	LongName  string
	Type      int32
	Color     string // route_color as six upper-case hex digits, "" when absent or invalid
}

// Stops holds stops.txt as parallel columns indexed by stop number.
type Stops struct {
	ID       []string
	Code     []string
	Name     []string
	Platform []string // platform_code, "" when absent
	Lat, Lon []float64
	Type     []uint8
	Parent   []int32 // index of parent_station or -1
}

// Len is the number of stops.
func (s *Stops) Len() int { return len(s.ID) }

// Trips holds trips.txt as parallel columns indexed by trip number.
// The stop times of trip t are StopTimes[First[t]:First[t+1]] in stop_sequence order.
type Trips struct {
	ID        []string
	Route     []int32
	Service   []int32
	Headsign  []string
	ShortName []string
	First     []int32 // len = trips+1
	// Shape is the trip's shape (index into Feed.Shapes) or -1; nil when
	// the feed has no shapes.txt.
	Shape []int32
}

// Len is the number of trips.
func (t *Trips) Len() int { return len(t.ID) }

// StopTimes holds stop_times.txt as parallel columns grouped by trip.
// Times are seconds relative to noon minus 12 h of the service day.
type StopTimes struct {
	Stop      []int32
	Arrival   []int32
	Departure []int32
	Sequence  []uint32
	Flags     []uint8
	Headsign  []uint32 // index into Feed.Strings (0 = none); nil when the feed has none
	Track     []uint32 // index into Feed.Strings (0 = none); nil when the feed has none
}

// Shapes holds shapes.txt: the points of shape i are
// Lat/Lon[First[i]:First[i+1]] in shape_pt_sequence order, in units of
// 1e-7 degrees (about a centimetre; half the memory of float64 columns).
type Shapes struct {
	ID       []string
	First    []int32 // len = shapes+1
	Lat, Lon []int32
}

// Len is the number of shapes.
func (s *Shapes) Len() int { return len(s.ID) }

// Len is the number of stop times.
func (s *StopTimes) Len() int { return len(s.Stop) }

// Service is one service_id with its calendar and exceptions. Days are day
// numbers (days since 1970-01-01 of the civil service date).
type Service struct {
	ID       string
	Weekdays uint8 // bit 0 = Monday ... bit 6 = Sunday
	Start    int32
	End      int32
	Added    []int32
	Removed  []int32
}

// Frequency is one row of frequencies.txt: the trip is a template repeated
// every Headway seconds from Start while the start is before End.
type Frequency struct {
	Trip       int32
	Start, End int32
	Headway    int32
	ExactTimes bool
}

// Feed is one parsed GTFS feed. It is immutable after Parse or Decode.
type Feed struct {
	Timezone     string
	Agencies     []Agency
	Attributions []Attribution
	Version      string // feed_info.feed_version
	Stops        Stops
	Routes       []Route
	Trips        Trips
	StopTimes    StopTimes
	Shapes       Shapes
	Services     []Service
	Frequencies  []Frequency // sorted by trip, then start
	Strings      []string    // interned headsigns and tracks; Strings[0] == ""
	MaxTime      int32       // largest stop time in seconds
	MinDay       int32       // first day any service runs (day number)
	MaxDay       int32       // last day any service runs
	Problems     []Problem
	ProblemCount int
}

// Location loads the feed's time zone.
func (f *Feed) Location() (*time.Location, error) { return time.LoadLocation(f.Timezone) }

// DayNumber converts a civil date to days since 1970-01-01.
func DayNumber(y, m, d int) int32 {
	return int32(time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// DayDate converts a day number back to the civil date.
func DayDate(day int32) (y int, m time.Month, d int) {
	return time.Unix(int64(day)*86400, 0).UTC().Date()
}

// Weekday of a day number: 0 = Monday ... 6 = Sunday.
func Weekday(day int32) int { return int((int64(day)%7 + 7 + 3) % 7) }

// ServiceBase is the instant a GTFS time of 0 means on the service day: local
// noon minus 12 hours in loc (which differs from midnight on DST days).
func ServiceBase(day int32, loc *time.Location) time.Time {
	y, m, d := DayDate(day)
	return time.Date(y, m, d, 12, 0, 0, 0, loc).Add(-12 * time.Hour)
}

// Active reports whether service s runs on day.
func (s *Service) Active(day int32) bool {
	for _, d := range s.Removed {
		if d == day {
			return false
		}
	}
	for _, d := range s.Added {
		if d == day {
			return true
		}
	}
	return s.Weekdays&(1<<Weekday(day)) != 0 && day >= s.Start && day <= s.End
}
