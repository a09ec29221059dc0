-- +goose Up
-- Revenue clearing of the national ticket (docs/clearing.md). A reported
-- month is frozen: its report and rows are written once, in one
-- transaction, and never changed; a later change to one of its ticket
-- months is a correction row of a later report. clearing_items holds what
-- the reports said last of each ticket month (a billable item), so the next
-- report finds what changed since.
CREATE TABLE clearing_reports (
    month        TEXT PRIMARY KEY,
    issuer       TEXT NOT NULL,
    reported_at  TIMESTAMPTZ NOT NULL,
    row_count    BIGINT NOT NULL,
    gross_cents  BIGINT NOT NULL
);

CREATE TABLE clearing_rows (
    month             TEXT NOT NULL REFERENCES clearing_reports (month),
    seq               BIGINT NOT NULL,
    kind              TEXT NOT NULL,
    billable_item_id  TEXT NOT NULL,
    period            TEXT NOT NULL,
    valid_from        TIMESTAMPTZ NOT NULL,
    valid_until       TIMESTAMPTZ NOT NULL,
    postal_code       TEXT NOT NULL,
    state             TEXT NOT NULL,
    product_id        TEXT NOT NULL,
    product_name      TEXT NOT NULL,
    account_id        TEXT NOT NULL,
    issuer            TEXT NOT NULL,
    count             INTEGER NOT NULL,
    gross_cents       BIGINT NOT NULL,
    net_cents         BIGINT NOT NULL,
    vat_cents         BIGINT NOT NULL,
    vat_rate_bp       BIGINT NOT NULL,
    currency          TEXT NOT NULL,
    PRIMARY KEY (month, seq)
);
CREATE INDEX clearing_rows_period ON clearing_rows (period, billable_item_id);

CREATE TABLE clearing_items (
    billable_item_id  TEXT PRIMARY KEY,
    postal_code       TEXT NOT NULL,
    state             TEXT NOT NULL,
    gross_cents       BIGINT NOT NULL,
    month             TEXT NOT NULL
);

-- The ticket months of a month are the ordered cycles starting in it; a
-- restore copies the cycles with their billable item, so the ticket of a
-- ticket month is found through every cycle of its item, and the coupon
-- through the cycle's subscription.
CREATE INDEX subscription_cycles_clearing ON subscription_cycles (valid_from, billable_item_id);
CREATE INDEX subscription_cycles_billable ON subscription_cycles (billable_item_id);
CREATE INDEX coupons_subscription ON coupons (subscription_id);

-- +goose Down
DROP INDEX coupons_subscription;
DROP INDEX subscription_cycles_billable;
DROP INDEX subscription_cycles_clearing;
DROP TABLE clearing_items;
DROP INDEX clearing_rows_period;
DROP TABLE clearing_rows;
DROP TABLE clearing_reports;
