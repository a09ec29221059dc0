-- +goose Up
-- Web sessions (docs/web.md) get two columns:
-- flash: a one-time notice for the session's next page (a new API key or
-- webhook secret after POST-redirect-GET), AES-GCM sealed under a key
-- derived from the session id, which only the browser's cookie holds: a
-- copy of the database shows no secret. It is cleared when shown.
-- credential: a fingerprint of the credential the session was opened with
-- (the operator's password hash); a session whose credential is no longer
-- the configured one is not accepted (a changed password ends the
-- operator's other sessions).
ALTER TABLE web_sessions ADD COLUMN flash TEXT;
ALTER TABLE web_sessions ADD COLUMN credential TEXT;

-- +goose Down
ALTER TABLE web_sessions DROP COLUMN credential;
ALTER TABLE web_sessions DROP COLUMN flash;
