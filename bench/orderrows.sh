#!/usr/bin/env bash
# PostgreSQL's CPU per order transaction for the rows alone, with pgbench
# (no farebox in the loop): an order, its coupon and its billable item
# written as three INSERTs between BEGIN and COMMIT (ordering before issue
# 22), as one statement of data-modifying CTEs (store.InsertOrderRows), and
# as that statement on a copy of the database without the foreign keys of
# orders, coupons and billable_items to accounts and products (what those
# keys' FOR KEY SHARE locks on the one account's and product's rows cost).
# CPU from /proc of the backends of each database while pgbench runs.
# Usage: bench/orderrows.sh [seconds, default 7] [clients, default 8]
BIN="${BIN:-/tmp/farebox-bench-orderrows}"
BENCH_DB="${BENCH_DB:-farebox_bench_orderrows}"
source "$(dirname "$0")/common.sh"
DUR="${1:-7}"; CLIENTS="${2:-8}"
build
fresh_env postgres
new_key >/dev/null   # creates and migrates the database and an account
start_server; stop_server   # the server seeds the catalog
NOFK="${BENCH_DB}_nofk"
psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $NOFK" -c "CREATE DATABASE $NOFK TEMPLATE $BENCH_DB" >/dev/null
psql -q -h 127.0.0.1 -U postgres -d "$NOFK" -c "ALTER TABLE orders DROP CONSTRAINT orders_account_id_fkey;
  ALTER TABLE coupons DROP CONSTRAINT coupons_account_id_fkey, DROP CONSTRAINT coupons_product_id_fkey;
  ALTER TABLE billable_items DROP CONSTRAINT billable_items_account_id_fkey, DROP CONSTRAINT billable_items_product_id_fkey;"
A=$(psql -h 127.0.0.1 -U postgres -d "$BENCH_DB" -Atc "SELECT id FROM accounts LIMIT 1")
P=$(psql -h 127.0.0.1 -U postgres -d "$BENCH_DB" -Atc "SELECT id FROM products LIMIT 1")
dir=$(mktemp -d)
OI="'o-' || :client_id || '-' || :r"; CI="'c-' || :client_id || '-' || :r"; BI="'b-' || :client_id || '-' || :r"
INS_O="INSERT INTO orders (id, account_id, environment, optional_order_reference, restore_secret, created_at, test_clock_id) VALUES ($OI, '$A', 'live', NULL, 'restore-secret', now(), NULL)"
INS_C="INSERT INTO coupons (id, order_id, position, account_id, environment, product_id, subscription_id, billable_item_id, original_coupon_id, restored_coupon_id, tariff_settings, activated, created_at, test_clock_id) VALUES ($CI, $OI, 0, '$A', 'live', '$P', NULL, $BI, NULL, NULL, NULL, false, now(), NULL)"
INS_B="INSERT INTO billable_items (id, account_id, environment, product_id, description, amount_cents, currency, vat_rate_bp, coupon_id, subscription_id, cycle_id, ordered_at, test_clock_id) VALUES ($BI, '$A', 'live', '$P', 'Single', 380, 'EUR', 700, $CI, NULL, NULL, now(), NULL)"
printf '\\set r random(1, 2000000000)\nBEGIN;\n%s;\n%s;\n%s;\nCOMMIT;\n' "$INS_O" "$INS_C" "$INS_B" >"$dir/three.sql"
printf '\\set r random(1, 2000000000)\nBEGIN;\nWITH o AS (%s), c AS (%s) %s;\nCOMMIT;\n' "$INS_O" "$INS_C" "$INS_B" >"$dir/one.sql"

# run DB SCRIPT LABEL: pgbench; CPU of DB's backends over DUR seconds in
# the middle of its run, per transaction committed in those seconds.
run() {
  local mark out pb tx
  mark=$(mktemp); out=$(mktemp)
  # pgbench runs 5 s longer than the measured window: its backends must
  # still be there when the window closes (psql is slow on a busy machine).
  pgbench -h 127.0.0.1 -U postgres -n -M prepared -c "$CLIENTS" -j 2 -T "$((DUR + 5))" -f "$2" "$1" >"$out" 2>&1 &
  pb=$!
  sleep 2
  pg_cpu_mark "$1" "$mark"
  tx0=$(psql -h 127.0.0.1 -U postgres -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = '$1'")
  sleep "$DUR"
  local t; t=$(pg_cpu_since "$1" "$mark")
  tx=$(( $(psql -h 127.0.0.1 -U postgres -Atc "SELECT xact_commit FROM pg_stat_database WHERE datname = '$1'") - tx0 ))
  wait "$pb" || { cat "$out"; exit 1; }
  printf '%-34s %8s tps   %s ms PostgreSQL CPU per transaction\n' "$3" "$(awk '/^tps/ {printf "%.0f", $3}' "$out")" "$(per_op "$t" "$tx")"
  grep -E "^number of failed transactions: [1-9]|abort|ERROR" "$out" >&2 || true; rm -f "$mark" "$out"
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)   $(date -u +%FT%TZ)"
for round in 1 2; do
  run "$BENCH_DB" "$dir/three.sql" "three INSERTs"
  run "$BENCH_DB" "$dir/one.sql" "one statement (InsertOrderRows)"
  run "$NOFK" "$dir/one.sql" "one statement, no account/product FKs"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$dir"
