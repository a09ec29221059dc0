# Shared helpers of the load scripts: build the binary, prepare a fresh
# database per engine, start and stop a server. Source it; loopback only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${BIN:-/tmp/farebox-bench}"
PORT="${PORT:-18090}"
PGURL_BASE="${PGURL_BASE:-postgres://postgres@127.0.0.1:5432}"
BENCH_DB="${BENCH_DB:-farebox_bench}"

build() { (cd "$ROOT" && go build -o "$BIN" ./cmd/farebox); }

# fresh_env SETUP: exports FAREBOX_DATA_DIR / FAREBOX_DATABASE_URL for a new,
# empty database and sets SETUP_FLAGS (an array of serve flags). SETUP is
# sqlite, postgres, or postgres-journal (PostgreSQL with
# --usage-ledger-journal=journal).
fresh_env() {
  export FAREBOX_DATA_DIR; FAREBOX_DATA_DIR="$(mktemp -d /tmp/farebox-bench.XXXXXX)"
  unset FAREBOX_DATABASE_URL
  SETUP_FLAGS=()
  case "$1" in
    sqlite) ;;
    postgres|postgres-journal)
      psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $BENCH_DB" -c "CREATE DATABASE $BENCH_DB" >/dev/null
      export FAREBOX_DATABASE_URL="$PGURL_BASE/$BENCH_DB?sslmode=disable"
      if [ "$1" = postgres-journal ]; then SETUP_FLAGS=(--usage-ledger-journal=journal); fi ;;
    *) echo "unknown setup $1 (sqlite, postgres, postgres-journal)"; exit 1 ;;
  esac
}

# start_server [flags...]: runs farebox serve in the background on $PORT.
start_server() {
  if curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then
    echo "port $PORT is already serving: set PORT (and BENCH_DB) to run beside another benchmark"; exit 1
  fi
  "$BIN" serve --addr "127.0.0.1:$PORT" --log-level warn --rate-limit 0 --capability-rate-limit 0 --client-rate-limit 0 "$@" >/tmp/farebox-bench.log 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "server did not start:"; cat /tmp/farebox-bench.log; exit 1
}

stop_server() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }

# new_key: creates an account (and the embedded database when the server has
# not made it yet) and prints its live key.
new_key() { "$BIN" accounts create --create --name "bench" --json | sed -E 's/.*"api_key":"([^"]+)".*/\1/'; }

# rps OUTPUT: the Requests/sec figure of a wrk run.
rps() { awk '/Requests\/sec/ {print $2}' <<<"$1"; }
