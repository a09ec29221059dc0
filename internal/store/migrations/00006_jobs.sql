-- +goose Up
-- The durable job queue (internal/jobs, architecture.md 5.6).
CREATE TABLE jobs (
    id            BIGSERIAL PRIMARY KEY,
    kind          TEXT NOT NULL,
    payload       TEXT NOT NULL,
    state         TEXT NOT NULL,
    attempts      INTEGER NOT NULL,
    max_attempts  INTEGER NOT NULL,
    run_at        TIMESTAMPTZ NOT NULL,
    locked_by     TEXT,
    locked_until  TIMESTAMPTZ,
    last_error    TEXT,
    created_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ
);
CREATE INDEX jobs_due ON jobs (state, run_at);
CREATE INDEX jobs_payload ON jobs (kind, payload);

-- +goose Down
DROP TABLE jobs;
