#!/usr/bin/env bash
# The benchmark guard (issue 33 §5): the benchmarks behind the figures of
# docs/invoicing.md and docs/departures.md, a few iterations each, so that a regression shows in
# the change that caused it. Not a pass/fail check (the machine is shared and
# its load varies): the numbers are printed into the CI log with the load
# average beside them and kept in bench/results/guard-<commit>.txt.
# The downloads run on SQLite and, with FAREBOX_TEST_DATABASE_URL, PostgreSQL.
# On the 2-core machine it takes about 12 s of CPU (1 min 39 s of wall time
# at load average 35, 2026-11-29). WMATA is not in the suite's data, so its
# figure stays with BenchmarkParseWMATA and the shared folder.
# Usage: bench/guard.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
out="bench/results/guard-$(git rev-parse --short HEAD 2>/dev/null || echo worktree).txt"
run() { # package, benchmark pattern, iterations
  echo "-- $1 -bench '$2' -benchtime $3x ($(uptime | sed 's/.*load/load/'))"
  go test "$1" -run '^$' -bench "$2" -benchtime "$3x" -benchmem -count 1 | grep -E '^(Benchmark|ok|FAIL)'
}
{
  echo "== benchmark guard $(git rev-parse --short HEAD 2>/dev/null) $(date -u +%FT%TZ), $(nproc) cores"
  run ./internal/invoicedoc/xrechnung 'Encode(UBL|CII)$' 2000
  run ./internal/invoicedoc/pdf 'Render$' 40
  run ./internal/gtfs 'ParseFeeds' 3
  run ./internal/httpapi 'InvoicePDFDownloads' 16
} 2>&1 | tee "$out"
