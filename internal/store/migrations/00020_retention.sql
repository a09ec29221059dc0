-- +goose Up
-- Retention by purpose and erasure on request (docs/privacy.md).
-- A ticket whose identification data is erased has medium_hash 'erased'
-- (its medium and tariff settings hold neutral values); the partial index
-- lets the daily retention job find the tickets still to erase, oldest
-- validity first, without reading the erased ones; the job walks it by
-- (valid_until, id) from the last row of its previous batch, so rows it
-- has just erased (dead index entries until VACUUM on PostgreSQL) are not
-- read again.
CREATE INDEX tickets_retention ON tickets (valid_until, id) WHERE medium_hash <> 'erased';
-- Coupons still holding tariff settings (the residence postal code).
CREATE INDEX coupons_retention ON coupons (created_at) WHERE tariff_settings IS NOT NULL;
-- When a partner requested erasure of the record (export and erasure
-- answer "already erased" from it).
ALTER TABLE coupons ADD COLUMN erased_at TIMESTAMPTZ;
ALTER TABLE subscriptions ADD COLUMN erased_at TIMESTAMPTZ;
ALTER TABLE customers ADD COLUMN erased_at TIMESTAMPTZ;
-- A customer whose erasure was requested while invoices to it are under
-- the retention duty is restricted until the duty ends (no new items or
-- invoices); the job then erases its recipient data.
ALTER TABLE customers ADD COLUMN restricted_until TIMESTAMPTZ;
CREATE INDEX customers_restricted ON customers (restricted_until) WHERE restricted_until IS NOT NULL;
-- The daily retention job: one row; an instance claims a run by moving
-- started_at forward when the last start is a day old, so one instance
-- of many runs it each day.
CREATE TABLE retention_state (
    id          INTEGER PRIMARY KEY,
    started_at  TIMESTAMPTZ,
    finished_at TIMESTAMPTZ
);
INSERT INTO retention_state (id) VALUES (1);

-- +goose Down
DROP TABLE retention_state;
DROP INDEX customers_restricted;
ALTER TABLE customers DROP COLUMN restricted_until;
ALTER TABLE customers DROP COLUMN erased_at;
ALTER TABLE subscriptions DROP COLUMN erased_at;
ALTER TABLE coupons DROP COLUMN erased_at;
DROP INDEX coupons_retention;
DROP INDEX tickets_retention;
