-- +goose Up
-- Immutable books and cancellation receipts (issue 21 items 3 and 4,
-- docs/books.md). Issued documents (invoices, cancellations, payment
-- notices), their stored files, the audit log and cancellation receipts
-- cannot be changed or deleted by any statement: triggers refuse it on
-- both engines. The one allowed change after issue is the one-way
-- cancelled-by reference of an invoice (NULL to the id of a cancellation
-- document that refers to it); files are written once (insert only).

-- The SHA-256 (hex) of a stored file, recorded when it is written; ''
-- for files stored before this migration (farebox books verify counts
-- them as not checkable).
ALTER TABLE invoice_files ADD COLUMN sha256 TEXT NOT NULL DEFAULT '';

-- Every change to a billable item's invoicing state (customer, split,
-- collection, invoicing and its release by a cancellation), with its
-- time and actor: actor_type api_key (actor_id = the key id), operator
-- (the CLI; actor_id the OS user) or job (actor_id the job kind).
CREATE TABLE audit_log (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    environment  TEXT NOT NULL,
    object_type  TEXT NOT NULL,
    object_id    TEXT NOT NULL,
    action       TEXT NOT NULL,
    actor_type   TEXT NOT NULL,
    actor_id     TEXT NOT NULL,
    detail       TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX audit_log_list ON audit_log (account_id, environment, created_at, id);
CREATE INDEX audit_log_object ON audit_log (object_id, created_at);

-- The confirmation of a subscription's cancellation (§ 312k BGB): one
-- per subscription, written in the cancellation's transaction.
CREATE TABLE cancellation_receipts (
    id                 TEXT PRIMARY KEY,
    subscription_id    TEXT NOT NULL UNIQUE REFERENCES subscriptions (id),
    account_id         TEXT NOT NULL REFERENCES accounts (id),
    environment        TEXT NOT NULL,
    product_id         TEXT NOT NULL,
    product_name       TEXT NOT NULL,
    cancellation_type  TEXT NOT NULL,
    received_at        TIMESTAMPTZ NOT NULL,
    effective_end      TIMESTAMPTZ NOT NULL,
    actor_type         TEXT NOT NULL,
    actor_id           TEXT NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL
);

-- +engine postgres
-- +goose StatementBegin
CREATE FUNCTION farebox_books_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'farebox books: % on % is refused: issued records are immutable', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION farebox_invoice_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.id, NEW.account_id, NEW.environment, NEW.kind, NEW.number, NEW.identifier, NEW.customer_id,
        NEW.collection_id, NEW.refers_to, NEW.electronic, NEW.gross_cents, NEW.document, NEW.created_at)
       IS NOT DISTINCT FROM
       (OLD.id, OLD.account_id, OLD.environment, OLD.kind, OLD.number, OLD.identifier, OLD.customer_id,
        OLD.collection_id, OLD.refers_to, OLD.electronic, OLD.gross_cents, OLD.document, OLD.created_at)
       AND (NEW.cancelled_by IS NOT DISTINCT FROM OLD.cancelled_by
            OR (OLD.cancelled_by IS NULL AND OLD.kind = 'invoice' AND EXISTS (
                SELECT 1 FROM invoices c WHERE c.id = NEW.cancelled_by AND c.kind = 'cancellation' AND c.refers_to = OLD.id)))
    THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'farebox books: UPDATE of issued invoice % is refused: only its cancelled_by reference may be set, once', OLD.number
        USING ERRCODE = 'restrict_violation';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER invoices_update BEFORE UPDATE ON invoices FOR EACH ROW EXECUTE FUNCTION farebox_invoice_update();
CREATE TRIGGER invoices_delete BEFORE DELETE ON invoices FOR EACH ROW EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER invoices_truncate BEFORE TRUNCATE ON invoices FOR EACH STATEMENT EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER invoice_files_update BEFORE UPDATE OR DELETE ON invoice_files FOR EACH ROW EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER invoice_files_truncate BEFORE TRUNCATE ON invoice_files FOR EACH STATEMENT EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER audit_log_update BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER audit_log_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER cancellation_receipts_update BEFORE UPDATE OR DELETE ON cancellation_receipts FOR EACH ROW EXECUTE FUNCTION farebox_books_refuse();
CREATE TRIGGER cancellation_receipts_truncate BEFORE TRUNCATE ON cancellation_receipts FOR EACH STATEMENT EXECUTE FUNCTION farebox_books_refuse();
-- +engine sqlite
-- +goose StatementBegin
CREATE TRIGGER invoices_update BEFORE UPDATE ON invoices
WHEN NOT (NEW.id IS OLD.id AND NEW.account_id IS OLD.account_id AND NEW.environment IS OLD.environment
    AND NEW.kind IS OLD.kind AND NEW.number IS OLD.number AND NEW.identifier IS OLD.identifier
    AND NEW.customer_id IS OLD.customer_id AND NEW.collection_id IS OLD.collection_id AND NEW.refers_to IS OLD.refers_to
    AND NEW.electronic IS OLD.electronic AND NEW.gross_cents IS OLD.gross_cents AND NEW.document IS OLD.document
    AND NEW.created_at IS OLD.created_at
    AND (NEW.cancelled_by IS OLD.cancelled_by
         OR (OLD.cancelled_by IS NULL AND OLD.kind = 'invoice' AND EXISTS (
             SELECT 1 FROM invoices c WHERE c.id = NEW.cancelled_by AND c.kind = 'cancellation' AND c.refers_to = OLD.id))))
BEGIN
    SELECT RAISE(ABORT, 'farebox books: UPDATE of an issued invoice is refused: only its cancelled_by reference may be set, once');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER invoices_delete BEFORE DELETE ON invoices
BEGIN
    SELECT RAISE(ABORT, 'farebox books: DELETE on invoices is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER invoice_files_update BEFORE UPDATE ON invoice_files
BEGIN
    SELECT RAISE(ABORT, 'farebox books: UPDATE on invoice_files is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER invoice_files_delete BEFORE DELETE ON invoice_files
BEGIN
    SELECT RAISE(ABORT, 'farebox books: DELETE on invoice_files is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER audit_log_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'farebox books: UPDATE on audit_log is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER audit_log_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'farebox books: DELETE on audit_log is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER cancellation_receipts_update BEFORE UPDATE ON cancellation_receipts
BEGIN
    SELECT RAISE(ABORT, 'farebox books: UPDATE on cancellation_receipts is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER cancellation_receipts_delete BEFORE DELETE ON cancellation_receipts
BEGIN
    SELECT RAISE(ABORT, 'farebox books: DELETE on cancellation_receipts is refused: issued records are immutable');
END;
-- +goose StatementEnd
-- +engine end

-- +goose Down
-- +engine postgres
DROP TRIGGER invoices_update ON invoices;
DROP TRIGGER invoices_delete ON invoices;
DROP TRIGGER invoices_truncate ON invoices;
DROP TRIGGER invoice_files_update ON invoice_files;
DROP TRIGGER invoice_files_truncate ON invoice_files;
-- +engine sqlite
DROP TRIGGER invoices_update;
DROP TRIGGER invoices_delete;
DROP TRIGGER invoice_files_update;
DROP TRIGGER invoice_files_delete;
-- +engine end
DROP TABLE cancellation_receipts;
DROP TABLE audit_log;
ALTER TABLE invoice_files DROP COLUMN sha256;
-- +engine postgres
DROP FUNCTION farebox_invoice_update();
DROP FUNCTION farebox_books_refuse();
-- +engine end
