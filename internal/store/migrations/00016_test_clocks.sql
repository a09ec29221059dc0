-- +goose Up
-- Test clocks (docs/test-clocks.md): a clock of one account's test
-- environment stands at frozen_time; the orders created on it, and
-- everything made from them (coupons, subscriptions, billable items),
-- carry its id in test_clock_id and see its time instead of the service's.
-- A deleted clock keeps its row (its objects stay at its last time) but
-- is no longer listed, read, advanced or usable for new orders.
CREATE TABLE test_clocks (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    environment  TEXT NOT NULL,
    name         TEXT,
    frozen_time  TIMESTAMPTZ NOT NULL,
    status       TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    deleted_at   TIMESTAMPTZ
);
CREATE INDEX test_clocks_list ON test_clocks (account_id, environment, created_at, id) WHERE deleted_at IS NULL;

ALTER TABLE orders ADD COLUMN test_clock_id TEXT;
ALTER TABLE coupons ADD COLUMN test_clock_id TEXT;
ALTER TABLE subscriptions ADD COLUMN test_clock_id TEXT;
ALTER TABLE billable_items ADD COLUMN test_clock_id TEXT;
-- The subscriptions a clock's advance looks at (ends_at passed, no
-- subscription.ended yet); the maintenance job of real time reads the
-- others.
CREATE INDEX subscriptions_test_clock ON subscriptions (test_clock_id, ends_at) WHERE test_clock_id IS NOT NULL;

-- Lists of billable items (by ordered_at, the item's creation) and of
-- collections (docs/lists.md). billable_items_list replaces
-- billable_items_account (account_id, ordered_at), which no query reads
-- without the environment.
DROP INDEX billable_items_account;
CREATE INDEX billable_items_list ON billable_items (account_id, environment, ordered_at, id);
CREATE INDEX billable_collections_list ON billable_collections (account_id, environment, created_at, id);
-- The items of one customer (a collection's have
-- billable_item_assignments_collection already).
CREATE INDEX billable_item_assignments_customer ON billable_item_assignments (customer_id);

-- +goose Down
DROP INDEX billable_item_assignments_customer;
DROP INDEX billable_collections_list;
DROP INDEX billable_items_list;
CREATE INDEX billable_items_account ON billable_items (account_id, ordered_at);
DROP INDEX subscriptions_test_clock;
ALTER TABLE billable_items DROP COLUMN test_clock_id;
ALTER TABLE subscriptions DROP COLUMN test_clock_id;
ALTER TABLE coupons DROP COLUMN test_clock_id;
ALTER TABLE orders DROP COLUMN test_clock_id;
DROP TABLE test_clocks;
