-- +goose Up
-- Imported blocklists (docs/blocklist.md): the entries of an external
-- blocklist (the national one, another seller's) that name this service's
-- VDV organisation or UIC company, kept while they are valid; ticket_id is
-- the farebox ticket an entry voided (NULL: none matched). A source's
-- cursor (the last_seq of its list) makes the scheduled import incremental.
CREATE TABLE blocklist_entries (
    source      TEXT NOT NULL,
    scheme      TEXT NOT NULL,
    issuer      INTEGER NOT NULL,
    number      TEXT NOT NULL,
    target      TEXT NOT NULL,
    reason      TEXT NOT NULL,
    valid_until TIMESTAMPTZ NOT NULL,
    imported_at TIMESTAMPTZ NOT NULL,
    ticket_id   TEXT,
    PRIMARY KEY (source, scheme, issuer, number)
);
CREATE INDEX blocklist_entries_valid_until ON blocklist_entries (valid_until);
CREATE TABLE blocklist_sources (
    source      TEXT PRIMARY KEY,
    last_seq    BIGINT NOT NULL,
    imported_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE blocklist_sources;
DROP TABLE blocklist_entries;
