-- +goose Up
-- Records for the central reporting (issue 31 §3, docs/records.md).
-- inspectors: the inspection accounts and devices the operator creates
-- (farebox inspectors add). A device authenticates with a bearer token of
-- which only the SHA-256 is kept; password_hash is the argon2id PHC string
-- the inspector web app of issue 32 signs in with (NULL until set);
-- revoked_at ends the token and the account.
CREATE TABLE inspectors (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    token_hash    TEXT NOT NULL,
    token_prefix  TEXT NOT NULL,
    password_hash TEXT,
    created_at    TIMESTAMPTZ NOT NULL,
    revoked_at    TIMESTAMPTZ
);
CREATE UNIQUE INDEX inspectors_name ON inspectors (name);
CREATE UNIQUE INDEX inspectors_token ON inspectors (token_hash);

-- inspection_records: what a device checked. (inspector_id,
-- client_record_id) is unique, so a batch posted again after a lost answer
-- stores each check once. The daily export reads a day by received_at
-- (every record is exported once, however late its device posted it).
-- Issuance records have no table: they are derived from tickets at export
-- time, so ordering and activation write nothing more.
CREATE TABLE inspection_records (
    id               TEXT PRIMARY KEY,
    inspector_id     TEXT NOT NULL REFERENCES inspectors (id),
    client_record_id TEXT NOT NULL,
    ticket_id        TEXT,
    barcode_sha256   TEXT,
    outcome          TEXT NOT NULL,
    checked_at       TIMESTAMPTZ NOT NULL,
    device_time      TIMESTAMPTZ,
    lat              DOUBLE PRECISION,
    lon              DOUBLE PRECISION,
    stop_id          TEXT,
    received_at      TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX inspection_records_client ON inspection_records (inspector_id, client_record_id);
CREATE INDEX inspection_records_received ON inspection_records (received_at, id);

-- +goose Down
DROP TABLE inspection_records;
DROP TABLE inspectors;
