-- +goose Up
-- The partner dashboard's users (docs/web.md "Partner dashboard"). A user
-- belongs to one account and signs in with an e-mail address (stored
-- lower-case, unique across accounts) and a password (an argon2id PHC
-- string, the console's parameters). The operator invites a user with
-- `farebox accounts invite`: the link carries a random token, the table
-- only its SHA-256; it is good once and until expires_at.
CREATE TABLE dashboard_users (
    email          TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL REFERENCES accounts (id),
    password_hash  TEXT NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL
);
CREATE TABLE dashboard_invites (
    token_hash  TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    email       TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    used_at     TIMESTAMPTZ
);
-- When a key last authenticated a request (to the minute: written at most
-- once a minute per key and instance), shown on the dashboard's key page.
ALTER TABLE api_keys ADD COLUMN last_used_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN last_used_at;
DROP TABLE dashboard_invites;
DROP TABLE dashboard_users;
