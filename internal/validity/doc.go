// Package validity decides when a ticket is valid and when a coupon may be
// activated. It is pure: no storage, no HTTP, no clock of its own (callers pass
// "now" from their clock.Clock).
//
// Conventions used everywhere in farebox:
//
//   - All instants are UTC and whole seconds. A validity window is [from, until]
//     where until is the inclusive last second (January 2026 in Berlin is
//     2025-12-31T23:00:00Z .. 2026-01-31T22:59:59Z). Contains treats the whole
//     last second as valid.
//   - Calendar rules (months, service days) are computed in the location the
//     caller passes (clock.Berlin in production), never with a fixed offset.
//   - Single tickets (duration_in_minutes) are valid from their start for their
//     duration. Day passes (ticket_type "day") are valid from their start to the
//     end of the service day, which like German day tickets ("bis 3 Uhr des
//     Folgetages") is 03:00 local time of the calendar day after the start, so
//     until is 02:59:59 local. A day pass ignores duration_in_minutes.
//   - calendar_month tickets are valid for the whole calendar month (in loc)
//     that contains their start.
//
// Limits: validity_in_minutes is read as the activation horizon of a coupon
// (how long after the order the ticket may start), defaulting to
// DefaultHorizon; the 72-hour rule of API v8 applies to first activations only,
// never to subscription reactivations, and the caller decides by API version
// whether to enforce it.
package validity
