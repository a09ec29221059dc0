// Package app holds farebox's use cases (authenticate, place an order,
// activate a coupon, issue an invoice, ...). A use case takes the time once
// from the injected clock, runs its writes in one store transaction,
// enforces tenancy (another account's record is apperr.NotFound, exactly
// like an unknown id) and returns domain values. responses.go turns those
// into the API's JSON shapes, so package httpapi writes them without naming a
// domain type; app also holds the request work around the handlers
// (Idempotency-Key claims, the billing rule, session tokens; wallet
// passes are package wallets').
// app never routes or decodes HTTP, and use cases never log.
//
// Transit is the one long-running part: each instance's view of the stored
// GTFS feeds (an atomically swapped departure index, rebuilt when a stored
// feed version changes) and its GTFS-Realtime pollers. It reports loads and
// failures through the logger it is given (TransitOptions.Log).
package app
