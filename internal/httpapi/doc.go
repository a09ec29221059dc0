// Package httpapi is farebox's HTTP transport. routes.go is the whole API
// surface in one table; every handler is thin (decode, validate, one app
// call, encode) and returns an error that errors.go maps to a status code
// and the JSON error body of decisions.md. It imports app, apperr, the
// kernel and the OpenAPI document of this module, never a store, domain or
// adapter package (internal/layers_test.go): app returns what a handler
// writes (the response shapes of app/responses.go, departure boards,
// passes), and idempotency claims, billing, session tokens and barcodes
// are app's work.
//
// Request pipeline, outermost first: request id, panic recovery, access log
// and metrics, CORS, body limit, routing (JSON 404/405 for unmatched
// requests), then per route: authentication by endpoint group, idempotency
// for POST with Idempotency-Key, the handler, and the usage ledger. The
// response is buffered until the ledger took its row: the deferred ledger
// (the default in database mode) commits it within its window after the
// response, the others before it (docs/operations.md "Billing"); a row the
// ledger refuses turns the response into 503 usage_ledger_unavailable.
package httpapi
