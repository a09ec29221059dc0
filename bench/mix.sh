#!/usr/bin/env bash
# The realistic mix (search, order, activate, ticket fetch, coupon fetch,
# invoices, departures when available) at a fixed rate for a fixed time:
# on SQLite (one instance) and on PostgreSQL with one and with two
# instances behind loadgen's round robin. Loopback only.
# Usage: bench/mix.sh [rate per second] [seconds]. Departure boards use the
# Caltrain feed of testdata/ (fetched by tools/testdata, imported per run; STATIONS overrides the
# station ids, GTFS_ZIP the feed).
source "$(dirname "$0")/common.sh"
RATE="${1:-200}"
DUR="${2:-30}"
PORT2=$((PORT + 1))
build
(cd "$ROOT" && go build -o /tmp/farebox-loadgen ./tools/loadgen)

# second_server: another instance on $PORT2 sharing the database.
second_server() {
  "$BIN" serve --addr "127.0.0.1:$PORT2" --log-level warn --rate-limit 0 --capability-rate-limit 0 --client-rate-limit 0 >/tmp/farebox-bench-2.log 2>&1 &
  SERVER2_PID=$!
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$PORT2/healthz" >/dev/null && return 0
    sleep 0.1
  done
  echo "second server did not start:"; cat /tmp/farebox-bench-2.log; exit 1
}

GTFS_ZIP="${GTFS_ZIP:-$(testdata_gtfs none)/caltrain-2023.zip}"
STATIONS="${STATIONS:-farebox-station-caltrain_22nd_street,farebox-station-caltrain_bayshore,farebox-station-caltrain_belmont,farebox-station-caltrain_broadway}"

# ready PORT: waits until the instance's /readyz is 200 (feeds loaded).
ready() {
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$1/readyz" >/dev/null && return 0
    sleep 0.1
  done
  echo "instance on $1 not ready"; exit 1
}

mix() {
  /tmp/farebox-loadgen -mode mix -url "$1" -key "$KEY" -rate "$RATE" -d "${DUR}s" ${STATIONS:+-stops "$STATIONS"}
}

for run in sqlite postgres postgres-2; do
  engine="${run%-2}"
  echo "== $run"
  fresh_env "$engine"
  KEY=$(new_key)
  "$BIN" gtfs import --feed-id caltrain "$GTFS_ZIP" >/dev/null
  start_server
  ready "$PORT"
  if [ "$run" = postgres-2 ]; then
    second_server
    ready "$PORT2"
    mix "http://127.0.0.1:$PORT,http://127.0.0.1:$PORT2"
    kill "$SERVER2_PID"; wait "$SERVER2_PID" 2>/dev/null || true
  else
    mix "http://127.0.0.1:$PORT"
  fi
  stop_server
done
