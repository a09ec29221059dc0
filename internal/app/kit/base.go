package kit

import (
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
)

// Base is what every capability service holds: its view of the database
// (DB, the package's own narrow interface), the service clock and the
// prefix of the ids it makes. A service embeds it.
type Base[DB any] struct {
	DB    DB
	Clock clock.Clock
	IDs   ident.Prefix
}

// NewBase returns the base over db; c is the service clock (nil: the
// system clock), ids the id prefix ("": farebox).
func NewBase[DB any](db DB, c clock.Clock, ids ident.Prefix) Base[DB] {
	if c == nil {
		c = clock.System{}
	}
	if ids == "" {
		ids = "farebox"
	}
	return Base[DB]{DB: db, Clock: c, IDs: ids}
}
