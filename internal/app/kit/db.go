package kit

import (
	"context"

	"github.com/farebox/farebox/internal/idempotency"
)

// DB is the database as a capability package sees it through its own
// narrow Queries (store.View implements it for any Queries that store.Q
// satisfies). A package declares `type DB = kit.DB[Queries]`.
type DB[Q any] interface {
	Read() Q
	Write(ctx context.Context, fn func(q Q) error) error
	// WriteClaimed is Write for the write that commits a request's change:
	// it also marks the request's Idempotency-Key claim (store.Store.WriteClaimed).
	WriteClaimed(ctx context.Context, claim idempotency.Claim, fn func(q Q) error) error
}
