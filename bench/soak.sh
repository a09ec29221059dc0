#!/usr/bin/env bash
# Memory under a day of invoicing: N invoices (default 10,000), each with all
# its files (PDF, UBL and CII: the customer has electronic_invoicing), through
# the HTTP API on one engine, C at a time (default 4). Every EVERY invoices
# (default 1,000), with the server idle, it prints the server's RSS and its
# live heap after a forced GC (pprof heap?gc=1 on --pprof-addr). The first
# reading at or after WARMUP invoices (default 3,000: SQLite's page caches fill
# first) is the baseline; the run fails when a later RSS or live heap exceeds
# it by more than 10 % (MAX_GROWTH=0.10).
# Usage: bench/soak.sh [sqlite|postgres] [invoices]   (or ENGINE=…, N=…)
: "${BENCH_DB:=farebox_soak}" # its own PostgreSQL database, beside the other load scripts
source "$(dirname "$0")/common.sh"
ENGINE="${1:-${ENGINE:-sqlite}}"
N="${2:-${N:-10000}}"
EVERY="${EVERY:-1000}"
WARMUP="${WARMUP:-3000}"
C="${C:-4}"
PPROF_PORT="${PPROF_PORT:-$((PORT + 1))}"
LOADGEN="${LOADGEN:-/tmp/farebox-soak-loadgen}"
build
(cd "$ROOT" && go build -o "$LOADGEN" ./tools/loadgen)
fresh_env "$ENGINE"
start_server --pprof-addr "127.0.0.1:$PPROF_PORT" "${SETUP_FLAGS[@]}"
trap stop_server EXIT
KEY=$(new_key) # after the server created the database (operator commands refuse a missing one)
echo "== $ENGINE: $N invoices with PDF, UBL and CII, $C at a time"
"$LOADGEN" -mode soak -url "http://127.0.0.1:$PORT" -key "$KEY" -n "$N" -every "$EVERY" -warmup "$WARMUP" -c "$C" \
  -pid "$SERVER_PID" -pprof "http://127.0.0.1:$PPROF_PORT" -max-growth "${MAX_GROWTH:-0.10}"
