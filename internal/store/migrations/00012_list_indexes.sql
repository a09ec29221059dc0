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

-- +goose Down
DROP INDEX orders_list_reference;
DROP INDEX orders_list;
CREATE INDEX orders_account ON orders (account_id, created_at);
