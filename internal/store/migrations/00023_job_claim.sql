-- +goose Up
-- Claims cost O(batch) however many jobs are due (docs/storage.md, "The
-- job queue"). jobs_due (state, run_at) served a claim whose condition
-- ORed ready jobs with expired leases: no index gives that set in
-- (run_at, id) order, so every claim read and sorted all due rows. The
-- claim now reads the two sets separately, each from an index of its own,
-- in order and up to the batch size:
-- ready jobs by (run_at, id); a job leaves the index when it is claimed.
DROP INDEX jobs_due;
CREATE INDEX jobs_ready ON jobs (run_at, id) WHERE state = 'ready';
-- running jobs by (run_at, id): the claim reads them in order and takes
-- those whose lease expired, passing over the few that workers hold.
CREATE INDEX jobs_running ON jobs (run_at, id) WHERE state = 'running';
-- done jobs by when they finished: the pruning after the retention period.
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state = 'done';

-- +goose Down
DROP INDEX jobs_finished;
DROP INDEX jobs_running;
DROP INDEX jobs_ready;
CREATE INDEX jobs_due ON jobs (state, run_at);
