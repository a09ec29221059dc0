#!/usr/bin/env bash
# Ordering and activation under load: 64 concurrent clients against POST
# orders.json and POST activate.json, on SQLite and PostgreSQL, next to the
# rate of a bare transaction inserting the same rows as an order (measured in
# the same run on the same database). Usage: bench/ordering.sh [seconds]
source "$(dirname "$0")/common.sh"
DUR="${1:-10}"
build
(cd "$ROOT" && go build -o /tmp/farebox-loadgen ./tools/loadgen)
for engine in sqlite postgres; do
  echo "== $engine"
  fresh_env "$engine"
  KEY=$(new_key)
  start_server
  /tmp/farebox-loadgen -mode order -url "http://127.0.0.1:$PORT" -key "$KEY" -c 64 -d "${DUR}s"
  /tmp/farebox-loadgen -mode activate -url "http://127.0.0.1:$PORT" -key "$KEY" -c 64 -d "${DUR}s"
  stop_server
  /tmp/farebox-loadgen -mode baseline -database-url "${FAREBOX_DATABASE_URL:-}" -data-dir "$FAREBOX_DATA_DIR" -c 64 -d "${DUR}s"
done
