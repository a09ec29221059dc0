-- +goose Up
-- Sessions of the web pages (docs/web.md): the operator console now, the
-- partner dashboard's users next. The cookie holds the session id; only
-- its SHA-256 is stored, so a copy of the database signs nobody in. kind
-- says whose session it is ('operator'), subject names the person (the
-- operator's user name) and account_id the account a dashboard user
-- belongs to (NULL for the operator).
CREATE TABLE web_sessions (
    id_hash      TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    subject      TEXT NOT NULL,
    account_id   TEXT,
    created_at   TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

-- +goose Down
DROP TABLE web_sessions;
