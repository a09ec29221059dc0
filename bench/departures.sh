#!/usr/bin/env bash
# Departures at city scale: imports all nine NYC GTFS feeds with the real
# CLI (time and peak RSS per engine), starts a server that loads them all
# (load time, steady RSS from /proc), then compares /v1/departures.json at
# the busiest NYC station with /healthz on the same server in the same run
# (wrk -t2 -c64; usage ledger on, as in production). /v1/account.json (a
# key lookup and a ledger row, no transit work) runs in the same server as
# the ceiling the pipeline leaves any authenticated endpoint. Loopback only.
# Usage: bench/departures.sh [seconds per wrk run, default 10] [setups, default "sqlite postgres postgres-journal"]
# Own binary, port and database, so it can run beside the other load scripts.
BIN="${BIN:-/tmp/farebox-bench-departures}"
PORT="${PORT:-18190}"
BENCH_DB="${BENCH_DB:-farebox_bench_departures}"
source "$(dirname "$0")/common.sh"
DUR="${1:-10}"

ENGINES="${2:-sqlite postgres postgres-journal}" # postgres-journal: --usage-ledger-journal=journal
NYC="${NYC:-$(testdata_gtfs all)/nyc}" # or a folder with the nine NYC feeds
# The busiest NYC station (departure.Index.BusiestStation: 26,733 events)
# and a weekday morning inside every feed's window (Tue 2026-10-06 08:00 EDT).
STATION="${STATION:-farebox-station-metro-north_4}"
AT_MS=$(( $(date -d '2026-10-06T08:00:00-04:00' +%s) * 1000 ))
build

import_all() { # prints: seconds, peak RSS MB
  local total=0 peak=0 f
  for f in "$NYC"/*.zip; do
    local id; id=$(basename "$f" .zip)
    /usr/bin/time -v -o "$BIN.time" "$BIN" gtfs import --feed-id "$id" "$f" >"$BIN.import" 2>&1 ||
      { cat "$BIN.import"; exit 1; }
    local s rss
    s=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); print (n==3 ? a[1]*3600+a[2]*60+a[3] : a[1]*60+a[2])}' "$BIN.time")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$BIN.time")
    total=$(awk -v a="$total" -v b="$s" 'BEGIN {print a+b}')
    [ "$rss" -gt "$peak" ] && peak=$rss
  done
  printf '%.1f %d\n' "$total" $((peak / 1024))
}

rss_mb() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$1/status"; }
hwm_mb() { awk '/VmHWM/ {print int($2/1024)}' "/proc/$1/status"; }

printf '%-16s %9s %7s %7s %10s %8s %12s %12s %12s %7s %7s %9s\n' engine import_s imp_MB load_s steady_MB peak_MB healthz_rps account_rps depart_rps acc/hz dep/hz dep_p99
for engine in $ENGINES; do
  fresh_env "$engine"
  KEY=$(new_key) # creates the database: gtfs import refuses to start a new one
  read -r imp_s imp_mb < <(import_all)
  t0=$(date +%s.%N)
  start_server "${SETUP_FLAGS[@]}"
  until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.1; done
  load_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b-a}')
  URL="http://127.0.0.1:$PORT/v1/departures.json?station_id=$STATION&time=$AT_MS&max_departures=10"
  n=$(curl -sf -H "Authorization: Bearer $KEY" "$URL" | grep -o '"scheduled_at"' | wc -l)
  [ "$n" = 10 ] || { echo "departures query returned $n entries"; stop_server; exit 1; }
  sleep 2
  steady=$(rss_mb "$SERVER_PID")
  wrk -t2 -c64 -d2s "http://127.0.0.1:$PORT/healthz" >/dev/null                                  # warm-up
  wrk -t2 -c64 -d2s -H "Authorization: Bearer $KEY" "$URL" >/dev/null                            # warm-up
  # Two interleaved rounds, so load from other processes hits all three alike.
  hs=(); as=(); ds=()
  for round in 1 2; do
    h=$(wrk -t2 -c64 -d"${DUR}s" --latency "http://127.0.0.1:$PORT/healthz"); hs+=("$(rps "$h")")
    a=$(wrk -t2 -c64 -d"${DUR}s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/account.json"); as+=("$(rps "$a")")
    d=$(wrk -t2 -c64 -d"${DUR}s" --latency -H "Authorization: Bearer $KEY" "$URL"); ds+=("$(rps "$d")")
  done
  grep -q 'Non-2xx' <<<"$d" && { echo "departures answered non-2xx:"; echo "$d"; }
  peak=$(hwm_mb "$SERVER_PID")
  stop_server
  mean() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.0f", (a+b)/2}'; }
  hr=$(mean "${hs[@]}"); ar=$(mean "${as[@]}"); dr=$(mean "${ds[@]}")
  p99=$(awk '$1=="99%" {print $2}' <<<"$d")
  pct() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.0f%%", a/b*100}'; }
  printf '%-16s %9s %7s %7s %10s %8s %12s %12s %12s %7s %7s %9s\n' "$engine" "$imp_s" "$imp_mb" "$load_s" "$steady" "$peak" \
    "$hr" "$ar" "$dr" "$(pct "$ar" "$hr")" "$(pct "$dr" "$hr")" "$p99"
done
