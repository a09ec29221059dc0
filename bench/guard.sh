#!/usr/bin/env bash
# The benchmark guard (issue 33 §5): the benchmarks behind the figures of
# docs/invoicing.md and docs/departures.md, a few iterations each, so that a regression shows in
# the change that caused it. Not a pass/fail check (the machine is shared and
# its load varies): the numbers are printed into the CI log with the load
# average beside them and kept in bench/results/guard-<commit>.txt.
# About a minute on the 2-core machine.
# Usage: bench/guard.sh   (FAREBOX_SHARED_DATA unset: no WMATA figure)
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
  FAREBOX_TEST_DATABASE_URL= run ./internal/httpapi 'InvoicePDFDownloads' 16
} 2>&1 | tee "$out"
