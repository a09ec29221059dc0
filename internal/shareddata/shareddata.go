// Package shareddata finds the project's shared test data (real GTFS feeds,
// official e-invoice schemas): the directory shared/data in the first
// ancestor of the working directory that has one, or $FAREBOX_SHARED_DATA.
// CI clones the repository next to shared/, developers work in a checkout
// or worktree below it; walking up serves both.
package shareddata

import (
	"os"
	"path/filepath"
)

// Path returns shared/data/<sub>. When it cannot be found it returns a path
// that names the problem, so the test reading it fails with a clear error.
func Path(sub string) string {
	if d := os.Getenv("FAREBOX_SHARED_DATA"); d != "" {
		return filepath.Join(d, sub)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "shared-data-not-found/" + sub
	}
	for {
		cand := filepath.Join(dir, "shared", "data")
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			return filepath.Join(cand, sub)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "shared-data-not-found-above-the-working-directory-set-FAREBOX_SHARED_DATA/" + sub
		}
		dir = parent
	}
}
