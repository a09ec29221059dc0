-- +goose Up
-- Requests refused by a rate limit (429) per day and endpoint: part of
-- uncounted, reported separately so a partner sees what was refused.
ALTER TABLE usage_daily ADD COLUMN refused BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE usage_daily DROP COLUMN refused;
