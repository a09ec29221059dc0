-- +goose Up
-- Events (docs/events.md): one row per state change, written in the
-- transaction of the change. seq orders an account's events: unique,
-- increasing with creation. The primary key is the list order (a page is
-- one range of it); events_id resolves a cursor. object is the JSON the v9
-- GET of the object returns. Rows older than the retention period are
-- pruned, except an account's newest.
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

-- On PostgreSQL seq is taken from the sequence this table owns
-- (nextval, no row lock: concurrent orders of one account do not wait for
-- each other); no row is ever inserted. SQLite has one writer at a time and
-- numbers an account's events from the primary key.
CREATE TABLE event_numbers (
    n            BIGSERIAL PRIMARY KEY
);

-- Catalog objects (a product, an area) that many event objects show,
-- stored once: an event's object holds {"<part>":"<hash>"} in their place
-- and the list puts them back (docs/events.md, "Storage").
CREATE TABLE event_parts (
    hash         TEXT PRIMARY KEY,
    body         TEXT NOT NULL
);

-- When subscription.ended was written (the maintenance job emits it once,
-- after ends_at has passed).
ALTER TABLE subscriptions ADD COLUMN ended_event_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE subscriptions DROP COLUMN ended_event_at;
DROP TABLE event_parts;
DROP TABLE event_numbers;
DROP TABLE events;
