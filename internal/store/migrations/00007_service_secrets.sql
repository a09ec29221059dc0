-- +goose Up
-- Signing material the service generated for itself and that every instance
-- must share (the inspection barcode keys on PostgreSQL when none are
-- configured). Rows are written once and never updated: the first instance
-- to insert a name wins, the others read its value.
CREATE TABLE service_secrets (
    name        TEXT PRIMARY KEY,
    data        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE service_secrets;
