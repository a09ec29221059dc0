-- +goose Up
-- The PostgreSQL ledger's counters as a staging table (docs/storage.md,
-- "The usage ledger"): each batch appends its per-day counts here, in the
-- statement that stores the batch, instead of upserting usage_daily. An
-- upsert per batch updated the same counter row hundreds of times a second,
-- and its chain of row versions made each batch dearer the longer the load
-- lasted. A roll-up moves these rows into usage_daily once a second, in one
-- statement (DELETE … RETURNING into an upsert), so every count is in
-- exactly one of the two tables at any snapshot; readers add both. No
-- index: rows are only appended and taken whole. SQLite's ledger writes
-- usage_daily directly and leaves this table empty.
CREATE TABLE usage_pending (
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    day          TEXT NOT NULL,
    endpoint     TEXT NOT NULL,
    counted      BIGINT NOT NULL,
    uncounted    BIGINT NOT NULL,
    refused      BIGINT NOT NULL
);

-- +goose Down
INSERT INTO usage_daily (account_id, environment, day, endpoint, counted, uncounted, refused)
SELECT account_id, environment, day, endpoint, SUM(counted), SUM(uncounted), SUM(refused)
FROM usage_pending GROUP BY account_id, environment, day, endpoint
ON CONFLICT (account_id, day, endpoint, environment) DO UPDATE
SET counted = usage_daily.counted + excluded.counted, uncounted = usage_daily.uncounted + excluded.uncounted,
    refused = usage_daily.refused + excluded.refused;
DROP TABLE usage_pending;
