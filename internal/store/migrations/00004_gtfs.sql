-- +goose Up
-- One row per imported GTFS feed. version comes from gtfs_state and is
-- unique over all imports, so every instance polling (id, version) sees a
-- re-import (and a remove then re-import) as a change.
CREATE TABLE gtfs_feeds (
    id                 TEXT PRIMARY KEY,
    version            BIGINT NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    source_name        TEXT NOT NULL,
    feed_version       TEXT NOT NULL,
    snapshot_bytes     BIGINT NOT NULL,
    snapshot_sha256    TEXT NOT NULL,
    chunks             INTEGER NOT NULL,
    stops              INTEGER NOT NULL,
    trips              INTEGER NOT NULL,
    stop_times         BIGINT NOT NULL,
    problems           INTEGER NOT NULL,
    realtime_source    TEXT NOT NULL,
    realtime_interval_ms BIGINT NOT NULL
);

-- The encoded snapshot (gtfs.Feed.Encode) in chunks of at most 4 MiB, so no
-- single value is large for either driver.
CREATE TABLE gtfs_feed_chunks (
    feed_id  TEXT NOT NULL REFERENCES gtfs_feeds (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    data     BYTEA NOT NULL,
    PRIMARY KEY (feed_id, seq)
);

CREATE TABLE gtfs_state (
    id       INTEGER PRIMARY KEY,
    version  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE gtfs_state;
DROP TABLE gtfs_feed_chunks;
DROP TABLE gtfs_feeds;
