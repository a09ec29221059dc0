package testtool

import (
	"flag"
	"strconv"
	"testing"
)

// The test suite has two tiers (README, "Test it"):
//
//   - the fast tier, `go test -short ./...`, is what a developer runs while
//     editing: every test, with the exceptions below;
//   - the full suite, `./scripts/test.sh`, is what CI runs: every test on
//     both engines, with the load-shaped, crash and browser tests.
//
// Under -short the API tests run on SQLite only (storetest.Engines, and so
// apitest.ForEachEngine); the store's own tests still run on both engines
// (storetest.ForEachEngine, storetest.AllEngines: the store is where the
// SQL dialects differ, and its tests are cheap), except its load-shaped
// ones (storetest.ForEachEngineLoaded: thousands of rows or concurrent
// writers, seconds each on PostgreSQL), which run on SQLite only. The
// tests the fast tier leaves out altogether call FullSuiteOnly
// with one of these reasons, so that `go test -short -v` names why.
const (
	// Browser: node, puppeteer and Chromium start per test (seconds each).
	Browser = "browser test (node + Chromium)"
	// Crash: kills a child farebox process with SIGKILL under load and
	// checks what a restart recovers.
	Crash = "kill -9 crash test of a child process under load"
	// Load: load-shaped (many concurrent requests, several processes, or
	// a database cut off under load).
	Load = "load-shaped test"
	// Soak: renders or serves hundreds of times to watch the heap.
	Soak = "soak-shaped test (hundreds of runs, heap watched)"
	// Property: a long randomized property test.
	Property = "long property test"
	// Validator: runs an outside validator in a Java VM or Node.js
	// (PDFBox Preflight per document, Spectral, the TypeScript client
	// generator and compiler), seconds of CPU each.
	Validator = "outside validator (a Java VM or Node.js per run)"
	// Binary: builds the farebox binary and runs it as a child process.
	Binary = "builds the farebox binary and runs it as a child process"
	// Guides: runs every shell guide of docs/ against a built farebox
	// binary on both engines.
	Guides = "runs the docs/ guides against a built binary"
)

// FullSuiteOnly skips t under -short, saying why (one of the reasons
// above). The full suite runs it.
func FullSuiteOnly(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("full suite only (-short): " + why)
	}
}

// WaitBound lets up to n parallel tests of the package run at once in the
// fast tier (-short) unless the command line set -parallel. Call it from
// TestMain, before m.Run, in a package whose tests wait on a database, a
// server, a child process or a timer far more than they use the CPU: the
// default (GOMAXPROCS, two on the team's machines) leaves the cores idle
// while each waits. The full suite keeps the default: there every test runs
// on PostgreSQL too, and n servers with their pools would exceed its
// connections (max_connections, 100 by default).
func WaitBound(n int) {
	flag.Parse()
	if !testing.Short() {
		return
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
