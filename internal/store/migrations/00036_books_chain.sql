-- +goose Up
-- The books' hash chain (issue 30 section 1, docs/books.md "The chain"):
-- every record of the books (invoice documents, their stored files, audit
-- entries, cancellation receipts) gets an entry, in the transaction of
-- the record, in an append-only chain per account and environment. An
-- entry commits to its predecessor (prev_hash) and to the canonical bytes
-- of its record (record_hash); personal fields enter only through a
-- salted commitment (commitment), whose salt (books_salts) an erasure may
-- delete without breaking the chain.
CREATE TABLE books_chain (
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    kind         TEXT NOT NULL,
    record_id    TEXT NOT NULL,
    record_hash  TEXT NOT NULL,
    commitment   TEXT NOT NULL,
    prev_hash    TEXT NOT NULL,
    entry_hash   TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (account_id, environment, seq)
);
CREATE INDEX books_chain_record ON books_chain (kind, record_id);

-- The head of each chain: its size and newest entry hash. Working state
-- (it changes with every append); taking its row serialises the appends
-- to one chain on both engines. farebox books verify recomputes the chain
-- from the entries and never trusts it.
CREATE TABLE books_chain_heads (
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    size         BIGINT NOT NULL,
    head_hash    TEXT NOT NULL,
    PRIMARY KEY (account_id, environment)
);

-- The salt of a record's commitment to its personal fields (hex). Deleted
-- when the personal fields are erased; never changed.
CREATE TABLE books_salts (
    kind       TEXT NOT NULL,
    record_id  TEXT NOT NULL,
    salt       TEXT NOT NULL,
    PRIMARY KEY (kind, record_id)
);

-- Signed checkpoints: a chain's size and head hash at signed_at, signed
-- by the books key (key_id) with the signer's counter (one per key, every
-- signature takes the next value, as a KassenSichV TSE's).
CREATE TABLE books_checkpoints (
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    tree_size    BIGINT NOT NULL,
    head_hash    TEXT NOT NULL,
    signed_at    TIMESTAMPTZ NOT NULL,
    counter      BIGINT NOT NULL,
    key_id       TEXT NOT NULL,
    signature    TEXT NOT NULL,
    PRIMARY KEY (key_id, counter)
);
CREATE INDEX books_checkpoints_chain ON books_checkpoints (account_id, environment, tree_size);

-- The signature counter of each books key.
CREATE TABLE books_signature_counters (
    key_id      TEXT PRIMARY KEY,
    last_value  BIGINT NOT NULL
);

-- The records of the books written before the chain existed: verify
-- counts them as "before the chain", not as records missing from it.
CREATE TABLE books_unchained (
    kind       TEXT NOT NULL,
    record_id  TEXT NOT NULL,
    PRIMARY KEY (kind, record_id)
);
INSERT INTO books_unchained (kind, record_id) SELECT 'invoice', id FROM invoices;
INSERT INTO books_unchained (kind, record_id) SELECT 'file', invoice_id || '/' || format FROM invoice_files;
INSERT INTO books_unchained (kind, record_id) SELECT 'audit', id FROM audit_log;
INSERT INTO books_unchained (kind, record_id) SELECT 'receipt', id FROM cancellation_receipts;

-- +engine postgres
CREATE TRIGGER books_chain_update BEFORE UPDATE OR DELETE ON books_chain FOR EACH ROW EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER books_chain_truncate BEFORE TRUNCATE ON books_chain FOR EACH STATEMENT EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER books_checkpoints_update BEFORE UPDATE OR DELETE ON books_checkpoints FOR EACH ROW EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER books_checkpoints_truncate BEFORE TRUNCATE ON books_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER books_salts_update BEFORE UPDATE ON books_salts FOR EACH ROW EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER books_unchained_update BEFORE UPDATE ON books_unchained FOR EACH ROW EXECUTE FUNCTION farebox_books_refuse();
-- +engine sqlite
-- +goose StatementBegin
CREATE TRIGGER books_chain_update BEFORE UPDATE ON books_chain
BEGIN
    SELECT RAISE(ABORT, 'farebox books: UPDATE on books_chain is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER books_chain_delete BEFORE DELETE ON books_chain
BEGIN
    SELECT RAISE(ABORT, 'farebox books: DELETE on books_chain is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER books_checkpoints_update BEFORE UPDATE ON books_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'farebox books: UPDATE on books_checkpoints is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER books_checkpoints_delete BEFORE DELETE ON books_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'farebox books: DELETE on books_checkpoints is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER books_salts_update BEFORE UPDATE ON books_salts
BEGIN
    SELECT RAISE(ABORT, 'farebox books: UPDATE on books_salts is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER books_unchained_update BEFORE UPDATE ON books_unchained
BEGIN
    SELECT RAISE(ABORT, 'farebox books: UPDATE on books_unchained is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +engine end

-- +goose Down
-- +engine postgres
DROP TRIGGER books_chain_update ON books_chain;
DROP TRIGGER books_chain_truncate ON books_chain;
DROP TRIGGER books_checkpoints_update ON books_checkpoints;
DROP TRIGGER books_checkpoints_truncate ON books_checkpoints;
DROP TRIGGER books_salts_update ON books_salts;
DROP TRIGGER books_unchained_update ON books_unchained;
-- +engine sqlite
DROP TRIGGER books_chain_update;
DROP TRIGGER books_chain_delete;
DROP TRIGGER books_checkpoints_update;
DROP TRIGGER books_checkpoints_delete;
DROP TRIGGER books_salts_update;
DROP TRIGGER books_unchained_update;
-- +engine end
DROP TABLE books_unchained;
DROP TABLE books_signature_counters;
DROP TABLE books_checkpoints;
DROP TABLE books_salts;
DROP TABLE books_chain_heads;
DROP TABLE books_chain;
