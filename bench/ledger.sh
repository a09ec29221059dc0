#!/usr/bin/env bash
# What the usage ledger costs: an authenticated GET (/v1/account.json) at 64
# connections with wrk, with and without the ledger, on SQLite and PostgreSQL.
# Runs without and with the ledger alternate for ROUNDS rounds (default 3),
# so load from other processes hits both alike; the medians are compared.
# "postgres-journal" is PostgreSQL with --usage-ledger-journal=journal;
# "postgres" is the deferred ledger (the default) and
# "postgres-before-response" / "sqlite-before-response" commit before the
# response (bench/common.sh fresh_env lists every setup): run them in one
# call to see both side by side.
# Usage: bench/ledger.sh [seconds per run, default 10] [setups, default "sqlite postgres postgres-journal"]
source "$(dirname "$0")/common.sh"
DUR="${1:-10}"
ENGINES="${2:-sqlite postgres postgres-journal}"
ROUNDS="${ROUNDS:-3}"
build
printf '%-16s %-7s %12s %10s %10s   %s\n' engine ledger req/s p50 p99 'all rounds'
for engine in $ENGINES; do
  fresh_env "$engine"
  KEY=$(new_key)
  declare -A runs=() p50s=() p99s=()
  for _ in $(seq 1 "$ROUNDS"); do
    for ledger in false true; do
      start_server --usage-ledger="$ledger" "${SETUP_FLAGS[@]}"
      wrk -t2 -c64 -d2s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/account.json" >/dev/null # warm-up
      out=$(wrk -t2 -c64 -d"${DUR}s" --latency -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/account.json")
      stop_server
      grep -q 'Non-2xx' <<<"$out" && { echo "non-2xx answers:"; echo "$out"; exit 1; }
      runs[$ledger]+="$(rps "$out") "
      p50s[$ledger]=$(awk '$1=="50%" {print $2}' <<<"$out"); p99s[$ledger]=$(awk '$1=="99%" {print $2}' <<<"$out")
    done
  done
  declare -A med=()
  for ledger in false true; do
    med[$ledger]=$(median <<<"${runs[$ledger]% }")
    printf '%-16s %-7s %12s %10s %10s   %s\n' "$engine" "$ledger" "${med[$ledger]}" "${p50s[$ledger]}" "${p99s[$ledger]}" "${runs[$ledger]}"
  done
  awk -v a="${med[true]}" -v b="${med[false]}" -v e="$engine" 'BEGIN {printf "%-16s ledger costs %.1f%% of throughput (medians)\n", e, (1-a/b)*100}'
  unset runs p50s p99s med
done
