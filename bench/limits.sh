#!/usr/bin/env bash
# The cost of the per-key rate limit per request, in process and in Redis
# (--redis-url; docs/scaling.md "Limits across instances"): an
# authenticated GET (/v1/account.json, wrk -t2 -c64) on SQLite in setups
# that alternate for ROUNDS rounds (default 5, the order rotating each
# round):
#   off     --rate-limit 0
#   local   a limit no request reaches, its buckets in this process
#   redis   the same limit, its buckets in the local Redis (REDIS_URL)
# For each setup: req/s, farebox's and redis-server's CPU-µs per request
# (utime+stime from /proc), medians, and the cost against "off" as the
# median over the rounds of the ratio within the round.
# Usage: bench/limits.sh [seconds per run, default 8] [setups]
# Own binary, port and data dir, so it can run beside the other load scripts.
BIN="${BIN:-/tmp/farebox-bench-limits}"
PORT="${PORT:-18511}"
source "$(dirname "$0")/common.sh"
DUR="${1:-8}"
SETUPS="${2:-off local redis}"
ROUNDS="${ROUNDS:-5}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
PREFIX="farebox-bench-limits:$$:"
build
trap '[ -n "${SERVER_PID:-}" ] && stop_server; redis-cli -u "$REDIS_URL" --scan --pattern "$PREFIX*" | xargs -r redis-cli -u "$REDIS_URL" del >/dev/null' EXIT
REDIS_PID=$(pgrep -x redis-server | head -n1)
fresh_env sqlite
KEY=$(new_key)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r -a setups <<<"$SETUPS"
declare -A rate=() cpu=() rcpu=() cost=()
for round in $(seq 1 "$ROUNDS"); do
  declare -A this=()
  for s in $(rotated "$round" "${setups[@]}"); do
    case "$s" in
      off) flags=(--rate-limit 0) ;;
      local) flags=(--rate-limit 1000000 --rate-burst 1000000000) ;;
      redis) flags=(--rate-limit 1000000 --rate-burst 1000000000 --redis-url "$REDIS_URL" --redis-prefix "$PREFIX") ;;
      *) echo "unknown setup $s"; exit 1 ;;
    esac
    start_server "${flags[@]}"
    wrk -t2 -c64 -d2s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/account.json" >/dev/null # warm-up
    t0=$(proc_ticks "$SERVER_PID"); r0=$(proc_ticks "$REDIS_PID")
    out=$(wrk -t2 -c64 -d"${DUR}s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/account.json")
    t1=$(proc_ticks "$SERVER_PID"); r1=$(proc_ticks "$REDIS_PID")
    if [ "$s" = redis ] && grep -q 'Redis does not answer' /tmp/farebox-bench.log; then
      echo "Redis did not answer during the run: the figures would be the local store's"; cat /tmp/farebox-bench.log; exit 1
    fi
    stop_server
    if grep -q 'Non-2xx' <<<"$out"; then echo "non-2xx answers:"; echo "$out"; exit 1; fi
    reqs=$(awk '/requests in/ {print $1}' <<<"$out"); r=$(rps "$out")
    rate[$s]+="$r "; this[$s]=$r
    cpu[$s]+="$(us_per_req "$t0" "$t1" "$reqs") "; rcpu[$s]+="$(us_per_req "$r0" "$r1" "$reqs") "
  done
  for s in "${setups[@]}"; do
    [ -n "${this[off]:-}" ] && cost[$s]+="$(cost_pct "${this[$s]}" "${this[off]}") "
  done
  unset this
done
printf '%-6s %10s %14s %12s %10s   %s\n' setup req/s farebox_us/req redis_us/req cost 'rounds: cost % (req/s)'
for s in "${setups[@]}"; do
  printf '%-6s %10s %14s %12s %9s%%   %s\n' "$s" "$(median <<<"${rate[$s]}")" "$(median <<<"${cpu[$s]}")" \
    "$(median <<<"${rcpu[$s]}")" "$(median <<<"${cost[$s]:-}")" "${cost[$s]:-}(${rate[$s]% })"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
