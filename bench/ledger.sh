#!/usr/bin/env bash
# What the usage ledger costs: an authenticated GET (/v1/account.json) at 64
# connections with wrk, with and without the ledger, on SQLite and PostgreSQL.
# Usage: bench/ledger.sh [seconds per run, default 10]
source "$(dirname "$0")/common.sh"
DUR="${1:-10}"
build
printf '%-9s %-7s %12s %10s %10s\n' engine ledger req/s p50 p99
for engine in sqlite postgres; do
  declare -A res=()
  for ledger in false true; do
    fresh_env "$engine"
    KEY=$(new_key)
    start_server --usage-ledger="$ledger"
    wrk -t2 -c64 -d2s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/account.json" >/dev/null # warm-up
    out=$(wrk -t2 -c64 -d"${DUR}s" --latency -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/account.json")
    stop_server
    res[$ledger]=$(rps "$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out"); p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    printf '%-9s %-7s %12s %10s %10s\n' "$engine" "$ledger" "${res[$ledger]}" "$p50" "$p99"
  done
  awk -v a="${res[true]}" -v b="${res[false]}" -v e="$engine" 'BEGIN {printf "%-9s ledger costs %.1f%% of throughput\n", e, (1-a/b)*100}'
done
