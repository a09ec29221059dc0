package subscription

import (
	"slices"
	"time"

	"github.com/farebox/farebox/internal/validity"
)

// Cycle is one subscription cycle, with the fields of the interface and the
// SDKs (product_id). ValidFrom and ValidUntil are UTC; ValidUntil is the
// inclusive last second. Both are zero while the cycle is undated (the first
// cycle before the first activation).
type Cycle struct {
	ID              string
	ProductID       string
	ValidFrom       time.Time
	ValidUntil      time.Time
	Ordered         bool
	CouponActivated bool
	BillableItemID  string // set when the cycle was ordered or reordered
}

// Dated reports whether the cycle's month is fixed.
func (c Cycle) Dated() bool { return !c.ValidFrom.IsZero() }

// Ended reports whether a dated cycle is over at now.
func (c Cycle) Ended(now time.Time) bool {
	return c.Dated() && !now.Before(c.ValidUntil.Add(time.Second))
}

// MonthCycle is the calendar month of t in loc: first instant and inclusive
// last second, in UTC.
func MonthCycle(t time.Time, loc *time.Location) (from, until time.Time) {
	return validity.MonthWindow(t, loc)
}

// NextCycle is the month after prev: it starts one second after prev ends.
// prev must be dated.
func NextCycle(prev Cycle, loc *time.Location) (from, until time.Time) {
	return MonthCycle(prev.ValidUntil.Add(time.Second), loc)
}

// Chronological returns the indexes of cycles in time order: dated cycles by
// ValidFrom, then undated ones in slice order.
func Chronological(cycles []Cycle) []int {
	idx := make([]int, len(cycles))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ca, cb := &cycles[a], &cycles[b]
		if ca.Dated() != cb.Dated() {
			if ca.Dated() {
				return -1
			}
			return 1
		}
		return ca.ValidFrom.Compare(cb.ValidFrom)
	})
	return idx
}

// CurrentIndex applies the interface's three rules: a cycle active at now;
// otherwise the chronologically first future cycle (an undated cycle counts
// as future, after the dated ones); otherwise the most recent past cycle.
// It returns -1 when there are no cycles.
func CurrentIndex(cycles []Cycle, now time.Time) int {
	firstFuture, undated, lastPast := -1, -1, -1
	for i, c := range cycles {
		switch {
		case !c.Dated():
			if undated < 0 {
				undated = i
			}
		case validity.Contains(c.ValidFrom, c.ValidUntil, now):
			return i
		case c.ValidFrom.After(now):
			if firstFuture < 0 || c.ValidFrom.Before(cycles[firstFuture].ValidFrom) {
				firstFuture = i
			}
		default:
			if lastPast < 0 || c.ValidFrom.After(cycles[lastPast].ValidFrom) {
				lastPast = i
			}
		}
	}
	switch {
	case firstFuture >= 0:
		return firstFuture
	case undated >= 0:
		return undated
	default:
		return lastPast
	}
}

// Current is the current_subscription_cycle (see CurrentIndex); ok is false
// when there are no cycles.
func Current(cycles []Cycle, now time.Time) (c Cycle, ok bool) {
	return at(cycles, CurrentIndex(cycles, now))
}

// NextIndex is the cycle chronologically after the current one, or -1.
func NextIndex(cycles []Cycle, now time.Time) int {
	cur := CurrentIndex(cycles, now)
	if cur < 0 {
		return -1
	}
	order := Chronological(cycles)
	for k, i := range order {
		if i == cur && k+1 < len(order) {
			return order[k+1]
		}
	}
	return -1
}

// Next is the next_subscription_cycle; it may equal NextUnordered.
func Next(cycles []Cycle, now time.Time) (Cycle, bool) {
	return at(cycles, NextIndex(cycles, now))
}

// NextUnorderedIndex is the chronologically first cycle that is not ordered
// and not over at now (it can be the current cycle when that was never
// ordered), or -1.
func NextUnorderedIndex(cycles []Cycle, now time.Time) int {
	for _, i := range Chronological(cycles) {
		if c := cycles[i]; !c.Ordered && !c.Ended(now) {
			return i
		}
	}
	return -1
}

// NextUnordered is the next_unordered_subscription_cycle.
func NextUnordered(cycles []Cycle, now time.Time) (Cycle, bool) {
	return at(cycles, NextUnorderedIndex(cycles, now))
}

// OrderedUntil is the end of the last ordered dated cycle (ordered_until),
// zero when none.
func OrderedUntil(cycles []Cycle) time.Time {
	var t time.Time
	for _, c := range cycles {
		if c.Ordered && c.Dated() && c.ValidUntil.After(t) {
			t = c.ValidUntil
		}
	}
	return t
}

// Last is the index of the chronologically last cycle, or -1.
func Last(cycles []Cycle) int {
	order := Chronological(cycles)
	if len(order) == 0 {
		return -1
	}
	return order[len(order)-1]
}

// Find returns the index of the cycle with id, or -1.
func Find(cycles []Cycle, id string) int {
	for i, c := range cycles {
		if c.ID == id {
			return i
		}
	}
	return -1
}

func at(cycles []Cycle, i int) (Cycle, bool) {
	if i < 0 {
		return Cycle{}, false
	}
	return cycles[i], true
}
