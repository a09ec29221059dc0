package idempotency

// Claim names the Idempotency-Key a request holds: its scope (the caller's)
// and the key. The zero Claim is no claim. The write that commits the
// request's change takes it as a parameter (store.Store.WriteClaimed,
// InsertOrderAlone) and marks it committed in the same transaction, so a
// take-over after a crash never runs the change again.
type Claim struct{ Scope, Key string }

// Held reports whether c names a claim.
func (c Claim) Held() bool { return c.Key != "" }
