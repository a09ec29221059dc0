// Package app holds farebox's use cases (authenticate, place an order,
// activate a coupon, issue an invoice, ...). A use case takes the time once
// from the injected clock, runs its writes in one store transaction,
// enforces tenancy (another account's record is apperr.NotFound, exactly
// like an unknown id) and returns domain values; package httpapi turns them
// into JSON. app never logs and never speaks HTTP.
package app
