// Package app is the ticketing room: ordering and activation, coupons and
// their tickets, subscriptions (cycles, reorders, cancellations and their
// ends), the restore of an order, ticket revocations and the traveller's
// coupon page, with the API's answer shapes of those objects
// (responses.go, views.go, ticketing_views.go) and the recording of their
// events (events.go). The other capabilities live in packages of their
// own under internal/app (docs/architecture.md, "Use cases by
// capability"); app imports none of them, only the shared services below
// it (products, passes, deliveries, books, events' parts) and the kit.
//
// A use case takes the time once from the injected clock, runs its writes
// in one store transaction, enforces tenancy (another account's record is
// apperr.NotFound, exactly like an unknown id) and returns domain values or
// views; a use case that commits a request's change takes the request's
// Idempotency-Key claim as a parameter and hands it to that one write. app
// also holds the request work around the handlers (Idempotency-Key claims,
// session tokens). app never routes or decodes HTTP, and use cases never
// log.
package app
