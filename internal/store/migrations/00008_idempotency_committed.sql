-- +goose Up
-- Set in the same transaction as the business writes of a request that
-- holds an Idempotency-Key claim: a claim whose instance died after that
-- commit but before the response was stored must not be run again.
ALTER TABLE idempotency_keys ADD COLUMN committed BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE idempotency_keys DROP COLUMN committed;
