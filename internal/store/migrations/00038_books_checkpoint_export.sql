-- +goose Up
-- The books' checkpoints for outsiders (issue 30 section 1, docs/books.md
-- "Signed checkpoints", "Proofs"): each checkpoint also signs the RFC 9162
-- Merkle tree hash of its chain's entry hashes (tree_hash; '' for the
-- checkpoints signed before, whose message is v1), so that a partner can
-- check consistency and inclusion proofs without the chain.
ALTER TABLE books_checkpoints ADD COLUMN tree_hash TEXT NOT NULL DEFAULT '';

-- One checkpoint per chain and size: two instances signing at once cannot
-- both sign the same head (the signers also take books_signing's row).
DROP INDEX books_checkpoints_chain;
CREATE UNIQUE INDEX books_checkpoints_chain ON books_checkpoints (account_id, environment, tree_size);

-- The lock every signer takes before it reads the chains (one row), and
-- the newest signing time: a checkpoint is never dated before the one
-- signed before it, whatever the clocks of the instances say.
CREATE TABLE books_signing (
    id         INTEGER PRIMARY KEY,
    signed_at  TIMESTAMPTZ NOT NULL
);

-- The public key of each books key that signed a checkpoint, so that the
-- checkpoint export can hand out the keys of what it lists, also after a
-- rotation (base64 of the raw Ed25519 key; key_id is derived from it).
CREATE TABLE books_keys (
    key_id      TEXT PRIMARY KEY,
    public_key  TEXT NOT NULL
);

-- +engine postgres
CREATE TRIGGER books_keys_update BEFORE UPDATE OR DELETE ON books_keys FOR EACH ROW EXECUTE FUNCTION farebox_books_refuse();
-- +engine sqlite
-- +goose StatementBegin
CREATE TRIGGER books_keys_update BEFORE UPDATE ON books_keys
BEGIN
    SELECT RAISE(ABORT, 'farebox books: UPDATE on books_keys is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER books_keys_delete BEFORE DELETE ON books_keys
BEGIN
    SELECT RAISE(ABORT, 'farebox books: DELETE on books_keys is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +engine end

-- +goose Down
-- +engine postgres
DROP TRIGGER books_keys_update ON books_keys;
-- +engine sqlite
DROP TRIGGER books_keys_update;
DROP TRIGGER books_keys_delete;
-- +engine end
DROP TABLE books_keys;
DROP TABLE books_signing;
DROP INDEX books_checkpoints_chain;
CREATE INDEX books_checkpoints_chain ON books_checkpoints (account_id, environment, tree_size);
ALTER TABLE books_checkpoints DROP COLUMN tree_hash;
