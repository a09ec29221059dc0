-- +goose Up
-- Webhook endpoints, their deliveries and the delivery log
-- (docs/webhooks.md). A delivery is one event for one endpoint (or a
-- manual redelivery); each attempt is a job of the durable queue
-- (kind webhook.deliver, payload the delivery id) and a row of
-- webhook_attempts. The deliveries of one object to one endpoint form a
-- chain in n order: only its head is pending (has a job), the others wait.
CREATE TABLE webhook_endpoints (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL,
    environment         TEXT NOT NULL,
    url                 TEXT NOT NULL,
    description         TEXT NOT NULL,
    event_types         TEXT NOT NULL,
    secret              TEXT NOT NULL,
    old_secret          TEXT,
    old_secret_expires  TIMESTAMPTZ,
    disabled_at         TIMESTAMPTZ,
    disabled_reason     TEXT,
    failing_since       TIMESTAMPTZ,
    created_at          TIMESTAMPTZ NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, environment, created_at);

CREATE TABLE webhook_deliveries (
    n             BIGSERIAL PRIMARY KEY,
    id            TEXT NOT NULL,
    endpoint_id   TEXT NOT NULL,
    account_id    TEXT NOT NULL,
    environment   TEXT NOT NULL,
    event_id      TEXT NOT NULL,
    object_id     TEXT NOT NULL,
    state         TEXT NOT NULL,
    attempts      INTEGER NOT NULL,
    manual        BOOLEAN NOT NULL,
    -- has_next: a later delivery of the same object waits behind this one
    has_next      BOOLEAN NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    first_attempt_at TIMESTAMPTZ,
    finished_at   TIMESTAMPTZ
);
CREATE UNIQUE INDEX webhook_deliveries_id ON webhook_deliveries (id);
-- The chain of an object: its unfinished deliveries to an endpoint.
CREATE INDEX webhook_deliveries_chain ON webhook_deliveries (endpoint_id, object_id, state, n);

CREATE TABLE webhook_attempts (
    n             BIGSERIAL PRIMARY KEY,
    id            TEXT NOT NULL,
    endpoint_id   TEXT NOT NULL,
    delivery_id   TEXT NOT NULL,
    event_id      TEXT NOT NULL,
    event_type    TEXT NOT NULL,
    attempt       INTEGER NOT NULL,
    at            TIMESTAMPTZ NOT NULL,
    status_code   INTEGER NOT NULL,
    latency_ms    INTEGER NOT NULL,
    excerpt       TEXT NOT NULL,
    error         TEXT NOT NULL,
    succeeded     BOOLEAN NOT NULL,
    manual        BOOLEAN NOT NULL,
    next_attempt_at TIMESTAMPTZ
);
CREATE UNIQUE INDEX webhook_attempts_id ON webhook_attempts (id);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, n);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
