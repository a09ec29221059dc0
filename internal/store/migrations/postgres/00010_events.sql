-- +goose Up
-- Events (docs/events.md): one row per state change, written in the
-- transaction of the change. seq numbers an account's events per
-- environment 1, 2, 3… in commit order without gaps (event_sequences holds
-- the last one), so a consumer such as the webhook sender can remember
-- "delivered up to seq n". object is the JSON the v9 GET of the object
-- returns. Rows older than the retention period are pruned.
CREATE TABLE events (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    type         TEXT NOT NULL,
    object_id    TEXT NOT NULL,
    api_version  TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    object       TEXT NOT NULL
);
CREATE UNIQUE INDEX events_seq ON events (account_id, environment, seq);
CREATE INDEX events_type ON events (account_id, environment, type, seq);
CREATE INDEX events_created ON events (created_at);

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
