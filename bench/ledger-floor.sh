#!/usr/bin/env bash
# The floor under the usage ledger's cost: what waiting for a commit costs a
# request, whatever the database does. An authenticated GET (/v1/account.json,
# wrk -t2 -c64) on PostgreSQL in setups that alternate for ROUNDS rounds
# (default 5, the order rotating each round):
#   off        --usage-ledger=false
#   wait-0     the ledger's group commit with a writer that returns at once
#   wait-100us the same writer, returning after 100 µs (no database: about
#              the latency of one PostgreSQL batch statement on loopback)
#   wait-300us the same, 300 µs
#   postgres   the real ledger: every batch committed in PostgreSQL
# The writers that only wait exist in a binary built with -tags ledgerfloor
# (cmd/farebox/ledgerfloor.go; FAREBOX_LEDGER_FLOOR); normal builds have no
# such switch. For each setup: req/s and farebox's CPU-µs per request
# (utime+stime from /proc), medians, and the cost against "off" as the
# median over the rounds of the ratio within the round.
# Usage: bench/ledger-floor.sh [seconds per run, default 8] [setups]
# Own binary, port and database, so it can run beside the other load scripts.
BIN="${BIN:-/tmp/farebox-bench-ledgerfloor}"
PORT="${PORT:-18497}"
BENCH_DB="${BENCH_DB:-farebox_bench_ledgerfloor}"
source "$(dirname "$0")/common.sh"
DUR="${1:-8}"
SETUPS="${2:-off wait-0 wait-100us wait-300us postgres}"
ROUNDS="${ROUNDS:-5}"
(cd "$ROOT" && go build -tags ledgerfloor -o "$BIN" ./cmd/farebox)
trap '[ -n "${SERVER_PID:-}" ] && stop_server' EXIT
HZ=$(getconf CLK_TCK)
fresh_env postgres
KEY=$(new_key)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r -a setups <<<"$SETUPS"
declare -A rate=() cpu=() cost=()
for round in $(seq 1 "$ROUNDS"); do
  declare -A this=()
  n=${#setups[@]}
  for ((i = 0; i < n; i++)); do
    s=${setups[$(((i + round - 1) % n))]}
    case "$s" in
      off) flags=(--usage-ledger=false); floor="" ;;
      postgres) flags=(); floor="" ;;
      wait-*) flags=(); floor="${s#wait-}"; [ "$floor" = 0 ] && floor=0s ;;
      *) echo "unknown setup $s"; exit 1 ;;
    esac
    export FAREBOX_LEDGER_FLOOR="$floor"
    start_server "${flags[@]}"
    wrk -t2 -c64 -d2s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/account.json" >/dev/null # warm-up
    t0=$(proc_ticks "$SERVER_PID")
    out=$(wrk -t2 -c64 -d"${DUR}s" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/account.json")
    t1=$(proc_ticks "$SERVER_PID")
    stop_server
    grep -q 'Non-2xx' <<<"$out" && { echo "non-2xx answers:"; echo "$out"; exit 1; }
    reqs=$(awk '/requests in/ {print $1}' <<<"$out")
    r=$(rps "$out")
    rate[$s]+="$r "; this[$s]=$r
    cpu[$s]+="$(awk -v a="$t0" -v b="$t1" -v n="$reqs" -v hz="$HZ" 'BEGIN {printf "%.1f", (b-a)/hz*1e6/n}') "
  done
  for s in "${setups[@]}"; do
    [ -n "${this[off]:-}" ] && cost[$s]+="$(awk -v a="${this[$s]}" -v b="${this[off]}" 'BEGIN {printf "%.1f", (1-a/b)*100}') "
  done
  unset this
done
printf '%-11s %10s %14s %10s   %s\n' setup req/s farebox_us/req cost 'rounds: cost % (req/s)'
for s in "${setups[@]}"; do
  printf '%-11s %10s %14s %9s%%   %s\n' "$s" "$(median <<<"${rate[$s]}")" "$(median <<<"${cpu[$s]}")" \
    "$(median <<<"${cost[$s]:-}")" "${cost[$s]:-}(${rate[$s]% })"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
