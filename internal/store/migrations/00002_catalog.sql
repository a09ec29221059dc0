-- +goose Up
CREATE TABLE areas (
    id               TEXT PRIMARY KEY,
    position         INTEGER NOT NULL,
    data             TEXT NOT NULL
);

CREATE TABLE products (
    id          TEXT PRIMARY KEY,
    area_id     TEXT NOT NULL REFERENCES areas (id),
    position    INTEGER NOT NULL,
    data        TEXT NOT NULL
);

CREATE TABLE catalog_state (
    id          INTEGER PRIMARY KEY,
    version     BIGINT NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE account_product_grants (
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    product_id  TEXT NOT NULL REFERENCES products (id),
    granted_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (account_id, product_id)
);

-- +goose Down
DROP TABLE account_product_grants;
DROP TABLE catalog_state;
DROP TABLE products;
DROP TABLE areas;
