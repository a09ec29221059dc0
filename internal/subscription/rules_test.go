package subscription

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
)

func TestCancellationEffective(t *testing.T) {
	cases := []struct {
		name string
		at   time.Time
		want string
	}{
		{"10th 23:59:59 berlin", berlin(2026, 1, 10, 23, 59, 59, 0), "2026-01-31T22:59:59Z"},
		{"10th 23:59:59.999 berlin", berlin(2026, 1, 10, 23, 59, 59, 999_999_999), "2026-01-31T22:59:59Z"},
		{"11th 00:00:00 berlin", berlin(2026, 1, 11, 0, 0, 0, 0), "2026-02-28T22:59:59Z"},
		{"10th 23:59:59 utc (11th 00:59:59 berlin)", ts("2026-01-10T23:59:59Z"), "2026-02-28T22:59:59Z"},
		{"11th 00:00:00 utc", ts("2026-01-11T00:00:00Z"), "2026-02-28T22:59:59Z"},
		{"10th 22:59:59 utc (10th 23:59:59 berlin)", ts("2026-01-10T22:59:59Z"), "2026-01-31T22:59:59Z"},
		{"summer 10th 23:59:59 berlin", berlin(2026, 6, 10, 23, 59, 59, 0), "2026-06-30T21:59:59Z"},
		{"summer 11th 00:00 berlin = 10th 22:00 utc", ts("2026-06-10T22:00:00Z"), "2026-07-31T21:59:59Z"},
		{"summer 10th 23:59:59 utc", ts("2026-06-10T23:59:59Z"), "2026-07-31T21:59:59Z"},
		{"1st 00:00 berlin", berlin(2026, 2, 1, 0, 0, 0, 0), "2026-02-28T22:59:59Z"},
		{"march 10th before dst", berlin(2026, 3, 10, 23, 59, 59, 0), "2026-03-31T21:59:59Z"},
		{"last hour of march", berlin(2026, 3, 31, 23, 30, 0, 0), "2026-04-30T21:59:59Z"},
		{"last second of march", ts("2026-03-31T21:59:59Z"), "2026-04-30T21:59:59Z"},
		{"first second of april", ts("2026-03-31T22:00:00Z"), "2026-04-30T21:59:59Z"},
		{"dst switch night march", ts("2026-03-29T01:30:00Z"), "2026-04-30T21:59:59Z"},
		{"october 10th", berlin(2026, 10, 10, 23, 59, 59, 0), "2026-10-31T22:59:59Z"},
		{"last hour of october", berlin(2026, 10, 31, 23, 30, 0, 0), "2026-11-30T22:59:59Z"},
		{"dst switch night october", ts("2026-10-25T00:30:00Z"), "2026-11-30T22:59:59Z"},
		{"leap february by the 10th", berlin(2028, 2, 10, 12, 0, 0, 0), "2028-02-29T22:59:59Z"},
		{"leap january late", berlin(2028, 1, 20, 12, 0, 0, 0), "2028-02-29T22:59:59Z"},
		{"february late non-leap", berlin(2027, 2, 28, 23, 59, 59, 0), "2027-03-31T21:59:59Z"},
		{"january late non-leap", berlin(2027, 1, 31, 12, 0, 0, 0), "2027-02-28T22:59:59Z"},
		{"december by the 10th", berlin(2026, 12, 10, 23, 59, 59, 0), "2026-12-31T22:59:59Z"},
		{"december late", berlin(2026, 12, 11, 0, 0, 0, 0), "2027-01-31T22:59:59Z"},
		{"new year's eve 23:30 utc = jan 1 berlin", ts("2026-12-31T23:30:00Z"), "2027-01-31T22:59:59Z"},
		{"new year's eve 22:30 utc = dec 31 berlin", ts("2026-12-31T22:30:00Z"), "2027-01-31T22:59:59Z"},
	}
	for _, c := range cases {
		if got := clock.Timestamp(CancellationEffective(c.at, clock.Berlin)); got != c.want {
			t.Errorf("%s: CancellationEffective(%v) = %s, want %s", c.name, c.at.UTC(), got, c.want)
		}
	}
	if got := clock.Timestamp(CancellationDeadline(ts("2026-06-20T00:00:00Z"), clock.Berlin)); got != "2026-06-10T22:00:00Z" {
		t.Errorf("CancellationDeadline = %s", got)
	}
}

// FuzzCancellationEffective: for any instant the end is the last second of a
// Berlin month, lies after the request, and is that month's end exactly when
// the request is before the deadline.
func FuzzCancellationEffective(f *testing.F) {
	for _, s := range []int64{0, ts("2026-01-10T22:59:59Z").Unix(), ts("2026-01-10T23:00:00Z").Unix(), ts("2028-02-29T12:00:00Z").Unix()} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, sec, nsec int64) {
		if sec < -1e11 || sec > 1e11 {
			return
		}
		at := time.Unix(sec, nsec%1e9).UTC()
		end := CancellationEffective(at, clock.Berlin)
		l := end.Add(time.Second).In(clock.Berlin)
		if l.Day() != 1 || l.Hour() != 0 || l.Minute() != 0 || l.Second() != 0 || !end.After(at) {
			t.Fatalf("end %v for %v", end, at)
		}
		_, monthEnd := MonthCycle(at, clock.Berlin)
		if byDeadline := at.Before(CancellationDeadline(at, clock.Berlin)); byDeadline != end.Equal(monthEnd) {
			t.Fatalf("at %v: deadline %v, end %v, month end %v", at, CancellationDeadline(at, clock.Berlin), end, monthEnd)
		}
	})
}

func TestCancel(t *testing.T) {
	jan := month("jan", "2026-01-15T12:00:00Z", true, true)
	feb := month("feb", "2026-02-15T12:00:00Z", false, false)
	s, dropped, changed := Cancel(State{Cycles: []Cycle{jan, feb}}, berlin(2026, 1, 5, 10, 0, 0, 0), clock.Berlin)
	if !changed || clock.Timestamp(s.EndsAt) != "2026-01-31T22:59:59Z" || clock.Timestamp(s.CancelledAt) != "2026-01-05T09:00:00Z" {
		t.Fatalf("Cancel = %+v, %v", s, changed)
	}
	if fmt.Sprint(dropped) != "[feb]" || len(s.Cycles) != 1 || s.Cycles[0].ID != "jan" {
		t.Errorf("unordered February not dropped: %v, %+v", dropped, s.Cycles)
	}
	again, dropped, changed := Cancel(s, berlin(2026, 1, 20, 10, 0, 0, 0), clock.Berlin)
	if changed || dropped != nil || !again.EndsAt.Equal(s.EndsAt) || !again.CancelledAt.Equal(s.CancelledAt) {
		t.Errorf("second cancel changed the state: %+v", again)
	}
	// Cancelled after the 10th: the unordered next month is owed and kept.
	late, dropped, _ := Cancel(State{Cycles: []Cycle{jan, feb}}, berlin(2026, 1, 11, 0, 0, 0, 0), clock.Berlin)
	if dropped != nil || len(late.Cycles) != 2 || clock.Timestamp(late.EndsAt) != "2026-02-28T22:59:59Z" {
		t.Errorf("late cancel: %v, %+v", dropped, late)
	}
	// An ordered cycle beyond the rule's end is kept: the end moves to it.
	marOrdered := month("mar", "2026-03-15T12:00:00Z", true, false)
	s, _, _ = Cancel(State{Cycles: []Cycle{jan, month("feb", "2026-02-15T12:00:00Z", true, false), marOrdered}}, berlin(2026, 1, 5, 10, 0, 0, 0), clock.Berlin)
	if clock.Timestamp(s.EndsAt) != "2026-03-31T21:59:59Z" {
		t.Errorf("end with ordered March = %s", clock.Timestamp(s.EndsAt))
	}
}

func wantErr(t *testing.T, name string, err error, kind apperr.Kind, code, msg string) {
	t.Helper()
	e := apperr.As(err)
	if e == nil || e.Kind != kind || e.Code != code || (msg != "" && e.Msg != msg) {
		t.Errorf("%s: err = %v; want kind %v code %s msg %q", name, err, kind, code, msg)
	}
}

func TestReorder(t *testing.T) {
	jan := month("jan", "2026-01-15T12:00:00Z", true, true)
	febU := month("feb", "2026-02-15T12:00:00Z", false, false)
	marU := month("mar", "2026-03-15T12:00:00Z", false, false)
	decU := month("dec", "2025-12-15T12:00:00Z", false, false)
	base := State{Cycles: []Cycle{decU, jan, febU, marU}}
	now := ts("2026-01-20T00:00:00Z")

	i, err := ReorderTarget(base, "", now, clock.Berlin)
	if err != nil || base.Cycles[i].ID != "feb" {
		t.Fatalf("default target = %d, %v; want feb", i, err)
	}
	i, err = ReorderTarget(base, "mar", now, clock.Berlin)
	if err != nil || base.Cycles[i].ID != "mar" {
		t.Errorf("named future target = %d, %v", i, err)
	}
	_, err = ReorderTarget(base, "dec", now, clock.Berlin)
	wantErr(t, "named past", err, apperr.Unprocessable, CodeCycleEnded, "Subscription cycle dec ended at 2025-12-31T22:59:59Z and can no longer be ordered")
	_, err = ReorderTarget(base, "jan", now, clock.Berlin)
	wantErr(t, "already ordered", err, apperr.Unprocessable, CodeAlreadyOrdered, "Subscription cycle jan is already ordered")
	_, err = ReorderTarget(base, "nope", now, clock.Berlin)
	wantErr(t, "unknown", err, apperr.Unprocessable, CodeCycleNotFound, "subscription_cycle_id nope is not a cycle of this subscription")
	if e := apperr.As(err); e == nil || len(e.Details) != 1 || e.Details[0].Field != FieldCycleID {
		t.Errorf("unknown id details: %+v", e)
	}
	_, err = ReorderTarget(State{Cycles: []Cycle{jan}}, "", now, clock.Berlin)
	wantErr(t, "nothing unordered", err, apperr.Unprocessable, CodeNoUnordered, "There is no unordered subscription cycle to order")
	_, err = ReorderTarget(State{Cycles: []Cycle{jan, febU}, Restored: true}, "", now, clock.Berlin)
	wantErr(t, "restored", err, apperr.Unprocessable, CodeRestored, "")

	// Cancelled by the 10th of January: February is beyond the end.
	cancelled, _, _ := Cancel(State{Cycles: []Cycle{jan, febU}}, berlin(2026, 1, 10, 23, 59, 59, 0), clock.Berlin)
	_, err = ReorderTarget(cancelled, "", now, clock.Berlin)
	wantErr(t, "after cancellation", err, apperr.Unprocessable, CodeCancelled, "The subscription is cancelled and ends at 2026-01-31T22:59:59Z; later cycles cannot be ordered")
	// Cancelled on the 11th: February is owed and can still be ordered, March cannot.
	late, _, _ := Cancel(State{Cycles: []Cycle{jan, febU, marU}}, berlin(2026, 1, 11, 0, 0, 0, 0), clock.Berlin)
	if i, err := ReorderTarget(late, "", now, clock.Berlin); err != nil || late.Cycles[i].ID != "feb" {
		t.Errorf("owed month after late cancel: %d, %v", i, err)
	}
	if len(late.Cycles) != 2 {
		t.Errorf("unordered March beyond the end kept: %+v", late.Cycles)
	}
	_, err = ReorderTarget(late, "mar", now, clock.Berlin)
	wantErr(t, "dropped cycle", err, apperr.Unprocessable, CodeCycleNotFound, "")
	err = CanReorder(late, marU, now, clock.Berlin)
	wantErr(t, "beyond late cancel", err, apperr.Unprocessable, CodeCancelled, "The subscription is cancelled and ends at 2026-02-28T22:59:59Z; later cycles cannot be ordered")

	// Reorder marks the cycle and generates the following month once.
	s := State{Cycles: []Cycle{jan, febU}}
	s2 := Reorder(s, 1, "bill-feb", "mar", clock.Berlin)
	if s.Cycles[1].Ordered || len(s.Cycles) != 2 {
		t.Fatal("Reorder modified its input")
	}
	want := []Cycle{jan, {ID: "feb", ProductID: "p", ValidFrom: febU.ValidFrom, ValidUntil: febU.ValidUntil, Ordered: true, BillableItemID: "bill-feb"}, marU}
	if fmt.Sprint(s2.Cycles) != fmt.Sprint(want) {
		t.Errorf("after Reorder:\n got %+v\nwant %+v", s2.Cycles, want)
	}
	// Reorder in a cancelled subscription does not generate beyond the end.
	s3 := Reorder(late, 1, "bill-feb", "apr", clock.Berlin)
	if len(s3.Cycles) != 2 || !s3.Cycles[1].Ordered || s3.Cycles[1].BillableItemID != "bill-feb" {
		t.Errorf("reorder of owed month: %+v", s3.Cycles)
	}
}

func TestActivateFirst(t *testing.T) {
	first := Cycle{ID: "c1", ProductID: "p", Ordered: true, BillableItemID: "b1"}
	cases := []struct {
		name            string
		start           time.Time
		c1From, c1Until string
		c2From, c2Until string
	}{
		{"on the 31st", berlin(2026, 1, 31, 12, 0, 0, 0), "2025-12-31T23:00:00Z", "2026-01-31T22:59:59Z", "2026-01-31T23:00:00Z", "2026-02-28T22:59:59Z"},
		{"31 march dst", berlin(2026, 3, 31, 23, 59, 0, 0), "2026-02-28T23:00:00Z", "2026-03-31T21:59:59Z", "2026-03-31T22:00:00Z", "2026-04-30T21:59:59Z"},
		{"october into november", berlin(2026, 10, 31, 23, 30, 0, 0), "2026-09-30T22:00:00Z", "2026-10-31T22:59:59Z", "2026-10-31T23:00:00Z", "2026-11-30T22:59:59Z"},
		{"december", berlin(2026, 12, 31, 23, 59, 59, 0), "2026-11-30T23:00:00Z", "2026-12-31T22:59:59Z", "2026-12-31T23:00:00Z", "2027-01-31T22:59:59Z"},
		{"leap january", berlin(2028, 1, 31, 8, 0, 0, 0), "2027-12-31T23:00:00Z", "2028-01-31T22:59:59Z", "2028-01-31T23:00:00Z", "2028-02-29T22:59:59Z"},
	}
	for _, c := range cases {
		s, err := ActivateFirst(State{Cycles: []Cycle{first}}, c.start, "c2", clock.Berlin)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := []Cycle{
			{ID: "c1", ProductID: "p", ValidFrom: ts(c.c1From), ValidUntil: ts(c.c1Until), Ordered: true, CouponActivated: true, BillableItemID: "b1"},
			{ID: "c2", ProductID: "p", ValidFrom: ts(c.c2From), ValidUntil: ts(c.c2Until)},
		}
		if fmt.Sprint(s.Cycles) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, s.Cycles, want)
		}
		_, err = ActivateFirst(s, c.start, "c3", clock.Berlin)
		wantErr(t, c.name+" twice", err, apperr.Conflict, CodeAlreadyActive, "")
	}
	cancelled, _, _ := Cancel(State{Cycles: []Cycle{first}}, berlin(2026, 1, 5, 0, 0, 0, 0), clock.Berlin)
	_, err := ActivateFirst(cancelled, berlin(2026, 2, 1, 0, 0, 0, 0), "c2", clock.Berlin)
	wantErr(t, "start after cancellation end", err, apperr.Unprocessable, CodeCancelled, "")
	s, err := ActivateFirst(cancelled, berlin(2026, 1, 6, 0, 0, 0, 0), "c2", clock.Berlin)
	if err != nil || len(s.Cycles) != 1 || !s.Cycles[0].CouponActivated {
		t.Errorf("activation within the last month: %+v, %v", s.Cycles, err)
	}
}

func TestReactivation(t *testing.T) {
	jan := month("jan", "2026-01-15T12:00:00Z", true, true)
	febU := month("feb", "2026-02-15T12:00:00Z", false, false)
	febO := month("feb", "2026-02-15T12:00:00Z", true, false)
	now := ts("2026-01-25T00:00:00Z")

	_, err := ReactivationTarget(State{Cycles: []Cycle{jan, febU}}, now)
	wantErr(t, "not ordered", err, apperr.Unprocessable, CodeNotOrdered, "The current subscription cycle was not ordered yet")

	s := State{Cycles: []Cycle{jan, febO}}
	i, err := ReactivationTarget(s, now)
	if err != nil || s.Cycles[i].ID != "feb" {
		t.Fatalf("target = %d, %v", i, err)
	}
	s2 := Reactivate(s, i, "mar", clock.Berlin)
	if !s2.Cycles[1].CouponActivated || len(s2.Cycles) != 3 || s2.Cycles[2].Ordered || clock.Timestamp(s2.Cycles[2].ValidFrom) != "2026-02-28T23:00:00Z" {
		t.Errorf("after Reactivate: %+v", s2.Cycles)
	}
	_, err = ReactivationTarget(s2, now)
	wantErr(t, "following not ordered", err, apperr.Unprocessable, CodeNotOrdered, MsgNotOrdered)

	// An ordered cycle that is already over is not a target.
	_, err = ReactivationTarget(s, ts("2026-03-05T00:00:00Z"))
	wantErr(t, "ordered cycle over", err, apperr.Unprocessable, CodeNotOrdered, MsgNotOrdered)

	// Cancelled: the ordered February stays receivable, nothing beyond.
	c, _, _ := Cancel(s, berlin(2026, 1, 20, 0, 0, 0, 0), clock.Berlin)
	if i, err := ReactivationTarget(c, now); err != nil || c.Cycles[i].ID != "feb" {
		t.Errorf("ordered cycle after cancel: %d, %v", i, err)
	}
	c = Reactivate(c, 1, "mar", clock.Berlin)
	if len(c.Cycles) != 2 {
		t.Errorf("generated a cycle beyond the end: %+v", c.Cycles)
	}
	_, err = ReactivationTarget(c, now)
	wantErr(t, "nothing left", err, apperr.Unprocessable, CodeEnded, "The subscription is cancelled and ends at 2026-02-28T22:59:59Z; no later ticket can be issued")
	_, err = ReactivationTarget(c, ts("2026-03-01T00:00:00Z"))
	wantErr(t, "ended", err, apperr.Unprocessable, CodeEnded, "The subscription ended at 2026-02-28T22:59:59Z")
}

// TestReactivationHasNoTimeCondition: an ordered cycle's ticket can be
// obtained at any instant after the order (the interface's state table:
// "cycle ordered → activate with reactivation_key → ticket for that cycle"),
// from the first second of the month before to three months ahead, and
// coupon_reactivatable is true throughout; the ticket stays the cycle's.
// Issue 28: a renewal window (--renewal-lead-days) refused it with the
// "not ordered" message about a cycle that was ordered.
func TestReactivationHasNoTimeCondition(t *testing.T) {
	jan := month("jan", "2026-01-15T12:00:00Z", true, true)
	feb, mar, apr := month("feb", "2026-02-15T12:00:00Z", true, false), month("mar", "2026-03-15T12:00:00Z", true, false),
		month("apr", "2026-04-15T12:00:00Z", true, false)
	s := State{Cycles: []Cycle{jan, feb, mar, apr}}
	for _, at := range []string{"2025-12-31T23:00:00Z", "2026-01-01T00:00:00Z", "2026-01-02T09:00:00Z", "2026-01-24T22:59:59Z",
		"2026-01-31T22:59:59Z", "2026-01-31T23:00:00Z", "2026-02-28T22:59:59Z"} {
		i, err := ReactivationTarget(s, ts(at))
		if err != nil || s.Cycles[i].ID != "feb" {
			t.Errorf("at %s: target %d, %v; want February", at, i, err)
		}
		if v := Describe(s, ts(at), clock.Berlin); !v.CouponReactivatable {
			t.Errorf("at %s: coupon_reactivatable false with February ordered", at)
		}
	}
	// Three months obtained on 2 January, one after the other: each is its
	// own month, valid from 00:00 Berlin on its 1st.
	now := ts("2026-01-02T09:00:00Z")
	for _, want := range []string{"2026-01-31T23:00:00Z", "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z"} {
		i, err := ReactivationTarget(s, now)
		if err != nil || clock.Timestamp(s.Cycles[i].ValidFrom) != want {
			t.Fatalf("on 2 January: target %d, %v; want the cycle from %s", i, err, want)
		}
		s = Reactivate(s, i, "next-"+want, clock.Berlin)
	}
	if len(s.Cycles) != 5 || s.Cycles[4].Ordered || clock.Timestamp(s.Cycles[4].ValidFrom) != "2026-04-30T22:00:00Z" {
		t.Errorf("after three reactivations: %+v", s.Cycles)
	}
	_, err := ReactivationTarget(s, now)
	wantErr(t, "May not ordered", err, apperr.Unprocessable, CodeNotOrdered, MsgNotOrdered)
	if e := apperr.As(err); e == nil || len(e.Details) != 0 {
		t.Errorf("the not-ordered refusal has details: %+v", err)
	}
	if Describe(s, now, clock.Berlin).CouponReactivatable {
		t.Error("coupon_reactivatable with nothing ordered left")
	}
}

func TestDescribe(t *testing.T) {
	first := Cycle{ID: "c1", ProductID: "p", Ordered: true, BillableItemID: "b1"}
	jan := month("jan", "2026-01-15T12:00:00Z", true, true)
	febU := month("feb", "2026-02-15T12:00:00Z", false, false)
	febO := month("feb", "2026-02-15T12:00:00Z", true, false)
	now := ts("2026-01-25T00:00:00Z")
	cancelledEnded, _, _ := Cancel(State{Cycles: []Cycle{jan, febO}}, berlin(2026, 1, 5, 0, 0, 0, 0), clock.Berlin)
	cases := []struct {
		name                           string
		s                              State
		now                            time.Time
		active, reactivatable, reorder bool
		current, next, nextUnordered   string
		orderedUntil                   string
	}{
		{"ordered, not activated", State{Cycles: []Cycle{first}}, now, false, false, false, "c1", "", "", ""},
		{"activated, next unordered", State{Cycles: []Cycle{jan, febU}}, now, true, false, true, "jan", "feb", "feb", "2026-01-31T22:59:59Z"},
		{"activated, next ordered", State{Cycles: []Cycle{jan, febO}}, now, true, true, false, "jan", "feb", "", "2026-02-28T22:59:59Z"},
		{"cancelled, ordered feb kept", cancelledEnded, now, true, true, false, "jan", "feb", "", "2026-02-28T22:59:59Z"},
		{"cancelled and over", cancelledEnded, ts("2026-03-01T00:00:00Z"), false, false, false, "feb", "", "", "2026-02-28T22:59:59Z"},
		{"restored", State{Cycles: []Cycle{jan, febO}, Restored: true}, now, false, false, false, "jan", "feb", "", "2026-02-28T22:59:59Z"},
	}
	for _, c := range cases {
		v := Describe(c.s, c.now, clock.Berlin)
		id := func(p *Cycle) string {
			if p == nil {
				return ""
			}
			return p.ID
		}
		ou := ""
		if !v.OrderedUntil.IsZero() {
			ou = clock.Timestamp(v.OrderedUntil)
		}
		got := fmt.Sprint(v.Active, v.CouponReactivatable, v.Reorderable, v.Current.ID, id(v.Next), id(v.NextUnordered), ou)
		want := fmt.Sprint(c.active, c.reactivatable, c.reorder, c.current, c.next, c.nextUnordered, c.orderedUntil)
		if got != want {
			t.Errorf("%s: Describe = %s; want %s", c.name, got, want)
		}
	}
}

// Property: random sequences of activation, reorders (default and named),
// reactivations and cancellations at increasing instants keep the cycles
// tiled (no overlap, no gap), give every ordered cycle exactly one billable
// item (and unordered ones none), never order or generate a cycle beyond a
// cancellation end, and keep every ordered cycle.
func TestOperationsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for run := 0; run < 500; run++ {
		now := ts("2024-01-01T00:00:00Z").Add(time.Duration(r.Int64N(4*365*24)) * time.Hour)
		seq := 0
		newID := func() string { seq++; return fmt.Sprintf("id%d", seq) }
		s := State{Cycles: []Cycle{{ID: newID(), ProductID: "p", Ordered: true, BillableItemID: "bill-first"}}}
		var err error
		if s, err = ActivateFirst(s, now.Add(time.Duration(r.IntN(40*24))*time.Hour), newID(), clock.Berlin); err != nil {
			t.Fatal(err)
		}
		ordered := map[string]bool{}
		for step := 0; step < 30; step++ {
			now = now.Add(time.Duration(r.IntN(20*24*3600)) * time.Second)
			switch r.IntN(4) {
			case 0:
				if i, err := ReorderTarget(s, "", now, clock.Berlin); err == nil {
					checkHorizon(t, s.Cycles[i], now)
					s = Reorder(s, i, "bill-"+s.Cycles[i].ID, newID(), clock.Berlin)
				}
			case 1:
				name := s.Cycles[r.IntN(len(s.Cycles))].ID
				if i, err := ReorderTarget(s, name, now, clock.Berlin); err == nil {
					checkHorizon(t, s.Cycles[i], now)
					s = Reorder(s, i, "bill-"+s.Cycles[i].ID, newID(), clock.Berlin)
				}
			case 2:
				if i, err := ReactivationTarget(s, now); err == nil {
					s = Reactivate(s, i, newID(), clock.Berlin)
				}
			case 3:
				if r.IntN(4) == 0 {
					s, _, _ = Cancel(s, now, clock.Berlin)
				}
			}
			order := Chronological(s.Cycles)
			for k, i := range order {
				c := s.Cycles[i]
				if !c.Dated() {
					t.Fatalf("run %d: undated cycle after activation: %+v", run, c)
				}
				if k > 0 && !c.ValidFrom.Equal(s.Cycles[order[k-1]].ValidUntil.Add(time.Second)) {
					t.Fatalf("run %d: gap or overlap before %+v", run, c)
				}
				if c.Ordered != (c.BillableItemID != "") {
					t.Fatalf("run %d: ordered=%v billable=%q", run, c.Ordered, c.BillableItemID)
				}
				if ordered[c.ID] && !c.Ordered {
					t.Fatalf("run %d: cycle %s lost its order", run, c.ID)
				}
				if c.Ordered {
					ordered[c.ID] = true
				}
				if s.Cancelled() && c.ValidFrom.After(s.EndsAt) {
					t.Fatalf("run %d: cycle %+v beyond end %v", run, c, s.EndsAt)
				}
			}
			bills := map[string]bool{}
			for _, c := range s.Cycles {
				if c.BillableItemID != "" && bills[c.BillableItemID] {
					t.Fatalf("run %d: billable item %s twice", run, c.BillableItemID)
				}
				bills[c.BillableItemID] = true
			}
		}
	}
}

// checkHorizon fails when cycle c, about to be ordered at now, starts more
// than MaxReorderMonthsAhead months after now's month (Berlin).
func checkHorizon(t *testing.T, c Cycle, now time.Time) {
	t.Helper()
	l := now.In(clock.Berlin)
	f := c.ValidFrom.In(clock.Berlin)
	if months := (f.Year()-l.Year())*12 + int(f.Month()-l.Month()); c.Dated() && months > MaxReorderMonthsAhead {
		t.Fatalf("cycle %s starting %s ordered at %s: %d months ahead", c.ID, clock.Timestamp(c.ValidFrom), clock.Timestamp(now), months)
	}
}

// TestReorderHorizon: reorders stop MaxReorderMonthsAhead months after the
// current month (issue 14: 20 reorders ordered a subscription until 2028),
// at the Berlin month boundary, for the default and a named cycle, and
// subscription_reorderable says so.
func TestReorderHorizon(t *testing.T) {
	now := berlin(2026, 6, 15, 10, 0, 0, 0)
	s := State{Cycles: []Cycle{{ID: "c0", ProductID: "p", Ordered: true, BillableItemID: "bill-c0"}}}
	s, err := ActivateFirst(s, now, "c1", clock.Berlin)
	if err != nil {
		t.Fatal(err)
	}
	n := 1
	for {
		i, err := ReorderTarget(s, "", now, clock.Berlin)
		if err != nil {
			wantErr(t, "October in June", err, apperr.Unprocessable, CodeTooFarAhead,
				"Subscription cycle c4 starts 2026-09-30T22:00:00Z; cycles can be ordered at most 3 months ahead of the current month, so only cycles starting before 2026-09-30T22:00:00Z")
			break
		}
		n++
		s = Reorder(s, i, "bill-"+s.Cycles[i].ID, fmt.Sprintf("c%d", n), clock.Berlin)
		if n > 10 {
			t.Fatal("reorders never stop")
		}
	}
	if got := clock.Timestamp(OrderedUntil(s.Cycles)); got != "2026-09-30T21:59:59Z" {
		t.Errorf("ordered until %s, want the end of September", got)
	}
	if Describe(s, now, clock.Berlin).Reorderable {
		t.Error("subscription_reorderable is true past the horizon")
	}
	_, err = ReorderTarget(s, "c4", now, clock.Berlin)
	if e := apperr.As(err); e == nil || e.Code != CodeTooFarAhead || len(e.Details) != 1 || e.Details[0].Field != FieldCycleID {
		t.Errorf("named cycle past the horizon: %+v", e)
	}
	// 30 June 23:59:59 Berlin is still June; 1 July 00:00 Berlin (22:00 UTC) is July.
	if _, err := ReorderTarget(s, "", berlin(2026, 6, 30, 23, 59, 59, 0), clock.Berlin); err == nil {
		t.Error("October orderable on 30 June")
	}
	july := ts("2026-06-30T22:00:00Z")
	if i, err := ReorderTarget(s, "", july, clock.Berlin); err != nil || s.Cycles[i].ID != "c4" {
		t.Errorf("October on 1 July: %v", err)
	}
	if !Describe(s, july, clock.Berlin).Reorderable {
		t.Error("subscription_reorderable is false on 1 July")
	}
}

func BenchmarkDescribe(b *testing.B) {
	var cycles []Cycle
	for i := 0; i < 12; i++ {
		cycles = append(cycles, month(fmt.Sprint(i), berlin(2026, time.Month(1+i), 15, 0, 0, 0, 0).UTC().Format(time.RFC3339), i < 8, i < 7))
	}
	s := State{Cycles: cycles}
	now := ts("2026-07-20T00:00:00Z")
	for b.Loop() {
		Describe(s, now, clock.Berlin)
	}
}

// CancellationDeadline is the instant from which a cancellation in t's month
// no longer ends the subscription at the end of that month: 00:00 on the 11th
// in loc, in UTC. Partners show it as cancellation_deadline.
func CancellationDeadline(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), CancellationDeadlineDay+1, 0, 0, 0, 0, loc).UTC()
}
