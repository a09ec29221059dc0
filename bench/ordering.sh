#!/usr/bin/env bash
# Ordering and activation under load: 64 concurrent clients against POST
# orders.json and POST activate.json, on SQLite and PostgreSQL, next to the
# rate of a bare transaction inserting the same rows as an order (measured in
# the same run on the same database): the order, coupon, billable item and
# order.created event ("baseline"), without the event ("baseline-3", the
# twin of earlier runs), and on PostgreSQL the same four rows as one
# autocommitted statement, as ordering writes them for an account without
# webhook endpoints ("baseline-1"). Beside each HTTP run: farebox's CPU and, on
# PostgreSQL, its backends' CPU in milliseconds per operation (noise on a
# shared machine changes these less than the rates).
# Usage: bench/ordering.sh [seconds]   (PORT, BENCH_DB, BIN, LOADGEN to run beside another benchmark)
source "$(dirname "$0")/common.sh"
DUR="${1:-10}"
LOADGEN="${LOADGEN:-/tmp/farebox-loadgen}"
build
(cd "$ROOT" && go build -o "$LOADGEN" ./tools/loadgen)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for engine in sqlite postgres; do
  echo "== $engine"
  fresh_env "$engine"
  KEY=$(new_key)
  start_server
  for mode in order activate; do
    cpu=(-cpu-pid "$SERVER_PID")
    [ "$engine" = postgres ] && cpu+=(-cpu-pg-db "$BENCH_DB" -database-url "$FAREBOX_DATABASE_URL")
    "$LOADGEN" -mode "$mode" -url "http://127.0.0.1:$PORT" -key "$KEY" -c 64 -d "${DUR}s" "${cpu[@]}"
  done
  stop_server
  pgcpu=(); [ "$engine" = postgres ] && pgcpu=(-cpu-pg-db "$BENCH_DB")
  "$LOADGEN" -mode baseline -database-url "${FAREBOX_DATABASE_URL:-}" -data-dir "$FAREBOX_DATA_DIR" -c 64 -d "${DUR}s" "${pgcpu[@]}"
  "$LOADGEN" -mode baseline -events=false -database-url "${FAREBOX_DATABASE_URL:-}" -data-dir "$FAREBOX_DATA_DIR" -c 64 -d "${DUR}s" "${pgcpu[@]}" | sed 's/^baseline /baseline-3/'
  if [ "$engine" = postgres ]; then # the rows as ordering writes them without webhook endpoints: one statement, no BEGIN/COMMIT
    "$LOADGEN" -mode baseline -alone -database-url "$FAREBOX_DATABASE_URL" -c 64 -d "${DUR}s" "${pgcpu[@]}" | sed 's/^baseline /baseline-1/'
  fi
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
