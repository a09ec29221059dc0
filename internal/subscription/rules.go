package subscription

import (
	"fmt"
	"slices"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
)

// CancellationDeadlineDay is the last day of a month (local time) on which a
// cancellation still ends the subscription at the end of that month.
const CancellationDeadlineDay = 10

// Messages and fields of the 422 errors this package returns (their codes
// are in codes.go). MsgNotOrdered is matched exactly by the iOS SDK
// (client-contract.md 5.1).
const (
	MsgNotOrdered       = "The current subscription cycle was not ordered yet"
	FieldCycleID        = "/subscription_cycle_id"
	FieldActivationTime = "/activation_start_datetime"
)

// MaxReorderMonthsAhead bounds how far ahead a cycle can be ordered: a cycle
// may start at most this many calendar months (local time) after the
// current month: in June (Berlin) cycles up to September can be ordered,
// the October cycle from 1 July.
// Without a bound every reorder generates the next month, and 20 reorders
// ordered (and billed) a subscription until 2028.
const MaxReorderMonthsAhead = 3

// ReorderHorizon is the first instant (UTC) of the first month that cannot
// be ordered at now: a cycle starting at or after it is too far ahead.
func ReorderHorizon(now time.Time, loc *time.Location) time.Time {
	l := now.In(loc)
	return time.Date(l.Year(), l.Month()+MaxReorderMonthsAhead+1, 1, 0, 0, 0, 0, loc).UTC()
}

// State is what the rules need to know about one subscription.
type State struct {
	Cycles      []Cycle
	CancelledAt time.Time // zero: not cancelled
	EndsAt      time.Time // inclusive last second of the subscription once cancelled
	Restored    bool      // replaced by a restored subscription: no further moves
}

// Cancelled reports whether a cancellation was recorded.
func (s State) Cancelled() bool { return !s.CancelledAt.IsZero() }

// Ended reports whether the subscription can no longer issue tickets: it was
// restored away, or it was cancelled and its end has passed.
func (s State) Ended(now time.Time) bool {
	return s.Restored || (s.Cancelled() && !now.Before(s.EndsAt.Add(time.Second)))
}

// CancellationEffective is when a cancellation requested at requestedAt takes
// effect: the last second of that month (in loc) when requested up to and
// including the 10th, otherwise the last second of the next month.
func CancellationEffective(requestedAt time.Time, loc *time.Location) time.Time {
	l := requestedAt.In(loc)
	months := time.Month(1)
	if l.Day() > CancellationDeadlineDay {
		months = 2
	}
	end := time.Date(l.Year(), l.Month()+months, 1, 0, 0, 0, 0, loc)
	return end.Add(-time.Second).UTC()
}

// Cancel records a cancellation requested at requestedAt and returns the new
// state, the ids of the unordered cycles it removed (they start after the end
// and can never be ordered; the caller deletes them) and whether anything
// changed. The end is CancellationEffective, or the end of the last ordered
// cycle when that is later (an ordered cycle is never taken away).
// Cancelling again changes nothing and keeps the first end.
func Cancel(s State, requestedAt time.Time, loc *time.Location) (next State, dropped []string, changed bool) {
	if s.Cancelled() {
		return s, nil, false
	}
	s.CancelledAt = requestedAt.UTC()
	s.EndsAt = CancellationEffective(requestedAt, loc)
	if ou := OrderedUntil(s.Cycles); ou.After(s.EndsAt) {
		s.EndsAt = ou
	}
	kept := make([]Cycle, 0, len(s.Cycles))
	for _, c := range s.Cycles {
		if !c.Ordered && c.Dated() && c.ValidFrom.After(s.EndsAt) {
			dropped = append(dropped, c.ID)
			continue
		}
		kept = append(kept, c)
	}
	s.Cycles = kept
	return s, dropped, true
}

// beyondEnd reports whether cycle c starts after a cancelled subscription ends.
func (s State) beyondEnd(c Cycle) bool {
	return s.Cancelled() && (!c.Dated() || c.ValidFrom.After(s.EndsAt))
}

// CanReorder says whether cycle c may be ordered at now (months in loc);
// the error is a 422 naming the reason.
func CanReorder(s State, c Cycle, now time.Time, loc *time.Location) error {
	const op = "subscription.CanReorder"
	switch {
	case s.Restored:
		return apperr.E(op, apperr.Unprocessable, CodeRestored, "The subscription was restored into a new subscription and cannot be changed")
	case c.Ordered:
		return apperr.E(op, apperr.Unprocessable, CodeAlreadyOrdered, "Subscription cycle "+c.ID+" is already ordered")
	case c.Ended(now):
		return apperr.E(op, apperr.Unprocessable, CodeCycleEnded, "Subscription cycle "+c.ID+" ended at "+clock.Timestamp(c.ValidUntil)+" and can no longer be ordered")
	case s.beyondEnd(c):
		return apperr.E(op, apperr.Unprocessable, CodeCancelled, "The subscription is cancelled and ends at "+clock.Timestamp(s.EndsAt)+"; later cycles cannot be ordered")
	case c.Dated() && !c.ValidFrom.Before(ReorderHorizon(now, loc)):
		return apperr.E(op, apperr.Unprocessable, CodeTooFarAhead, fmt.Sprintf(
			"Subscription cycle %s starts %s; cycles can be ordered at most %d months ahead of the current month, so only cycles starting before %s",
			c.ID, clock.Timestamp(c.ValidFrom), MaxReorderMonthsAhead, clock.Timestamp(ReorderHorizon(now, loc))))
	}
	return nil
}

// ReorderTarget picks the cycle a reorder request orders: the cycle named by
// cycleID, or the next unordered one when cycleID is empty. It returns the
// cycle's index or a 422.
func ReorderTarget(s State, cycleID string, now time.Time, loc *time.Location) (int, error) {
	const op = "subscription.ReorderTarget"
	var i int
	if cycleID == "" {
		if i = NextUnorderedIndex(s.Cycles, now); i < 0 {
			if s.Cancelled() {
				return -1, apperr.E(op, apperr.Unprocessable, CodeCancelled, "The subscription is cancelled and ends at "+clock.Timestamp(s.EndsAt)+"; later cycles cannot be ordered")
			}
			return -1, apperr.E(op, apperr.Unprocessable, CodeNoUnordered, "There is no unordered subscription cycle to order")
		}
	} else if i = Find(s.Cycles, cycleID); i < 0 {
		return -1, apperr.Validation(op, CodeCycleNotFound, FieldCycleID, "subscription_cycle_id "+cycleID+" is not a cycle of this subscription")
	}
	if err := CanReorder(s, s.Cycles[i], now, loc); err != nil {
		if ae := apperr.As(err); cycleID != "" && ae != nil && ae.Code == CodeTooFarAhead {
			return -1, ae.WithDetails(apperr.FieldError{Field: FieldCycleID, Message: ae.Msg})
		}
		return -1, err
	}
	return i, nil
}

// Reorder orders cycle i with its new billable item and generates the
// following cycle (id nextID) when i is the last one and the subscription
// continues past it. It returns the new state; s is not modified.
func Reorder(s State, i int, billableItemID, nextID string, loc *time.Location) State {
	s.Cycles = slices.Clone(s.Cycles)
	s.Cycles[i].Ordered = true
	s.Cycles[i].BillableItemID = billableItemID
	s, _ = extendAfter(s, i, nextID, loc)
	return s
}

// ActivateFirst applies the first activation of the subscription's coupon:
// the first (undated) cycle gets the month of start and is marked activated,
// and the next cycle (id nextID, unordered) is generated. It fails with 409
// when the coupon was already activated and 422 when the subscription is
// cancelled before that month.
func ActivateFirst(s State, start time.Time, nextID string, loc *time.Location) (State, error) {
	const op = "subscription.ActivateFirst"
	if len(s.Cycles) == 0 || s.Cycles[0].Dated() || s.Cycles[0].CouponActivated {
		return s, apperr.E(op, apperr.Conflict, CodeAlreadyActive, "The coupon of this subscription is already activated")
	}
	if s.Restored {
		return s, apperr.E(op, apperr.Unprocessable, CodeRestored, "The subscription was restored into a new subscription and cannot be changed")
	}
	from, until := MonthCycle(start, loc)
	if s.Cancelled() && from.After(s.EndsAt) {
		return s, apperr.Validation(op, CodeCancelled, FieldActivationTime, "The subscription is cancelled and ends at "+clock.Timestamp(s.EndsAt)+"; it cannot start after that")
	}
	s.Cycles = slices.Clone(s.Cycles)
	s.Cycles[0].ValidFrom, s.Cycles[0].ValidUntil = from, until
	s.Cycles[0].CouponActivated = true
	s, _ = extendAfter(s, 0, nextID, loc)
	return s, nil
}

// ReactivationTarget is the cycle a reactivation at now issues a ticket for:
// the chronologically first ordered, not yet activated cycle that is not
// over. The interface's state table puts no time condition on it: an
// ordered cycle's ticket can be obtained at any time after the order, and
// it is that cycle's ticket (valid from its first instant, 00:00 Berlin on
// the 1st for a calendar month), whenever it is issued. Without a target it
// answers 422, with exactly MsgNotOrdered while the subscription continues
// (the SDKs know that message; it means the cycle is not ordered).
func ReactivationTarget(s State, now time.Time) (int, error) {
	const op = "subscription.ReactivationTarget"
	if s.Restored {
		return -1, apperr.E(op, apperr.Unprocessable, CodeRestored, "The subscription was restored into a new subscription and cannot be changed")
	}
	for _, i := range Chronological(s.Cycles) {
		c := s.Cycles[i]
		if c.Dated() && c.Ordered && !c.CouponActivated && !c.Ended(now) && !s.beyondEnd(c) {
			return i, nil
		}
	}
	if s.Ended(now) {
		return -1, apperr.E(op, apperr.Unprocessable, CodeEnded, "The subscription ended at "+clock.Timestamp(s.EndsAt))
	}
	if s.Cancelled() {
		if i := NextUnorderedIndex(s.Cycles, now); i < 0 || s.beyondEnd(s.Cycles[i]) {
			return -1, apperr.E(op, apperr.Unprocessable, CodeEnded, "The subscription is cancelled and ends at "+clock.Timestamp(s.EndsAt)+"; no later ticket can be issued")
		}
	}
	return -1, apperr.E(op, apperr.Unprocessable, CodeNotOrdered, MsgNotOrdered)
}

// Reactivate marks cycle i as activated (its ticket was issued) and generates
// the following cycle (id nextID) when i is the last one and the
// subscription continues past it.
func Reactivate(s State, i int, nextID string, loc *time.Location) State {
	s.Cycles = slices.Clone(s.Cycles)
	s.Cycles[i].CouponActivated = true
	s, _ = extendAfter(s, i, nextID, loc)
	return s
}

// extendAfter appends the month after cycle i when i is the chronologically
// last, dated cycle and that month does not start after a cancellation end.
// s.Cycles must already be a private copy.
func extendAfter(s State, i int, nextID string, loc *time.Location) (State, bool) {
	if nextID == "" || s.Restored || Last(s.Cycles) != i || !s.Cycles[i].Dated() {
		return s, false
	}
	prev := s.Cycles[i]
	from, until := NextCycle(prev, loc)
	next := Cycle{ID: nextID, ProductID: prev.ProductID, ValidFrom: from, ValidUntil: until}
	if s.beyondEnd(next) {
		return s, false
	}
	s.Cycles = append(s.Cycles, next)
	return s, true
}

// View is everything the subscription JSON needs at now.
type View struct {
	Active              bool // `active` and `activate`
	CouponReactivatable bool
	Reorderable         bool // subscription_reorderable
	Current             Cycle
	Next                *Cycle
	NextUnordered       *Cycle
	OrderedUntil        time.Time // zero: null
}

// Describe computes the View of s at now (months in loc). Active means the coupon was
// activated and the subscription has not ended. CouponReactivatable is true
// only when an ordered, not yet activated cycle exists (so Android's
// first { ordered && !coupon_activated } finds one), from the reorder on,
// the subscription has not ended, and a first activation happened.
func Describe(s State, now time.Time, loc *time.Location) View {
	var v View
	activated := false
	for _, c := range s.Cycles {
		activated = activated || c.CouponActivated
	}
	ended := s.Ended(now)
	v.Active = activated && !ended
	_, err := ReactivationTarget(s, now)
	v.CouponReactivatable = activated && !ended && err == nil
	_, err = ReorderTarget(s, "", now, loc)
	v.Reorderable = err == nil
	v.Current, _ = Current(s.Cycles, now)
	if c, ok := Next(s.Cycles, now); ok {
		v.Next = &c
	}
	if c, ok := NextUnordered(s.Cycles, now); ok {
		v.NextUnordered = &c
	}
	v.OrderedUntil = OrderedUntil(s.Cycles)
	return v
}
