#!/usr/bin/env bash
# Two instances on one PostgreSQL: runs one and then two `farebox serve`
# processes on the same database (ports PORT and PORT+1, usage ledger in
# the database, as deployed) and loads each endpoint class for DUR seconds,
# the clients split evenly across the instances:
#   account     GET /v1/account.json (an authenticated GET: key, ledger row)
#   departures  GET /v1/departures.json at the busiest Metro-North station
#               (metro-north_4, 10 departures, Tue 2026-10-06 08:00 EDT)
#   order       POST orders.json, one single ticket (tools/loadgen)
#   activate    POST activate.json of coupons ordered just before (untimed)
# Per class: requests served, farebox's CPU per request (all instances,
# and each instance's own CPU over the requests it served, from
# /proc/<pid>/stat utime+stime) and PostgreSQL's CPU per request (the
# backends connected to the bench database, from /proc/<pid>/stat; the
# shared WAL writer, checkpointer and autovacuum are not in it).
# On a machine with few cores the request rates say little about scaling
# (the instances, PostgreSQL and the load generators share the cores); the
# CPU per request is the figure: farebox's should stay the same with two
# instances, and PostgreSQL's is the cost each class puts on the database.
# Usage: bench/instances.sh [seconds per run, default 10] [classes, default "account departures order activate"]
BIN="${BIN:-/tmp/farebox-bench-instances}"
PORT="${PORT:-18290}"
BENCH_DB="${BENCH_DB:-farebox_bench_instances}"
LOADGEN="${LOADGEN:-/tmp/farebox-loadgen-instances}"
source "$(dirname "$0")/common.sh"
DUR="${1:-10}"
CLASSES="${2:-account departures order activate}"
CONNS="${CONNS:-64}"
FEED="${FEED:-$(testdata_gtfs test)/nyc/metro-north.zip}"
STATION="${STATION:-farebox-station-metro-north_4}"
AT_MS=$(( $(date -d '2026-10-06T08:00:00-04:00' +%s) * 1000 ))
build
(cd "$ROOT" && go build -o "$LOADGEN" ./tools/loadgen)

fresh_env postgres
KEY=$(new_key)
"$BIN" gtfs import --feed-id metro-north "$FEED" >/dev/null
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)   $(nproc) cores   $(date -u +%FT%TZ)"
printf '%-9s %-11s %9s %9s %14s %14s %28s\n' instances class requests req/s farebox_ms/req postgres_ms/req 'farebox ms/req per instance'

# wrk_class N PATH: wrk on each of the N instances at once (CONNS split
# evenly), prints one row.
wrk_class() {
  local n=$1 path=$2 class=$3 i mark outs=() fb0=() total=0 fbt=0 per="" jobs=()
  mark=$(mktemp)
  for ((i = 0; i < n; i++)); do
    wrk -t1 -c"$((CONNS / n))" -d2s -H "Authorization: Bearer $KEY" "${INSTANCE_URLS[$i]}$path" >/dev/null & # warm-up
    jobs+=($!)
  done
  wait "${jobs[@]}"; jobs=()
  for ((i = 0; i < n; i++)); do fb0+=("$(proc_ticks "${INSTANCE_PIDS[$i]}")"); outs+=("$(mktemp)"); done
  pg_cpu_mark "$BENCH_DB" "$mark"
  for ((i = 0; i < n; i++)); do
    wrk -t"$((2 / n))" -c"$((CONNS / n))" -d"${DUR}s" -H "Authorization: Bearer $KEY" "${INSTANCE_URLS[$i]}$path" >"${outs[$i]}" &
    jobs+=($!)
  done
  wait "${jobs[@]}"
  local pg; pg=$(pg_cpu_since "$BENCH_DB" "$mark")
  for ((i = 0; i < n; i++)); do
    grep -q 'Non-2xx' "${outs[$i]}" && { echo "$class: non-2xx answers:"; cat "${outs[$i]}"; }
    local r t; r=$(awk '/requests in/ {print $1}' "${outs[$i]}"); t=$(( $(proc_ticks "${INSTANCE_PIDS[$i]}") - fb0[i] ))
    total=$((total + r)); fbt=$((fbt + t)); per+="$(per_op "$t" "$r") "
    rm -f "${outs[$i]}"
  done
  rm -f "$mark"
  printf '%-9s %-11s %9d %9.0f %14s %14s %28s\n' "$n" "$class" "$total" "$(awk -v a="$total" -v d="$DUR" 'BEGIN {print a/d}')" \
    "$(per_op "$fbt" "$total")" "$(per_op "$pg" "$total")" "$per"
}

# loadgen_class N MODE: tools/loadgen over the N instances (workers split
# round robin), prints one row from its CPU probe.
loadgen_class() {
  local n=$1 mode=$2 urls pids out
  urls=$(IFS=,; echo "${INSTANCE_URLS[*]}"); pids=$(IFS=,; echo "${INSTANCE_PIDS[*]}")
  out=$("$LOADGEN" -mode "$mode" -url "$urls" -key "$KEY" -c "$CONNS" -d "${DUR}s" -cpu-pid "$pids" -cpu-pg-db "$BENCH_DB" -database-url "$FAREBOX_DATABASE_URL")
  local total rate fb pg per
  total=$(awk '{print $2}' <<<"$out"); rate=$(awk '{print $6}' <<<"$out")
  fb=$(grep -oE 'farebox [0-9.]+ ms/op' <<<"$out" | awk '{print $2}'); pg=$(grep -oE 'postgres [0-9.]+ ms/op' <<<"$out" | awk '{print $2}')
  pg=${pg:--}
  if [ "$n" -gt 1 ]; then per=$(grep -oE 'ops, [0-9.]+ ms/op' <<<"$out" | awk '{printf "%s ", $2}'); else per="$fb"; fi
  printf '%-9s %-11s %9d %9.0f %14s %14s %28s\n' "$n" "$mode" "$total" "$rate" "$fb" "$pg" "$per"
}

DEPARTURES="/v1/departures.json?station_id=$STATION&time=$AT_MS&max_departures=10"
for n in 1 2; do
  start_instances "$n"
  got=$(curl -sf -H "Authorization: Bearer $KEY" "${INSTANCE_URLS[0]}$DEPARTURES" | grep -o '"scheduled_at"' | wc -l)
  [ "$got" = 10 ] || { echo "departures query returned $got entries"; stop_instances; exit 1; }
  for class in $CLASSES; do
    case "$class" in
      account) wrk_class "$n" /v1/account.json account ;;
      departures) wrk_class "$n" "$DEPARTURES" departures ;;
      order|activate) loadgen_class "$n" "$class" ;;
      *) echo "unknown class $class"; stop_instances; exit 1 ;;
    esac
  done
  stop_instances
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
