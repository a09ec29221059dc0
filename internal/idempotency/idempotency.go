// Package idempotency holds the record kept for an Idempotency-Key: the hash
// of the request that claimed the key, the claim's lease, and once the
// request has run, its response to replay. The store persists it (table
// idempotency_keys); the HTTP pipeline decides from it whether a request
// runs, waits, is refused or is answered by replay (docs/operations.md).
package idempotency

import (
	"time"

	"github.com/farebox/farebox/internal/account"
)

// Scope is the scope of the Idempotency-Keys of requests made with p's
// key: one per account and environment.
func Scope(p account.Principal) string {
	return "account:" + p.AccountID + ":" + string(p.Environment)
}

// Record is a stored Idempotency-Key and, once complete, its response.
type Record struct {
	RequestHash string
	Status      int // 0 while the first request is still running
	ContentType string
	Body        []byte
	LockedUntil time.Time
	// Committed says the request's own transaction committed although no
	// response was stored (its instance died in between): it must not run
	// again.
	Committed bool
}

// Answer is a kept response with the scope and key it answers (an
// erasure looks for the answers that hold the erased data).
type Answer struct {
	Scope, Key string
	Body       []byte
}
