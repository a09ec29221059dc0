-- +goose Up
-- Lists (docs/lists.md): a page is newest first by (created_at, id) within
-- one account and environment, each filter an equality before that pair,
-- so every list is one range of one index and no sort. orders_list
-- replaces orders_account (account_id, created_at): it serves whatever
-- that served (its leading column is the same) and one index less is
-- written per order.
DROP INDEX orders_account;
CREATE INDEX orders_list ON orders (account_id, environment, created_at, id);
CREATE INDEX orders_list_reference ON orders (account_id, environment, optional_order_reference, created_at, id);

-- Subscriptions: the whole list, and one partial index per stored state
-- (cancelled and ended share one: which of them is ends_at against now).
CREATE INDEX subscriptions_list ON subscriptions (account_id, environment, created_at, id);
CREATE INDEX subscriptions_list_active ON subscriptions (account_id, environment, created_at, id)
    WHERE restored_subscription_id IS NULL AND ends_at IS NULL;
CREATE INDEX subscriptions_list_ending ON subscriptions (account_id, environment, created_at, id)
    WHERE restored_subscription_id IS NULL AND ends_at IS NOT NULL;
CREATE INDEX subscriptions_list_restored ON subscriptions (account_id, environment, created_at, id)
    WHERE restored_subscription_id IS NOT NULL;
-- An ends_at range reads the subscriptions ending in it, then sorts those
-- by creation (the range bounds the sort).
CREATE INDEX subscriptions_ends ON subscriptions (account_id, environment, ends_at) WHERE ends_at IS NOT NULL;

-- Coupons: the whole list and one partial index per state.
CREATE INDEX coupons_list ON coupons (account_id, environment, created_at, id);
CREATE INDEX coupons_list_new ON coupons (account_id, environment, created_at, id)
    WHERE NOT activated AND restored_coupon_id IS NULL;
CREATE INDEX coupons_list_activated ON coupons (account_id, environment, created_at, id)
    WHERE activated AND restored_coupon_id IS NULL;
CREATE INDEX coupons_list_restored ON coupons (account_id, environment, created_at, id)
    WHERE restored_coupon_id IS NOT NULL;

-- Tickets: the whole list and one partial index per state.
CREATE INDEX tickets_list ON tickets (account_id, environment, created_at, id);
CREATE INDEX tickets_list_valid ON tickets (account_id, environment, created_at, id) WHERE invalidated_at IS NULL;
CREATE INDEX tickets_list_invalidated ON tickets (account_id, environment, created_at, id) WHERE invalidated_at IS NOT NULL;

-- Customers: customers_list replaces customers_account (account_id,
-- environment), its prefix.
DROP INDEX customers_account;
CREATE INDEX customers_list ON customers (account_id, environment, created_at, id);

-- Invoices (all documents): invoices_list replaces invoices_account
-- (account_id, environment, created_at), its prefix; by customer its own.
DROP INDEX invoices_account;
CREATE INDEX invoices_list ON invoices (account_id, environment, created_at, id);
CREATE INDEX invoices_list_customer ON invoices (account_id, environment, customer_id, created_at, id);

-- +goose Down
DROP INDEX invoices_list_customer;
DROP INDEX invoices_list;
CREATE INDEX invoices_account ON invoices (account_id, environment, created_at);
DROP INDEX customers_list;
CREATE INDEX customers_account ON customers (account_id, environment);
DROP INDEX tickets_list_invalidated;
DROP INDEX tickets_list_valid;
DROP INDEX tickets_list;
DROP INDEX coupons_list_restored;
DROP INDEX coupons_list_activated;
DROP INDEX coupons_list_new;
DROP INDEX coupons_list;
DROP INDEX subscriptions_ends;
DROP INDEX subscriptions_list_restored;
DROP INDEX subscriptions_list_ending;
DROP INDEX subscriptions_list_active;
DROP INDEX subscriptions_list;
DROP INDEX orders_list_reference;
DROP INDEX orders_list;
CREATE INDEX orders_account ON orders (account_id, created_at);
