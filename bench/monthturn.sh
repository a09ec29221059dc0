#!/usr/bin/env bash
# The month turn end to end (issue 33 §4, docs/scaling.md "The month
# turn"): INSTANCES `farebox serve` processes on one database (ports PORT,
# PORT+1, …) with Apple pass updates pushed to a local APNs, and
# `loadgen -mode monthturn` renewing N monthly subscriptions on a test
# clock: the partner reorders each, its device reactivates and fetches the
# ticket, the clock advances to the new cycle, every registered device is
# pushed and fetches its pass. loadgen checks nothing was lost or
# duplicated and prints the throughput, the reactivation's percentiles and
# the CPU per renewal of farebox (/proc/<pid>/stat of the instances) and of
# PostgreSQL (its backends on BENCH_DB).
# The APNs key (.p8) and the local APNs's TLS certificate are made with
# openssl first: the instances are configured with them (SSL_CERT_FILE
# makes them trust the certificate) before loadgen starts the server.
# Usage: bench/monthturn.sh [N, default 10000] [instances, default 2] [engine: postgres (default) or sqlite]
BIN="${BIN:-/tmp/farebox-bench-monthturn}"
PORT="${PORT:-18390}"
BENCH_DB="${BENCH_DB:-farebox_bench_monthturn}"
LOADGEN="${LOADGEN:-/tmp/farebox-loadgen-monthturn}"
source "$(dirname "$0")/common.sh"
N="${1:-10000}"
INSTANCES="${2:-2}"
ENGINE="${3:-postgres}"
CONNS="${CONNS:-64}"
APNS_ADDR="${APNS_ADDR:-127.0.0.1:$((PORT + 53))}"
if [ "$ENGINE" = sqlite ] && [ "$INSTANCES" != 1 ]; then echo "SQLite: one instance (one process owns the file)"; exit 1; fi
# NOBUILD=1 runs a BIN built before (a baseline commit, side by side).
if [ "${NOBUILD:-0}" != 1 ]; then build; fi
(cd "$ROOT" && go build -o "$LOADGEN" ./tools/loadgen)

KEYS="$(mktemp -d /tmp/farebox-monthturn-keys.XXXXXX)"
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$KEYS/apns.p8"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$KEYS/tls-key.pem" -out "$KEYS/tls.pem" \
  -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null

fresh_env "$ENGINE"
"$BIN" accounts create --create --name bench --json >/dev/null
KEY=$("$BIN" accounts create --name bench --test --json | sed -E 's/.*"api_key":"([^"]+)".*/\1/')
export SSL_CERT_FILE="$KEYS/tls.pem"
start_instances "$INSTANCES" --public-url "http://127.0.0.1:$PORT" --apns-key "$KEYS/apns.p8" --apns-key-id ABC123DEFG \
  --apns-team-id FAREBOXDEV --apns-endpoint "https://$APNS_ADDR"
urls=$(IFS=,; echo "${INSTANCE_URLS[*]}"); pids=$(IFS=,; echo "${INSTANCE_PIDS[*]}")
PG_FLAGS=()
if [ "$ENGINE" != sqlite ]; then PG_FLAGS=(-cpu-pg-db "$BENCH_DB" -database-url "$FAREBOX_DATABASE_URL"); fi
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)   $(nproc) cores   $(date -u +%FT%TZ)   $ENGINE, $INSTANCES instance(s)"
status=0
"$LOADGEN" -mode monthturn -url "$urls" -key "$KEY" -n "$N" -c "$CONNS" -apns-listen "$APNS_ADDR" -apns-p8 "$KEYS/apns.p8" \
  -apns-cert "$KEYS/tls.pem" -apns-cert-key "$KEYS/tls-key.pem" -cpu-pid "$pids" "${PG_FLAGS[@]}" || status=$?
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)   $(date -u +%FT%TZ)"
stop_instances
rm -rf "$KEYS"
exit "$status"
