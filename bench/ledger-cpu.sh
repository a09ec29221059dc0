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
# PATH_Q: the request (default /v1/account.json). FEEDS: a folder of GTFS
# zips imported into each setup's database first (the server is then
# waited for until /readyz), for the transit endpoints, e.g.
#   FEEDS=testdata/gtfs/nyc PATH_Q='/v1/departures.json?station_id=farebox-station-metro-north_4&time=1791288000000&max_departures=10'
# BINS: several binaries (A/B of two trees), alternated within each round
# on the same database, one row each (default: $BIN, built from this
# checkout unless BUILD=0). LEDGER: the ledger modes (default "false true").
BIN="${BIN:-/tmp/farebox-bench-ledgercpu}"
PORT="${PORT:-18397}"
BENCH_DB="${BENCH_DB:-farebox_bench_ledgercpu}"
source "$(dirname "$0")/common.sh"
DUR="${1:-10}"
ENGINES="${2:-sqlite postgres postgres-journal}"
ROUNDS="${ROUNDS:-3}"
PATH_Q="${PATH_Q:-/v1/account.json}"
[ -n "${BINS:-}" ] && BUILD=0
[ "${BUILD:-1}" = 0 ] || build # BUILD=0: use $BIN as it is (A/B runs of two binaries)
BINS="${BINS:-$BIN}"
LEDGER="${LEDGER:-false true}"
import_feeds() { # FEEDS' zips into the current setup's database, with the first binary
  local f
  for f in "$FEEDS"/*.zip; do
    "${BINS%% *}" gtfs import --feed-id "$(basename "$f" .zip)" "$f" >/dev/null || exit 1
  done
}
trap '[ -n "${SERVER_PID:-}" ] && stop_server' EXIT
psqlq() { psql -XAtq -h 127.0.0.1 -U postgres -d "$BENCH_DB" -c "$1"; }
pg_pids() { # backends of the bench database and the WAL writer
  psqlq "SELECT pid FROM pg_stat_activity WHERE (datname = '$BENCH_DB' AND pid <> pg_backend_pid()) OR backend_type = 'walwriter'"
}
HZ=$(getconf CLK_TCK)
printf '%-16s %-7s %10s %12s %12s %10s   %s\n' engine ledger req/s farebox_us/r pg_us/r pg_tx/r 'rounds (fb_us pg_us)'
for engine in $ENGINES; do
  fresh_env "$engine"
  BIN="${BINS%% *}"; KEY=$(new_key)
  [ -z "${FEEDS:-}" ] || import_feeds
  declare -A rps_=() fb=() pg=() tx=() all=()
  for _ in $(seq 1 "$ROUNDS"); do
    for ledger in $LEDGER; do for BIN in $BINS; do
      run="$ledger $BIN"
      start_server --usage-ledger="$ledger" "${SETUP_FLAGS[@]}"
      [ -z "${FEEDS:-}" ] || until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.1; done
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
      rps_[$run]+="$(rps "$out") "; fb[$run]+="$f "; pg[$run]+="$p "; tx[$run]+="$x "
      all[$run]+="($f $p) "
    done; done
  done
  for ledger in $LEDGER; do for BIN in $BINS; do
    run="$ledger $BIN"
    [ "$BINS" = "${BINS%% *}" ] || echo "$BIN:"
    printf '%-16s %-7s %10s %12s %12s %10s   %s\n' "$engine" "$ledger" "$(median <<<"${rps_[$run]}")" \
      "$(median <<<"${fb[$run]}")" "$(median <<<"${pg[$run]}")" "$(median <<<"${tx[$run]}")" "${all[$run]}"
  done; done
  unset rps_ fb pg tx all
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
