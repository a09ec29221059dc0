package validity

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/testtool"
)

var ts = testtool.Time

func ip(n int) *int { return &n }

func TestFromProduct(t *testing.T) {
	cases := []struct {
		name     string
		def      string
		dur, val *int
		typ      string
		want     Definition
		wantErr  bool
	}{
		{"single", "duration_in_minutes", ip(90), nil, "single", Definition{Kind: DurationInMinutes, Duration: 90 * time.Minute, Horizon: DefaultHorizon}, false},
		{"single with horizon", "duration_in_minutes", ip(60), ip(1440), "single", Definition{Kind: DurationInMinutes, Duration: time.Hour, Horizon: 24 * time.Hour}, false},
		{"day pass", "duration_in_minutes", ip(1440), nil, "day", Definition{Kind: DurationInMinutes, DayPass: true, Horizon: DefaultHorizon}, false},
		{"day pass without duration", "duration_in_minutes", nil, nil, "day", Definition{Kind: DurationInMinutes, DayPass: true, Horizon: DefaultHorizon}, false},
		{"month", "calendar_month", nil, nil, "month", Definition{Kind: CalendarMonth}, false},
		{"month with duration", "calendar_month", ip(10), nil, "month", Definition{}, true},
		{"month with validity", "calendar_month", nil, ip(10), "month", Definition{}, true},
		{"month day pass", "calendar_month", nil, nil, "day", Definition{}, true},
		{"single without duration", "duration_in_minutes", nil, nil, "single", Definition{}, true},
		{"single zero duration", "duration_in_minutes", ip(0), nil, "single", Definition{}, true},
		{"negative validity", "duration_in_minutes", ip(90), ip(-1), "single", Definition{}, true},
		{"unknown", "weekly", nil, nil, "single", Definition{}, true},
	}
	for _, c := range cases {
		got, err := FromProduct(c.def, c.dur, c.val, c.typ)
		if c.wantErr {
			if apperr.KindOf(err) != apperr.Invalid || apperr.As(err).Code != "invalid_product_duration" {
				t.Errorf("%s: err = %v, want Invalid invalid_product_duration", c.name, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestWindow(t *testing.T) {
	single := Definition{Kind: DurationInMinutes, Duration: 90 * time.Minute, Horizon: DefaultHorizon}
	day := Definition{Kind: DurationInMinutes, DayPass: true, Horizon: DefaultHorizon}
	month := Definition{Kind: CalendarMonth}
	cases := []struct {
		name        string
		def         Definition
		start       string
		from, until string
	}{
		{"single", single, "2026-03-10T10:00:00Z", "2026-03-10T10:00:00Z", "2026-03-10T11:29:59Z"},
		{"single fractions dropped", single, "2026-03-10T10:00:00.75Z", "2026-03-10T10:00:00Z", "2026-03-10T11:29:59Z"},
		{"single offset input", single, "2026-03-10T11:00:00+01:00", "2026-03-10T10:00:00Z", "2026-03-10T11:29:59Z"},
		// Day pass: until 03:00 local of the next calendar day, inclusive last second.
		{"day winter", day, "2026-01-15T08:00:00Z", "2026-01-15T08:00:00Z", "2026-01-16T01:59:59Z"},
		{"day summer", day, "2026-07-15T08:00:00Z", "2026-07-15T08:00:00Z", "2026-07-16T00:59:59Z"},
		{"day after local midnight", day, "2026-01-15T23:30:00Z", "2026-01-15T23:30:00Z", "2026-01-17T01:59:59Z"},
		{"day before local midnight", day, "2026-01-15T22:59:59Z", "2026-01-15T22:59:59Z", "2026-01-16T01:59:59Z"},
		// 29 March 2026: clocks jump 02:00 CET -> 03:00 CEST; 03:00 CEST is 01:00Z.
		{"day into spring DST", day, "2026-03-28T12:00:00Z", "2026-03-28T12:00:00Z", "2026-03-29T00:59:59Z"},
		// 25 October 2026: 03:00 CEST -> 02:00 CET; 03:00 CET on the 25th is 02:00Z.
		{"day into autumn DST", day, "2026-10-24T12:00:00Z", "2026-10-24T12:00:00Z", "2026-10-25T01:59:59Z"},
		{"day on new year's eve", day, "2026-12-31T20:00:00Z", "2026-12-31T20:00:00Z", "2027-01-01T01:59:59Z"},
		{"month january", month, "2026-01-15T12:00:00Z", "2025-12-31T23:00:00Z", "2026-01-31T22:59:59Z"},
		{"month june", month, "2025-06-30T21:59:59Z", "2025-05-31T22:00:00Z", "2025-06-30T21:59:59Z"},
		{"month june first instant", month, "2025-05-31T22:00:00Z", "2025-05-31T22:00:00Z", "2025-06-30T21:59:59Z"},
		{"month march dst", month, "2026-03-31T12:00:00Z", "2026-02-28T23:00:00Z", "2026-03-31T21:59:59Z"},
		{"month october dst", month, "2026-10-01T00:00:00Z", "2026-09-30T22:00:00Z", "2026-10-31T22:59:59Z"},
		{"month leap february", month, "2028-02-29T12:00:00Z", "2028-01-31T23:00:00Z", "2028-02-29T22:59:59Z"},
		{"month february", month, "2027-02-10T12:00:00Z", "2027-01-31T23:00:00Z", "2027-02-28T22:59:59Z"},
		{"month december", month, "2026-12-31T22:59:59Z", "2026-11-30T23:00:00Z", "2026-12-31T22:59:59Z"},
		{"month new year in berlin", month, "2026-12-31T23:00:00Z", "2026-12-31T23:00:00Z", "2027-01-31T22:59:59Z"},
	}
	for _, c := range cases {
		from, until := Window(c.def, ts(c.start), clock.Berlin)
		if clock.Timestamp(from) != c.from || clock.Timestamp(until) != c.until {
			t.Errorf("%s: Window = %s .. %s; want %s .. %s", c.name, clock.Timestamp(from), clock.Timestamp(until), c.from, c.until)
		}
		if from.Location() != time.UTC || until.Location() != time.UTC {
			t.Errorf("%s: window not in UTC", c.name)
		}
	}
}

func TestContains(t *testing.T) {
	from, until := ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:59:59Z")
	cases := []struct {
		at   time.Time
		want bool
	}{
		{from.Add(-time.Nanosecond), false},
		{from, true},
		{until, true},
		{until.Add(999 * time.Millisecond), true},
		{until.Add(time.Second), false},
	}
	for _, c := range cases {
		if got := Contains(from, until, c.at); got != c.want {
			t.Errorf("Contains(%v) = %v, want %v", c.at, got, c.want)
		}
	}
}

// Month windows tile time: each starts one second after the previous ends,
// and every instant belongs to the window computed from it.
func TestMonthWindowsTile(t *testing.T) {
	from, until := MonthWindow(ts("1999-12-15T00:00:00Z"), clock.Berlin)
	for i := 0; i < 12*40; i++ {
		nf, nu := MonthWindow(until.Add(time.Second), clock.Berlin)
		if !nf.Equal(until.Add(time.Second)) {
			t.Fatalf("gap or overlap after %v: next starts %v", until, nf)
		}
		if l := nf.In(clock.Berlin); l.Day() != 1 || l.Hour() != 0 || l.Minute() != 0 || l.Second() != 0 {
			t.Fatalf("month does not start at local midnight on the 1st: %v", l)
		}
		if f, u := MonthWindow(from, clock.Berlin); !f.Equal(from) || !u.Equal(until) {
			t.Fatalf("window of its own start differs: %v..%v vs %v..%v", f, u, from, until)
		}
		from, until = nf, nu
	}
}

func BenchmarkWindowMonth(b *testing.B) {
	def := Definition{Kind: CalendarMonth}
	start := ts("2026-03-15T10:00:00Z")
	for b.Loop() {
		Window(def, start, clock.Berlin)
	}
}

func BenchmarkWindowDayPass(b *testing.B) {
	def := Definition{Kind: DurationInMinutes, DayPass: true}
	start := ts("2026-03-15T10:00:00Z")
	for b.Loop() {
		Window(def, start, clock.Berlin)
	}
}
