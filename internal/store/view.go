package store

import (
	"context"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
)

// View is the store as a use-case package sees it: reads and write
// transactions through N, the narrow set of Q methods the package declares
// (docs/architecture.md, "Use cases by capability"). The package names
// what it may call; the wiring in cmd/farebox hands it NewView[N](s).
type View[N any] struct{ s *Store }

// NewView returns s seen through N. It panics when Q lacks a method of N
// (a wiring mistake, found when the command starts).
func NewView[N any](s *Store) View[N] {
	if _, ok := any(Q{}).(N); !ok {
		var n *N
		panic(fmt.Sprintf("store.NewView: store.Q does not implement %T", n))
	}
	return View[N]{s: s}
}

// Read returns the read side of the store through N.
func (v View[N]) Read() N { return any(v.s.Read()).(N) }

// Write runs fn in a write transaction through N (Store.Write).
func (v View[N]) Write(ctx context.Context, fn func(q N) error) error {
	return v.s.Write(ctx, func(q Q) error { return fn(any(q).(N)) })
}

// WriteClaimed runs fn in a write transaction through N that also marks
// claim committed (Store.WriteClaimed).
func (v View[N]) WriteClaimed(ctx context.Context, claim idempotency.Claim, fn func(q N) error) error {
	return v.s.WriteClaimed(ctx, claim, func(q Q) error { return fn(any(q).(N)) })
}
