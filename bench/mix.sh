#!/usr/bin/env bash
# The realistic mix (search, order, activate, ticket fetch, coupon fetch,
# invoices, departures when available) at a fixed rate for a fixed time:
# on SQLite (one instance) and on PostgreSQL with one and with two
# instances behind loadgen's round robin. Loopback only.
# Usage: bench/mix.sh [rate per second] [seconds]; STATIONS=id,id adds departure boards.
source "$(dirname "$0")/common.sh"
RATE="${1:-200}"
DUR="${2:-30}"
PORT2=$((PORT + 1))
build
(cd "$ROOT" && go build -o /tmp/farebox-loadgen ./tools/loadgen)

# second_server: another instance on $PORT2 sharing the database.
second_server() {
  "$BIN" serve --addr "127.0.0.1:$PORT2" --log-level warn --rate-limit 0 >/tmp/farebox-bench-2.log 2>&1 &
  SERVER2_PID=$!
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$PORT2/healthz" >/dev/null && return 0
    sleep 0.1
  done
  echo "second server did not start:"; cat /tmp/farebox-bench-2.log; exit 1
}

mix() {
  /tmp/farebox-loadgen -mode mix -url "$1" -key "$KEY" -rate "$RATE" -d "${DUR}s" ${STATIONS:+-stops "$STATIONS"}
}

for run in sqlite postgres postgres-2; do
  engine="${run%-2}"
  echo "== $run"
  fresh_env "$engine"
  KEY=$(new_key)
  start_server
  if [ "$run" = postgres-2 ]; then
    second_server
    mix "http://127.0.0.1:$PORT,http://127.0.0.1:$PORT2"
    kill "$SERVER2_PID"; wait "$SERVER2_PID" 2>/dev/null || true
  else
    mix "http://127.0.0.1:$PORT"
  fi
  stop_server
done
