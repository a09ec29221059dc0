-- +goose Up
-- The transmission of invoicing documents to their buyers (issue 30
-- section 3, docs/invoicing.md "Delivery to the buyer"): one row per
-- delivery of a document (written in the transaction that issues the
-- document, or by a resend), and the log of its attempts with the relay's
-- reply. status: pending, deferred, sent, failed.
CREATE TABLE invoice_deliveries (
    id           TEXT PRIMARY KEY,
    invoice_id   TEXT NOT NULL REFERENCES invoices (id),
    account_id   TEXT NOT NULL,
    environment  TEXT NOT NULL,
    channel      TEXT NOT NULL,
    recipient    TEXT NOT NULL,
    status       TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX invoice_deliveries_invoice ON invoice_deliveries (invoice_id, created_at);

CREATE TABLE invoice_delivery_attempts (
    delivery_id  TEXT NOT NULL REFERENCES invoice_deliveries (id),
    n            INTEGER NOT NULL,
    at           TIMESTAMPTZ NOT NULL,
    outcome      TEXT NOT NULL,
    reply        TEXT NOT NULL,
    PRIMARY KEY (delivery_id, n)
);

-- +goose Down
DROP TABLE invoice_delivery_attempts;
DROP TABLE invoice_deliveries;
