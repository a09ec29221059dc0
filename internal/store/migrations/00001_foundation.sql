-- +goose Up
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    environment  TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    revoked_at   TIMESTAMPTZ
);
CREATE INDEX api_keys_prefix ON api_keys (prefix);

CREATE TABLE idempotency_keys (
    scope         TEXT NOT NULL,
    key           TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    status        INTEGER NOT NULL DEFAULT 0,
    content_type  TEXT NOT NULL DEFAULT '',
    body          BYTEA,
    locked_until  TIMESTAMPTZ NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- The usage ledger: one row per group commit holding its requests
-- (usage.EncodeBatch), and per-day counters updated in the same transaction.
CREATE TABLE usage_batches (
    id      BIGSERIAL PRIMARY KEY,
    at      TIMESTAMPTZ NOT NULL,
    events  INTEGER NOT NULL,
    data    BYTEA NOT NULL
);
CREATE INDEX usage_batches_at ON usage_batches (at);

CREATE TABLE usage_daily (
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    day          TEXT NOT NULL,
    endpoint     TEXT NOT NULL,
    counted      BIGINT NOT NULL,
    uncounted    BIGINT NOT NULL,
    PRIMARY KEY (account_id, day, endpoint, environment)
);

-- Journal segments of the embedded ledger already rolled into usage_batches
-- (usage.FileLog): a segment is counted once even if its file survives a crash.
CREATE TABLE usage_segments (
    name       TEXT PRIMARY KEY,
    rolled_at  TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE usage_segments;
DROP TABLE usage_daily;
DROP TABLE usage_batches;
DROP TABLE idempotency_keys;
DROP TABLE api_keys;
DROP TABLE accounts;
