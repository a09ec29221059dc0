-- +goose Up
-- Events (docs/events.md): one row per state change, written in the
-- transaction of the change. seq numbers an account's events per
-- environment 1, 2, 3… in commit order without gaps, so a consumer such as
-- the webhook sender can remember "delivered up to seq n". The primary key
-- is the list order (a page is one range of it); events_id resolves a
-- cursor. object is the JSON the v9 GET of the object returns. Rows older
-- than the retention period are pruned, except an account's newest.
CREATE TABLE events (
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    id           TEXT NOT NULL,
    type         TEXT NOT NULL,
    object_id    TEXT NOT NULL,
    api_version  TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    object       TEXT NOT NULL,
    PRIMARY KEY (account_id, environment, seq)
);
CREATE UNIQUE INDEX events_id ON events (id);

-- The last seq per account and environment on PostgreSQL, where
-- concurrent writers take it with an upsert that holds the row until
-- commit (SQLite has one writer and numbers from the primary key).
CREATE TABLE event_sequences (
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    last_seq     BIGINT NOT NULL,
    PRIMARY KEY (account_id, environment)
);

-- When subscription.ended was written (the maintenance job emits it once,
-- after ends_at has passed).
ALTER TABLE subscriptions ADD COLUMN ended_event_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE subscriptions DROP COLUMN ended_event_at;
DROP TABLE event_sequences;
DROP TABLE events;
