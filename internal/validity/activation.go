package validity

import (
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
)

// ActivatableFor is the v8 rule: a coupon can be activated for the first time
// only within 72 hours of its order.
const ActivatableFor = 72 * time.Hour

// ClockSkew is how far before the earliest activation start a requested start
// may lie and still be accepted (it is moved to the earliest start). It absorbs
// phones whose clocks run a little behind.
const ClockSkew = 5 * time.Minute

// The 422 message prefixes the SDKs branch on (client-contract.md 5.1). Each
// error built here starts with exactly one of them; the codes are in codes.go.
const (
	MsgNotYet    = "Ticket cannot be activated yet"
	MsgAnymore   = "Ticket cannot be activated anymore"
	MsgWithin72h = "Ticket cannot be activated anymore. It must be activated within 3 days of order."
	FieldStart   = "/activation_start_datetime"
)

// ActivationWindow bounds the start of a coupon's first ticket; the coupon
// shows these values as earliest_activation_start_datetime,
// latest_activation_start_datetime and activatable_until.
type ActivationWindow struct {
	Earliest         time.Time // first allowed start
	Latest           time.Time // last allowed start (inclusive second)
	ActivatableUntil time.Time // ordered_at + 72h (v8)
}

// Activation computes a coupon's activation window from its order time:
// duration tickets may start from the order until the order plus the
// product's horizon; calendar_month tickets may start in the month of the
// order or in the next month (in loc).
func Activation(def Definition, orderedAt time.Time, loc *time.Location) ActivationWindow {
	orderedAt = orderedAt.UTC().Truncate(time.Second)
	w := ActivationWindow{ActivatableUntil: ActivatableUntil(orderedAt)}
	if def.Kind == CalendarMonth {
		w.Earliest, _ = MonthWindow(orderedAt, loc)
		nextFrom := clock.NextMonthStart(orderedAt, loc)
		_, w.Latest = MonthWindow(nextFrom, loc)
		return w
	}
	w.Earliest = orderedAt
	w.Latest = orderedAt.Add(def.Horizon - time.Second)
	return w
}

// ActivatableUntil is the v8 deadline for the first activation of a coupon
// ordered at orderedAt.
func ActivatableUntil(orderedAt time.Time) time.Time {
	return orderedAt.UTC().Truncate(time.Second).Add(ActivatableFor)
}

// ParseStart parses an incoming activation_start_datetime (RFC 3339 with Z,
// +hh:mm or +hhmm, fractions allowed); an empty string means "not given" and
// returns the zero time. A malformed value is a 422 naming the field.
func ParseStart(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := clock.ParseTimestamp(s)
	if err != nil {
		return time.Time{}, apperr.Validation("validity.ParseStart", CodeBadStart, FieldStart,
			"activation_start_datetime must be an ISO 8601 timestamp such as 2025-06-01T00:00:00Z or 2025-06-01T00:00:00+0200").WithCause(err)
	}
	return t, nil
}

// Check is the v8 deadline check for a first activation at now; it returns
// nil when enforce is false (API versions before v8).
func (w ActivationWindow) Check(now time.Time, enforce bool) error {
	if !enforce || !now.After(w.ActivatableUntil) {
		return nil
	}
	return apperr.E("validity.Check", apperr.Unprocessable, CodeWindowExpired,
		MsgWithin72h+" It was activatable until "+clock.Timestamp(w.ActivatableUntil)+".")
}

// Start resolves the start of a first ticket: requested (zero = not given,
// then now) must lie within [Earliest-ClockSkew, Latest]; a start within the
// skew is moved to Earliest. The resulting ticket must not already be over at
// now. It returns the start and the ticket's validity window.
func (w ActivationWindow) Start(def Definition, requested, now time.Time, loc *time.Location) (start, from, until time.Time, err error) {
	const op = "validity.Start"
	start = requested
	if start.IsZero() {
		start = now
	}
	start = start.UTC().Truncate(time.Second)
	if start.Before(w.Earliest) {
		if w.Earliest.Sub(start) > ClockSkew {
			return time.Time{}, time.Time{}, time.Time{}, apperr.Validation(op, CodeNotYet, FieldStart,
				MsgNotYet+": the earliest activation start is "+clock.Timestamp(w.Earliest)+".")
		}
		start = w.Earliest
	}
	if start.After(w.Latest) {
		return time.Time{}, time.Time{}, time.Time{}, apperr.Validation(op, CodeAnymore, FieldStart,
			MsgAnymore+": the latest activation start was "+clock.Timestamp(w.Latest)+".")
	}
	from, until = Window(def, start, loc)
	if !now.Before(until.Add(time.Second)) {
		return time.Time{}, time.Time{}, time.Time{}, apperr.Validation(op, CodeAnymore, FieldStart,
			MsgAnymore+": a ticket starting at "+clock.Timestamp(start)+" would have ended at "+clock.Timestamp(until)+".")
	}
	return start, from, until, nil
}
