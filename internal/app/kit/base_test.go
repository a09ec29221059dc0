package kit_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/clock/clocktest"
)

// TestNewBase: a service built without a clock runs on the system clock
// and one built without an id prefix makes farebox ids; what is given is
// kept.
func TestNewBase(t *testing.T) {
	b := kit.NewBase("view", nil, "")
	if b.DB != "view" || b.IDs != "farebox" {
		t.Errorf("defaults: DB %q, IDs %q", b.DB, b.IDs)
	}
	if _, ok := b.Clock.(clock.System); !ok {
		t.Errorf("default clock = %T, want clock.System", b.Clock)
	}
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	b = kit.NewBase("view", clocktest.NewFixed(at), "acme")
	if b.IDs != "acme" || !b.Clock.Now().Equal(at) {
		t.Errorf("given: IDs %q, now %v", b.IDs, b.Clock.Now())
	}
}
