package subscription

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/testtool"
)

var ts = testtool.Time

// berlin builds a local Berlin wall-clock instant.
func berlin(y int, m time.Month, d, h, min, s, ns int) time.Time {
	return time.Date(y, m, d, h, min, s, ns, clock.Berlin)
}

func month(id, at string, ordered, activated bool) Cycle {
	from, until := MonthCycle(ts(at), clock.Berlin)
	c := Cycle{ID: id, ProductID: "p", ValidFrom: from, ValidUntil: until, Ordered: ordered, CouponActivated: activated}
	if ordered {
		c.BillableItemID = "b-" + id
	}
	return c
}

func TestMonthCycle(t *testing.T) {
	cases := []struct{ at, from, until string }{
		{"2026-01-15T12:00:00Z", "2025-12-31T23:00:00Z", "2026-01-31T22:59:59Z"},
		{"2025-06-10T00:00:00Z", "2025-05-31T22:00:00Z", "2025-06-30T21:59:59Z"},
		{"2026-03-29T01:30:00Z", "2026-02-28T23:00:00Z", "2026-03-31T21:59:59Z"},
		{"2026-10-25T01:30:00Z", "2026-09-30T22:00:00Z", "2026-10-31T22:59:59Z"},
		{"2028-02-29T22:59:59Z", "2028-01-31T23:00:00Z", "2028-02-29T22:59:59Z"},
		{"2028-02-29T23:00:00Z", "2028-02-29T23:00:00Z", "2028-03-31T21:59:59Z"},
		{"2027-02-28T12:00:00Z", "2027-01-31T23:00:00Z", "2027-02-28T22:59:59Z"},
		{"2026-12-31T22:59:59Z", "2026-11-30T23:00:00Z", "2026-12-31T22:59:59Z"},
		{"2026-12-31T23:00:00Z", "2026-12-31T23:00:00Z", "2027-01-31T22:59:59Z"},
	}
	for _, c := range cases {
		from, until := MonthCycle(ts(c.at), clock.Berlin)
		if clock.Timestamp(from) != c.from || clock.Timestamp(until) != c.until {
			t.Errorf("MonthCycle(%s) = %s..%s; want %s..%s", c.at, clock.Timestamp(from), clock.Timestamp(until), c.from, c.until)
		}
	}
}

// Property: for random instants (1970..2100, weighted towards month and DST
// boundaries), the month cycle contains the instant, starts at local midnight
// on the 1st, ends at local 23:59:59 on the last day, and a chain of
// NextCycle calls neither overlaps nor leaves gaps.
func TestCyclesTileProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 10))
	lo, hi := ts("1970-01-01T00:00:00Z").Unix(), ts("2100-01-01T00:00:00Z").Unix()
	for n := 0; n < 20000; n++ {
		var at time.Time
		if n%2 == 0 {
			at = time.Unix(lo+r.Int64N(hi-lo), 0).UTC()
		} else { // within ±3 hours of a local month start
			y, m := 1971+r.IntN(128), time.Month(1+r.IntN(12))
			at = berlin(y, m, 1, 0, 0, 0, 0).Add(time.Duration(r.Int64N(6*3600)-3*3600) * time.Second).UTC()
		}
		from, until := MonthCycle(at, clock.Berlin)
		if at.Before(from) || at.After(until.Add(time.Second-1)) {
			t.Fatalf("%v not in its cycle %v..%v", at, from, until)
		}
		lf, lu := from.In(clock.Berlin), until.In(clock.Berlin)
		if lf.Day() != 1 || lf.Hour() != 0 || lf.Minute() != 0 || lf.Second() != 0 {
			t.Fatalf("cycle of %v starts at %v", at, lf)
		}
		if lu.Hour() != 23 || lu.Minute() != 59 || lu.Second() != 59 || lu.AddDate(0, 0, 1).Day() != 1 || lu.Month() != lf.Month() {
			t.Fatalf("cycle of %v ends at %v", at, lu)
		}
		prev := Cycle{ValidFrom: from, ValidUntil: until}
		for k := 0; k < 3; k++ {
			nf, nu := NextCycle(prev, clock.Berlin)
			if !nf.Equal(prev.ValidUntil.Add(time.Second)) || !nu.After(nf) {
				t.Fatalf("after %v..%v next is %v..%v", prev.ValidFrom, prev.ValidUntil, nf, nu)
			}
			prev = Cycle{ValidFrom: nf, ValidUntil: nu}
		}
	}
}

func TestCurrentNextNextUnordered(t *testing.T) {
	jan := month("jan", "2026-01-15T12:00:00Z", true, true)
	feb := month("feb", "2026-02-15T12:00:00Z", true, false)
	febU := month("feb", "2026-02-15T12:00:00Z", false, false)
	mar := month("mar", "2026-03-15T12:00:00Z", false, false)
	undated := Cycle{ID: "first", ProductID: "p", Ordered: true, BillableItemID: "b"}
	cases := []struct {
		name                         string
		cycles                       []Cycle
		now                          string
		current, next, nextUnordered string
	}{
		{"none", nil, "2026-01-20T00:00:00Z", "", "", ""},
		{"before first activation", []Cycle{undated}, "2026-01-20T00:00:00Z", "first", "", ""},
		{"active", []Cycle{jan, febU}, "2026-01-20T00:00:00Z", "jan", "feb", "feb"},
		{"active unordered order shuffled", []Cycle{mar, jan, feb}, "2026-02-01T00:00:00Z", "feb", "mar", "mar"},
		{"first instant of feb in berlin", []Cycle{jan, feb, mar}, "2026-01-31T23:00:00Z", "feb", "mar", "mar"},
		{"last second of jan", []Cycle{jan, feb, mar}, "2026-01-31T22:59:59.999Z", "jan", "feb", "mar"},
		{"future only", []Cycle{mar, feb}, "2026-01-20T00:00:00Z", "feb", "mar", "mar"},
		{"past only", []Cycle{jan, feb}, "2026-04-20T00:00:00Z", "feb", "", ""},
		{"past and undated", []Cycle{jan, undated}, "2026-04-20T00:00:00Z", "first", "", ""},
		{"lapsed current unordered", []Cycle{jan, febU}, "2026-02-10T00:00:00Z", "feb", "", "feb"},
		{"gap: between past and future", []Cycle{jan, mar}, "2026-02-10T00:00:00Z", "mar", "", "mar"},
	}
	for _, c := range cases {
		now := ts(c.now)
		cur, ok := Current(c.cycles, now)
		if cur.ID != c.current || ok != (c.current != "") {
			t.Errorf("%s: Current = %q, %v; want %q", c.name, cur.ID, ok, c.current)
		}
		next, ok := Next(c.cycles, now)
		if next.ID != c.next || ok != (c.next != "") {
			t.Errorf("%s: Next = %q, %v; want %q", c.name, next.ID, ok, c.next)
		}
		nu, ok := NextUnordered(c.cycles, now)
		if nu.ID != c.nextUnordered || ok != (c.nextUnordered != "") {
			t.Errorf("%s: NextUnordered = %q, %v; want %q", c.name, nu.ID, ok, c.nextUnordered)
		}
	}
}

func TestOrderedUntil(t *testing.T) {
	jan := month("jan", "2026-01-15T12:00:00Z", true, true)
	feb := month("feb", "2026-02-15T12:00:00Z", true, false)
	mar := month("mar", "2026-03-15T12:00:00Z", false, false)
	if got := OrderedUntil([]Cycle{mar, feb, jan}); clock.Timestamp(got) != "2026-02-28T22:59:59Z" {
		t.Errorf("OrderedUntil = %s", clock.Timestamp(got))
	}
	if got := OrderedUntil([]Cycle{{ID: "x", Ordered: true}, mar}); !got.IsZero() {
		t.Errorf("OrderedUntil without dated ordered cycles = %v", got)
	}
}

func BenchmarkCurrent(b *testing.B) {
	var cycles []Cycle
	for i := 0; i < 24; i++ {
		cycles = append(cycles, month(fmt.Sprint(i), berlin(2025, time.Month(1+i), 15, 0, 0, 0, 0).UTC().Format(time.RFC3339), i < 20, i < 19))
	}
	now := ts("2026-06-20T00:00:00Z")
	for b.Loop() {
		CurrentIndex(cycles, now)
		NextIndex(cycles, now)
		NextUnorderedIndex(cycles, now)
	}
}
