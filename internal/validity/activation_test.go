package validity

import (
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
)

func TestActivationWindow(t *testing.T) {
	single := Definition{Kind: DurationInMinutes, Duration: 90 * time.Minute, Horizon: DefaultHorizon}
	short := Definition{Kind: DurationInMinutes, Duration: 90 * time.Minute, Horizon: 24 * time.Hour}
	month := Definition{Kind: CalendarMonth}
	cases := []struct {
		name                    string
		def                     Definition
		ordered                 string
		earliest, latest, until string
	}{
		{"single", single, "2026-03-10T10:00:00.5Z", "2026-03-10T10:00:00Z", "2026-04-09T09:59:59Z", "2026-03-13T10:00:00Z"},
		{"single short horizon", short, "2026-03-10T10:00:00Z", "2026-03-10T10:00:00Z", "2026-03-11T09:59:59Z", "2026-03-13T10:00:00Z"},
		{"month mid january", month, "2026-01-20T10:00:00Z", "2025-12-31T23:00:00Z", "2026-02-28T22:59:59Z", "2026-01-23T10:00:00Z"},
		{"month december", month, "2026-12-31T22:30:00Z", "2026-11-30T23:00:00Z", "2027-01-31T22:59:59Z", "2027-01-03T22:30:00Z"},
		{"month berlin january already", month, "2026-12-31T23:30:00Z", "2026-12-31T23:00:00Z", "2027-02-28T22:59:59Z", "2027-01-03T23:30:00Z"},
		{"month march into april dst", month, "2026-03-05T10:00:00Z", "2026-02-28T23:00:00Z", "2026-04-30T21:59:59Z", "2026-03-08T10:00:00Z"},
	}
	for _, c := range cases {
		w := Activation(c.def, ts(c.ordered), clock.Berlin)
		got := [3]string{clock.Timestamp(w.Earliest), clock.Timestamp(w.Latest), clock.Timestamp(w.ActivatableUntil)}
		if got != [3]string{c.earliest, c.latest, c.until} {
			t.Errorf("%s: Activation = %v; want %v", c.name, got, [3]string{c.earliest, c.latest, c.until})
		}
	}
}

func TestCheck72h(t *testing.T) {
	w := Activation(Definition{Kind: CalendarMonth}, ts("2026-03-10T10:00:00Z"), clock.Berlin)
	if err := w.Check(ts("2026-03-13T10:00:00Z"), true); err != nil {
		t.Errorf("at the deadline: %v", err)
	}
	if err := w.Check(ts("2026-03-20T10:00:00Z"), false); err != nil {
		t.Errorf("not enforced before v8: %v", err)
	}
	err := w.Check(ts("2026-03-13T10:00:00.001Z"), true)
	e := apperr.As(err)
	if e == nil || e.Kind != apperr.Unprocessable || e.Code != CodeWindowExpired {
		t.Fatalf("after the deadline: %v", err)
	}
	want := "Ticket cannot be activated anymore. It must be activated within 3 days of order. It was activatable until 2026-03-13T10:00:00Z."
	if e.Msg != want {
		t.Errorf("message %q, want %q", e.Msg, want)
	}
}

func TestStart(t *testing.T) {
	single := Definition{Kind: DurationInMinutes, Duration: 90 * time.Minute, Horizon: 24 * time.Hour}
	month := Definition{Kind: CalendarMonth}
	ordered := ts("2026-01-20T10:00:00Z")
	z := time.Time{}
	cases := []struct {
		name                   string
		def                    Definition
		requested, now         time.Time
		start, from, until     string
		code, prefix, errField string
	}{
		{name: "single now", def: single, requested: z, now: ts("2026-01-20T10:05:00.9Z"),
			start: "2026-01-20T10:05:00Z", from: "2026-01-20T10:05:00Z", until: "2026-01-20T11:34:59Z"},
		{name: "single future start", def: single, requested: ts("2026-01-21T07:00:00Z"), now: ts("2026-01-20T10:05:00Z"),
			start: "2026-01-21T07:00:00Z", from: "2026-01-21T07:00:00Z", until: "2026-01-21T08:29:59Z"},
		{name: "single skewed phone moved to earliest", def: single, requested: ts("2026-01-20T09:56:00Z"), now: ts("2026-01-20T10:00:01Z"),
			start: "2026-01-20T10:00:00Z", from: "2026-01-20T10:00:00Z", until: "2026-01-20T11:29:59Z"},
		{name: "single before order", def: single, requested: ts("2026-01-20T09:54:59Z"), now: ts("2026-01-20T10:01:00Z"),
			code: CodeNotYet, prefix: "Ticket cannot be activated yet: the earliest activation start is 2026-01-20T10:00:00Z."},
		{name: "single at latest", def: single, requested: ts("2026-01-21T09:59:59Z"), now: ts("2026-01-20T10:01:00Z"),
			start: "2026-01-21T09:59:59Z", from: "2026-01-21T09:59:59Z", until: "2026-01-21T11:29:58Z"},
		{name: "single after latest", def: single, requested: ts("2026-01-21T10:00:00Z"), now: ts("2026-01-20T10:01:00Z"),
			code: CodeAnymore, prefix: "Ticket cannot be activated anymore: the latest activation start was 2026-01-21T09:59:59Z."},
		{name: "single too late by default", def: single, requested: z, now: ts("2026-01-21T10:00:00Z"),
			code: CodeAnymore, prefix: "Ticket cannot be activated anymore"},
		{name: "single already over", def: single, requested: ts("2026-01-20T10:00:00Z"), now: ts("2026-01-20T11:30:00Z"),
			code: CodeAnymore, prefix: "Ticket cannot be activated anymore: a ticket starting at 2026-01-20T10:00:00Z would have ended at 2026-01-20T11:29:59Z."},
		{name: "month default", def: month, requested: z, now: ts("2026-01-22T08:00:00Z"),
			start: "2026-01-22T08:00:00Z", from: "2025-12-31T23:00:00Z", until: "2026-01-31T22:59:59Z"},
		{name: "month next month iOS offset", def: month, requested: mustParse(t, "2026-02-01T00:00:00+0100"), now: ts("2026-01-22T08:00:00Z"),
			start: "2026-01-31T23:00:00Z", from: "2026-01-31T23:00:00Z", until: "2026-02-28T22:59:59Z"},
		{name: "month after next", def: month, requested: ts("2026-02-28T23:00:00Z"), now: ts("2026-01-22T08:00:00Z"),
			code: CodeAnymore, prefix: "Ticket cannot be activated anymore: the latest activation start was 2026-02-28T22:59:59Z."},
		{name: "month before order month", def: month, requested: ts("2025-12-20T08:00:00Z"), now: ts("2026-01-22T08:00:00Z"),
			code: CodeNotYet, prefix: "Ticket cannot be activated yet"},
		{name: "month past month", def: month, requested: ts("2026-01-25T08:00:00Z"), now: ts("2026-02-02T08:00:00Z"),
			code: CodeAnymore, prefix: "Ticket cannot be activated anymore: a ticket starting at 2026-01-25T08:00:00Z would have ended at 2026-01-31T22:59:59Z."},
	}
	for _, c := range cases {
		w := Activation(c.def, ordered, clock.Berlin)
		start, from, until, err := w.Start(c.def, c.requested, c.now, clock.Berlin)
		if c.code != "" {
			e := apperr.As(err)
			if e == nil || e.Kind != apperr.Unprocessable || e.Code != c.code || !strings.HasPrefix(e.Msg, c.prefix) {
				t.Errorf("%s: err = %#v, want %s with prefix %q", c.name, err, c.code, c.prefix)
				continue
			}
			if len(e.Details) != 1 || e.Details[0].Field != FieldStart {
				t.Errorf("%s: details %+v", c.name, e.Details)
			}
			if !start.IsZero() || !from.IsZero() || !until.IsZero() {
				t.Errorf("%s: times returned with an error", c.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: unexpected %v", c.name, err)
			continue
		}
		got := [3]string{clock.Timestamp(start), clock.Timestamp(from), clock.Timestamp(until)}
		if got != [3]string{c.start, c.from, c.until} {
			t.Errorf("%s: got %v; want %v", c.name, got, [3]string{c.start, c.from, c.until})
		}
	}
}

func mustParse(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := ParseStart(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseStart(t *testing.T) {
	cases := []struct{ in, want string }{
		{"2025-05-31T22:00:00Z", "2025-05-31T22:00:00Z"},
		{"2025-06-01T00:00:00+0200", "2025-05-31T22:00:00Z"},
		{"2025-06-01T00:00:00+02:00", "2025-05-31T22:00:00Z"},
		{"2025-06-01T00:00:00.123+02:00", "2025-05-31T22:00:00Z"},
		{"2025-05-31T22:00:00.5Z", "2025-05-31T22:00:00Z"},
	}
	for _, c := range cases {
		got, err := ParseStart(c.in)
		if err != nil || clock.Timestamp(got) != c.want {
			t.Errorf("ParseStart(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	if got, err := ParseStart(""); err != nil || !got.IsZero() {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"2025-06-01", "2025-06-01 00:00:00Z", "2025-13-01T00:00:00Z", "2025-06-01T00:00:00", "tomorrow", "2025-06-01T00:00:00+2"} {
		_, err := ParseStart(bad)
		e := apperr.As(err)
		if e == nil || e.Kind != apperr.Unprocessable || e.Code != CodeBadStart || e.Details[0].Field != FieldStart {
			t.Errorf("ParseStart(%q) = %v, want a 422 naming the field", bad, err)
		}
	}
}

// FuzzParseStart: client input never panics, and whatever parses lies in UTC
// and survives the start resolution without panicking either.
func FuzzParseStart(f *testing.F) {
	for _, s := range []string{"2025-05-31T22:00:00Z", "2025-06-01T00:00:00+0200", "2025-06-01T00:00:00.123456789-09:30", "", "x", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z"} {
		f.Add(s)
	}
	month := Definition{Kind: CalendarMonth}
	single := Definition{Kind: DurationInMinutes, Duration: time.Hour, Horizon: DefaultHorizon}
	ordered := ts("2026-01-20T10:00:00Z")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseStart(s)
		if err != nil {
			if apperr.KindOf(err) != apperr.Unprocessable {
				t.Fatalf("kind %v", apperr.KindOf(err))
			}
			return
		}
		if v.Location() != time.UTC {
			t.Fatalf("not UTC: %v", v)
		}
		for _, def := range []Definition{month, single} {
			w := Activation(def, ordered, clock.Berlin)
			start, from, until, err := w.Start(def, v, ordered.Add(time.Minute), clock.Berlin)
			if err == nil && (start.Before(w.Earliest) || start.After(w.Latest) || until.Before(from)) {
				t.Fatalf("accepted %v outside %+v (window %v..%v)", start, w, from, until)
			}
		}
	})
}

func BenchmarkStart(b *testing.B) {
	def := Definition{Kind: CalendarMonth}
	w := Activation(def, ts("2026-01-20T10:00:00Z"), clock.Berlin)
	now := ts("2026-01-22T08:00:00Z")
	for b.Loop() {
		if _, _, _, err := w.Start(def, time.Time{}, now, clock.Berlin); err != nil {
			b.Fatal(err)
		}
	}
}
