#!/usr/bin/env bash
# What service alerts cost a departure board, measured on the server alone:
# the Caltrain feed imported twice (feed ids caltrain and plain, the same
# timetable and TripUpdates), alerts (tools/alertsfeed: one to three on every
# entry of the caltrain board, 3.6x the JSON) configured for caltrain only,
# and wrk (a process of its own) asking for 22nd Street's board of both at
# the same instant, plain and caltrain alternating ABBA for ROUNDS rounds
# (default 6), with and without Accept-Encoding: gzip. Reports the server's
# CPU-µs per request (utime+stime of farebox serve from /proc, which the
# machine's other load disturbs less than req/s), req/s and the bytes on
# the wire, medians per cell, and what alerts cost: the median over the
# rounds of caltrain's CPU per request against plain's in the same round
# (run back to back, so a machine that slows down or speeds up between
# rounds moves both). SQLite, usage ledger on (the journal).
# Usage: bench/alerts.sh [seconds per run, default 5] [board sizes, default "10 100"]
# Own binary, port and data dir, so it can run beside the other load scripts.
BIN="${BIN:-/tmp/farebox-bench-alerts}"
PORT="${PORT:-18290}"
source "$(dirname "$0")/common.sh"
DUR="${1:-5}"
MAXES="${2:-10 100}"
ROUNDS="${ROUNDS:-6}"
GTFS="${GTFS:-$(testdata_gtfs none)}"
build
trap '[ -n "${SERVER_PID:-}" ] && stop_server' EXIT
fresh_env sqlite
KEY=$(new_key)
for feed in caltrain plain; do
  "$BIN" gtfs import --feed-id "$feed" --realtime-file "$GTFS/caltrain-2023-trip-updates.pb" "$GTFS/caltrain-2023.zip" >/dev/null
done
ALERTS="$FAREBOX_DATA_DIR/alerts.pb"
START=$(cd "$ROOT" && go run ./tools/alertsfeed "$ALERTS")
AT=$(((START + 90) * 1000)) # 17:02 PST: the agency alert applies to every Caltrain entry
# The sample's header is from 2023: keep its predictions and alerts.
start_server --realtime-alerts "caltrain=$ALERTS" --realtime-max-age 1000000h
until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.2; done
HZ=$(getconf CLK_TCK)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %-4s %-9s %10s %10s %8s   %s\n' encoding max board 'cpu_us/req' req/s wire_B 'rounds (cpu_us/req)'
for enc in gzip identity; do
  for max in $MAXES; do
    declare -A cpu=() rate=() wire=() this=()
    ratios=""
    for round in $(seq 1 "$ROUNDS"); do
      order="plain caltrain"; [ $((round % 2)) = 0 ] && order="caltrain plain"
      for feed in $order; do
        url="http://127.0.0.1:$PORT/v1/departures.json?station_id=farebox-station-${feed}_22nd_street&time=$AT&max_departures=$max"
        hdr=(-H "Authorization: Bearer $KEY" -H "Accept-Encoding: $enc")
        wrk -t2 -c32 -d1s "${hdr[@]}" "$url" >/dev/null # warm-up: the board is cached (and compressed)
        wire[$feed]=$(curl -s "${hdr[@]}" "$url" | wc -c)
        t0=$(proc_ticks "$SERVER_PID")
        out=$(wrk -t2 -c32 -d"${DUR}s" "${hdr[@]}" "$url")
        t1=$(proc_ticks "$SERVER_PID")
        grep -q 'Non-2xx' <<<"$out" && { echo "non-2xx answers:"; echo "$out"; exit 1; }
        n=$(awk '/requests in/ {print $1}' <<<"$out")
        c=$(awk -v a="$t0" -v b="$t1" -v n="$n" -v hz="$HZ" 'BEGIN {printf "%.1f", (b-a)/hz*1e6/n}')
        cpu[$feed]+="$c "; this[$feed]=$c
        rate[$feed]+="$(rps "$out") "
      done
      ratios+="$(awk -v a="${this[caltrain]}" -v b="${this[plain]}" 'BEGIN {printf "%.4f", a/b}') "
    done
    for feed in plain caltrain; do
      printf '%-9s %-4s %-9s %10s %10s %8s   %s\n' "$enc" "$max" "$feed" "$(median <<<"${cpu[$feed]}")" \
        "$(median <<<"${rate[$feed]}")" "${wire[$feed]}" "${cpu[$feed]}"
    done
    awk -v r="$(median <<<"$ratios")" -v e="$enc" -v m="$max" -v all="$ratios" \
      'BEGIN {printf "%-9s %-4s alerts cost %+.1f%% CPU per request (median of the rounds; ratios %s)\n", e, m, (r-1)*100, all}'
    unset cpu rate wire this
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
