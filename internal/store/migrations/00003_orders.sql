-- +goose Up
CREATE TABLE orders (
    id                        TEXT PRIMARY KEY,
    account_id                TEXT NOT NULL REFERENCES accounts (id),
    environment               TEXT NOT NULL,
    optional_order_reference  TEXT,
    restore_secret            TEXT NOT NULL,
    created_at                TIMESTAMPTZ NOT NULL
);
CREATE INDEX orders_account ON orders (account_id, created_at);

CREATE TABLE subscriptions (
    id                        TEXT PRIMARY KEY,
    account_id                TEXT NOT NULL REFERENCES accounts (id),
    environment               TEXT NOT NULL,
    product_id                TEXT NOT NULL REFERENCES products (id),
    original_subscription_id  TEXT,
    restored_subscription_id  TEXT,
    cancel_requested_at       TIMESTAMPTZ,
    ends_at                   TIMESTAMPTZ,
    created_at                TIMESTAMPTZ NOT NULL
);

CREATE TABLE coupons (
    id                  TEXT PRIMARY KEY,
    order_id            TEXT NOT NULL REFERENCES orders (id),
    position            INTEGER NOT NULL,
    account_id          TEXT NOT NULL REFERENCES accounts (id),
    environment         TEXT NOT NULL,
    product_id          TEXT NOT NULL REFERENCES products (id),
    subscription_id     TEXT REFERENCES subscriptions (id),
    billable_item_id    TEXT,
    original_coupon_id  TEXT,
    restored_coupon_id  TEXT,
    tariff_settings     TEXT,
    activated           BOOLEAN NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX coupons_order ON coupons (order_id, position);

CREATE TABLE billable_items (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts (id),
    environment       TEXT NOT NULL,
    product_id        TEXT NOT NULL REFERENCES products (id),
    description       TEXT NOT NULL,
    amount_cents      BIGINT NOT NULL,
    currency          TEXT NOT NULL,
    vat_rate_bp       BIGINT NOT NULL,
    coupon_id         TEXT,
    subscription_id   TEXT,
    cycle_id          TEXT,
    ordered_at        TIMESTAMPTZ NOT NULL
);
CREATE INDEX billable_items_account ON billable_items (account_id, ordered_at);

CREATE TABLE subscription_cycles (
    id                TEXT PRIMARY KEY,
    subscription_id   TEXT NOT NULL REFERENCES subscriptions (id),
    product_id        TEXT NOT NULL REFERENCES products (id),
    valid_from        TIMESTAMPTZ,
    valid_until       TIMESTAMPTZ,
    ordered           BOOLEAN NOT NULL,
    coupon_activated  BOOLEAN NOT NULL,
    billable_item_id  TEXT,
    ticket_id         TEXT,
    created_at        TIMESTAMPTZ NOT NULL,
    UNIQUE (subscription_id, valid_from)
);

CREATE TABLE tickets (
    id                      TEXT PRIMARY KEY,
    coupon_id               TEXT NOT NULL REFERENCES coupons (id),
    account_id              TEXT NOT NULL REFERENCES accounts (id),
    environment             TEXT NOT NULL,
    product_id              TEXT NOT NULL REFERENCES products (id),
    cycle_id                TEXT NOT NULL,
    identification_medium   TEXT NOT NULL,
    medium_hash             TEXT NOT NULL,
    tariff_settings         TEXT,
    valid_from              TIMESTAMPTZ NOT NULL,
    valid_until             TIMESTAMPTZ NOT NULL,
    reactivation_key        TEXT,
    used_reactivation_key   TEXT,
    invalidated_at          TIMESTAMPTZ,
    created_at              TIMESTAMPTZ NOT NULL
);
CREATE INDEX tickets_coupon ON tickets (coupon_id);
CREATE UNIQUE INDEX tickets_reactivation_key ON tickets (reactivation_key);
CREATE UNIQUE INDEX tickets_used_reactivation_key ON tickets (used_reactivation_key);
CREATE UNIQUE INDEX tickets_first_activation ON tickets (coupon_id, cycle_id);

-- +goose Down
DROP TABLE tickets;
DROP TABLE subscription_cycles;
DROP TABLE billable_items;
DROP TABLE coupons;
DROP TABLE subscriptions;
DROP TABLE orders;
