package httpapi_test

import (
	"os"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
)

// TestMain runs up to four tests at once in the fast tier. Every test of
// the package is parallel: each starts its own server (apitest) on its own
// database, with its own settings (the PDF renderer's queue included,
// apitest.Options.PDF), and shares nothing with the others but the
// process's PDF renderer, whose turns they take. A test waits on SQLite's
// fsync, child processes and its client more than it computes, so four
// keep the two cores busy; the full suite keeps the default (-parallel
// GOMAXPROCS), which bounds the PostgreSQL connections.
func TestMain(m *testing.M) {
	testtool.WaitBound(4)
	os.Exit(m.Run())
}
