-- +goose Up
-- Invoicing records (issues 6 and 7): customers, collections, the invoicing
-- assignment of billable items, invoices with their gap-free numbers, the
-- (item, customer) claims that prevent double invoicing, and generated files.
CREATE TABLE customers (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL REFERENCES accounts (id),
    environment           TEXT NOT NULL,
    address_lines         TEXT NOT NULL,
    electronic_invoicing  TEXT,
    created_at            TIMESTAMPTZ NOT NULL
);
CREATE INDEX customers_account ON customers (account_id, environment);

CREATE TABLE billable_collections (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    environment  TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL
);

-- One row per billable item that was given a customer, a split or a collection.
CREATE TABLE billable_item_assignments (
    billable_item_id  TEXT PRIMARY KEY REFERENCES billable_items (id),
    customer_id       TEXT REFERENCES customers (id),
    split             TEXT,
    collection_id     TEXT REFERENCES billable_collections (id),
    updated_at        TIMESTAMPTZ NOT NULL
);
CREATE INDEX billable_item_assignments_collection ON billable_item_assignments (collection_id);

CREATE TABLE invoices (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL REFERENCES accounts (id),
    environment    TEXT NOT NULL,
    kind           TEXT NOT NULL,
    number         TEXT NOT NULL UNIQUE,
    identifier     TEXT NOT NULL,
    customer_id    TEXT,
    collection_id  TEXT,
    refers_to      TEXT,
    cancelled_by   TEXT,
    electronic     BOOLEAN NOT NULL,
    gross_cents    BIGINT NOT NULL,
    document       TEXT NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX invoices_account ON invoices (account_id, environment, created_at);

-- An item is invoiced at most once per customer ('' = without customer)
-- while the invoice stands; cancellation deletes its claims.
CREATE TABLE invoice_claims (
    billable_item_id  TEXT NOT NULL REFERENCES billable_items (id),
    customer_key      TEXT NOT NULL,
    invoice_id        TEXT NOT NULL REFERENCES invoices (id),
    PRIMARY KEY (billable_item_id, customer_key)
);
CREATE INDEX invoice_claims_invoice ON invoice_claims (invoice_id);

-- Gap-free number series: the row is updated in the invoice's transaction.
CREATE TABLE invoice_counters (
    series      TEXT PRIMARY KEY,
    last_value  BIGINT NOT NULL
);

CREATE TABLE invoice_files (
    invoice_id    TEXT NOT NULL REFERENCES invoices (id),
    format        TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    body          BYTEA NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (invoice_id, format)
);

-- +goose Down
DROP TABLE invoice_files;
DROP TABLE invoice_counters;
DROP TABLE invoice_claims;
DROP TABLE invoices;
DROP TABLE billable_item_assignments;
DROP TABLE billable_collections;
DROP TABLE customers;
