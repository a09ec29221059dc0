// Package shareddata finds the test data. The suite reads only the
// repository's testdata/ folder (testdata/README.md): the small files the
// repository carries and those `go run ./tools/testdata` fetches into it
// from the package registries (scripts/test.sh runs it), so a clone with
// nothing beside it passes its tests. Big optional data that only
// benchmarks read (the WMATA feed, which no registry serves) comes from
// the project's shared data folder: $FAREBOX_SHARED_DATA, or shared/data
// in the first ancestor of the working directory that has one.
package shareddata

import (
	"os"
	"path/filepath"
)

// Fetch is the command that fetches the registry-served part of testdata/.
const Fetch = "go run ./tools/testdata"

// Path returns testdata/<sub> of the module (the checkout), found from the
// working directory (a package directory when tests run). When there is
// no module root it returns a path that names the problem, so the test
// reading it fails with a clear error.
func Path(sub string) string {
	root, ok := Root()
	if !ok {
		return filepath.Join("module-root-with-go.mod-not-found-above-the-working-directory", "testdata", sub)
	}
	return filepath.Join(root, "testdata", sub)
}

// Root returns the module root: the nearest ancestor of the working
// directory that has a go.mod.
func Root() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !fi.IsDir() {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Shared returns shared/data/<sub> for big optional data (benchmarks):
// $FAREBOX_SHARED_DATA/<sub> when the variable is set, nothing when it is
// set but empty (CI sets it so: no test may depend on shared data), else
// shared/data/<sub> of the first ancestor of the working directory that
// has shared/data. ok is false when there is no shared folder; the path
// then names the problem.
func Shared(sub string) (p string, ok bool) {
	if d, set := os.LookupEnv("FAREBOX_SHARED_DATA"); set {
		if d == "" {
			return filepath.Join("no-shared-data-FAREBOX_SHARED_DATA-is-empty", sub), false
		}
		return filepath.Join(d, sub), true
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("shared-data-not-found", sub), false
	}
	for {
		cand := filepath.Join(dir, "shared", "data")
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			return filepath.Join(cand, sub), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("shared-data-not-found-above-the-working-directory-set-FAREBOX_SHARED_DATA", sub), false
		}
		dir = parent
	}
}

// File returns testdata/<sub> of the repository or, when the repository
// has no such file, the shared data's <sub> if that exists (big optional
// data of benchmarks). Else it returns testdata/<sub>, so that reading it
// fails naming the repository's path.
func File(sub string) string {
	p := Path(sub)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if s, ok := Shared(sub); ok {
		if _, err := os.Stat(s); err == nil {
			return s
		}
	}
	return p
}
