#!/usr/bin/env bash
# What the usage ledger costs in CPU per request, a measure the noise of a
# shared machine changes much less than req/s: an authenticated GET
# (/v1/account.json) at 64 connections with wrk for a fixed time, with and
# without the ledger, alternating for ROUNDS rounds (default 3). For each run
# it reports farebox's CPU-µs per request (utime+stime of the serve process
# from /proc), PostgreSQL's CPU-µs per request (the backends connected to the
# bench database plus the WAL writer, from /proc; PostgreSQL on this host)
# and PostgreSQL transactions per request (pg_stat_database.xact_commit).
# Medians of the rounds are printed per setup and ledger mode.
# Usage: bench/ledger-cpu.sh [seconds per run, default 10] [setups, default "sqlite postgres postgres-journal"]
# Own binary, port and database, so it can run beside the other load scripts.
BIN="${BIN:-/tmp/farebox-bench-ledgercpu}"
PORT="${PORT:-18397}"
BENCH_DB="${BENCH_DB:-farebox_bench_ledgercpu}"
source "$(dirname "$0")/common.sh"
DUR="${1:-10}"
ENGINES="${2:-sqlite postgres postgres-journal}"
ROUNDS="${ROUNDS:-3}"
PATH_Q="${PATH_Q:-/v1/account.json}"
[ "${BUILD:-1}" = 0 ] || build # BUILD=0: use $BIN as it is (A/B runs of two binaries)
trap '[ -n "${SERVER_PID:-}" ] && stop_server' EXIT
psqlq() { psql -XAtq -h 127.0.0.1 -U postgres -d "$BENCH_DB" -c "$1"; }
pg_pids() { # backends of the bench database and the WAL writer
  psqlq "SELECT pid FROM pg_stat_activity WHERE (datname = '$BENCH_DB' AND pid <> pg_backend_pid()) OR backend_type = 'walwriter'"
}
HZ=$(getconf CLK_TCK)
printf '%-16s %-7s %10s %12s %12s %10s   %s\n' engine ledger req/s farebox_us/r pg_us/r pg_tx/r 'rounds (fb_us pg_us)'
for engine in $ENGINES; do
  fresh_env "$engine"
  KEY=$(new_key)
  declare -A rps_=() fb=() pg=() tx=() all=()
  for _ in $(seq 1 "$ROUNDS"); do
    for ledger in false true; do
      start_server --usage-ledger="$ledger" "${SETUP_FLAGS[@]}"
      wrk -t2 -c64 -d2s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT$PATH_Q" >/dev/null # warm-up, opens the pools
      pids=(); xact0=0
      if [ -n "${FAREBOX_DATABASE_URL:-}" ]; then
        mapfile -t pids < <(pg_pids)
        xact0=$(psqlq "SELECT xact_commit FROM pg_stat_database WHERE datname = '$BENCH_DB'")
      fi
      f0=$(proc_ticks "$SERVER_PID"); p0=$(proc_ticks "${pids[@]}")
      out=$(wrk -t2 -c64 -d"${DUR}s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT$PATH_Q")
      f1=$(proc_ticks "$SERVER_PID"); p1=$(proc_ticks "${pids[@]}")
      xact1=$xact0
      if [ -n "${FAREBOX_DATABASE_URL:-}" ]; then
        sleep 0.6 # pg_stat_database is reported with a delay (stats_fetch / PGSTAT_MIN_INTERVAL)
        xact1=$(psqlq "SELECT xact_commit FROM pg_stat_database WHERE datname = '$BENCH_DB'")
      fi
      stop_server
      grep -q 'Non-2xx' <<<"$out" && { echo "non-2xx answers:"; echo "$out"; exit 1; }
      n=$(awk '/requests in/ {print $1}' <<<"$out")
      f=$(awk -v a="$f0" -v b="$f1" -v n="$n" -v hz="$HZ" 'BEGIN {printf "%.1f", (b-a)/hz*1e6/n}')
      p=$(awk -v a="$p0" -v b="$p1" -v n="$n" -v hz="$HZ" 'BEGIN {printf "%.1f", (b-a)/hz*1e6/n}')
      x=$(awk -v a="$xact0" -v b="$xact1" -v n="$n" 'BEGIN {printf "%.3f", (b-a)/n}')
      rps_[$ledger]+="$(rps "$out") "; fb[$ledger]+="$f "; pg[$ledger]+="$p "; tx[$ledger]+="$x "
      all[$ledger]+="($f $p) "
    done
  done
  for ledger in false true; do
    printf '%-16s %-7s %10s %12s %12s %10s   %s\n' "$engine" "$ledger" "$(median <<<"${rps_[$ledger]}")" \
      "$(median <<<"${fb[$ledger]}")" "$(median <<<"${pg[$ledger]}")" "$(median <<<"${tx[$ledger]}")" "${all[$ledger]}"
  done
  unset rps_ fb pg tx all
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
