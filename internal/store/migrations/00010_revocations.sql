-- +goose Up
-- Revocation (docs/wallet.md, "Revocation feed"): a ticket that stops being
-- valid before its end keeps the reason, and enters the feed inspection
-- devices sync. Feed entries are numbered from revocation_feed.last_seq
-- inside the revoking transaction, so numbers follow commit order and a
-- device asking for since=N never misses a later commit with a smaller
-- number (its single row is created by the first revocation). Entries are
-- deleted after the ticket's validity end.
ALTER TABLE tickets ADD COLUMN revoked_reason TEXT;
CREATE TABLE revocation_feed (
    id          INTEGER PRIMARY KEY,
    last_seq    BIGINT NOT NULL
);
CREATE TABLE revocations (
    seq         BIGINT PRIMARY KEY,
    ticket_id   TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL,
    reason      TEXT NOT NULL,
    revoked_at  TIMESTAMPTZ NOT NULL,
    valid_until TIMESTAMPTZ NOT NULL
);
CREATE INDEX revocations_valid_until ON revocations (valid_until);

-- +goose Down
DROP TABLE revocations;
DROP TABLE revocation_feed;
ALTER TABLE tickets DROP COLUMN revoked_reason;
