#!/usr/bin/env bash
# Memory of a serving process with all nine NYC GTFS feeds: imports them
# with the real CLI, starts `farebox serve`, waits for /readyz, asks one
# board (so the board cache and the request path exist) and samples VmRSS
# from /proc at 5, 10, 20 and 30 s after ready; steady RSS is the last
# sample. The import/load part of bench/departures.sh without wrk.
# Usage: bench/departures-memory.sh [setups, default "sqlite"]
BIN="${BIN:-/tmp/farebox-bench-departures-memory}"
PORT="${PORT:-18191}"
BENCH_DB="${BENCH_DB:-farebox_bench_departures_memory}"
source "$(dirname "$0")/common.sh"
NYC="${NYC:-$(testdata_gtfs all)/nyc}" # or a folder with the nine NYC feeds
STATION="${STATION:-farebox-station-metro-north_4}"
AT_MS=$(( $(date -d '2026-10-06T08:00:00-04:00' +%s) * 1000 ))
build
rss_mb() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$1/status"; }
rss_mib_exact() { awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$1/status"; }
printf '%-10s %7s %8s %8s %8s %8s %8s\n' engine load_s rss5_MiB rss10 rss20 rss30 hwm_MiB
for engine in ${1:-sqlite}; do
  fresh_env "$engine"
  KEY=$(new_key) # creates the database (gtfs import needs an existing one)
  for f in "$NYC"/*.zip; do
    "$BIN" gtfs import --feed-id "$(basename "$f" .zip)" "$f" >/dev/null 2>&1 || { echo "import of $f failed"; exit 1; }
  done
  t0=$(date +%s.%N)
  start_server "${SETUP_FLAGS[@]}"
  until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.1; done
  load_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b-a}')
  curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/departures.json?station_id=$STATION&time=$AT_MS&max_departures=10" >/dev/null
  s=(); prev=0
  for at in 5 10 20 30; do sleep $((at - prev)); prev=$at; s+=("$(rss_mib_exact "$SERVER_PID")"); done
  hwm=$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$SERVER_PID/status")
  stop_server
  printf '%-10s %7s %8s %8s %8s %8s %8s\n' "$engine" "$load_s" "${s[@]}" "$hwm"
done
