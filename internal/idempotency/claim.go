package idempotency

import "context"

// Claim names the Idempotency-Key a request holds: its scope (the caller's)
// and the key. The zero Claim is no claim. The write that commits the
// request's change takes it as a parameter (store.Store.WriteClaimed,
// InsertOrderAlone) and marks it committed in the same transaction, so a
// take-over after a crash never runs the change again.
type Claim struct{ Scope, Key string }

// Held reports whether c names a claim.
func (c Claim) Held() bool { return c.Key != "" }

type claimKey struct{}

// WithClaim returns ctx carrying c from the transport to the use case the
// request runs (app.ClaimIdempotencyKey). Nothing below the use case reads
// it: the use case hands ClaimOf(ctx) to the write that commits its change.
func WithClaim(ctx context.Context, c Claim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

// ClaimOf is the claim ctx carries (WithClaim), or the zero Claim.
func ClaimOf(ctx context.Context) Claim {
	c, _ := ctx.Value(claimKey{}).(Claim)
	return c
}
