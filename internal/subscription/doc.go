// Package subscription holds the calendar rules of monthly subscriptions:
// cycle bounds, which cycle is current, next and next unordered, the
// cancellation deadline (the 10th), and the reorder and reactivation rules.
// It is pure: the caller loads a State, asks this package, and stores what it
// returns; no SQL, no HTTP, no clock of its own.
//
// Conventions:
//
//   - Cycles are calendar months in the caller's location (clock.Berlin),
//     stored as UTC instants; ValidUntil is the inclusive last second, so a
//     cycle's successor starts exactly one second after it ends and cycles
//     never overlap or leave gaps. A cycle created on order has no dates
//     (zero ValidFrom/ValidUntil) until the first activation picks its month.
//   - Cancellation requested up to and including the 10th of a month (local
//     time, through 23:59:59.999…) ends the subscription at the end of that
//     month, later requests at the end of the next month. An ordered cycle is
//     never taken away: if one ends later, the subscription ends with it.
//   - Errors are apperr values: 422 (Unprocessable) for broken rules, with the
//     exact message the SDKs look for where one exists
//     ("The current subscription cycle was not ordered yet").
//
// Limits: only calendar_month subscriptions exist in the catalog, so cycles
// are months; restore and price-change successors are the caller's business
// (State.Restored only blocks further moves).
package subscription
