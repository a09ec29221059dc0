-- +goose Up
-- Moved-away phones of dynamic tickets (issue 32, docs/blocklist.md
-- "Moved-away phones"): after a move the old phone still holds a payload
-- farebox signed for its key; the blocklist publishes that key so an
-- offline inspector refuses the old phone. Entries are numbered from the
-- revocation feed's counter (revocation_feed.last_seq) in the moving
-- transaction, so one blocklist cursor covers revocations and moves; they
-- are deleted with the feed's entries after the ticket's validity end.
CREATE TABLE device_moves (
    seq         BIGINT PRIMARY KEY,
    ticket_id   TEXT NOT NULL,
    device_key  TEXT NOT NULL,
    moved_at    TIMESTAMPTZ NOT NULL,
    valid_until TIMESTAMPTZ NOT NULL
);
CREATE INDEX device_moves_valid_until ON device_moves (valid_until);

-- +goose Down
DROP TABLE device_moves;
