package store_test

import (
	"os"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
)

// TestMain runs up to four tests at once in the fast tier: the conformance
// suite runs every case on both engines, each on a fresh database, and waits
// on PostgreSQL more than it computes.
func TestMain(m *testing.M) {
	testtool.WaitBound(4)
	os.Exit(m.Run())
}
