-- +goose Up
-- Orders are the hottest insert of the ordering path (docs/ticketing.md,
-- "Load"). orders_list_reference serves only the list
-- filtered by optional_order_reference = $n, which never matches NULL, yet
-- every order without a reference (most of them) paid an entry in it.
-- Partial, it holds only orders that have a reference; both engines infer
-- the index's predicate from the query's equality (TestListPlans).
DROP INDEX orders_list_reference;
CREATE INDEX orders_list_reference ON orders (account_id, environment, optional_order_reference, created_at, id)
    WHERE optional_order_reference IS NOT NULL;

-- +goose Down
DROP INDEX orders_list_reference;
CREATE INDEX orders_list_reference ON orders (account_id, environment, optional_order_reference, created_at, id);
