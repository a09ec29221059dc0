// Package jobs is farebox's durable background job runner (architecture.md
// 5.6). Jobs live in the database table `jobs`; a job is enqueued in the same
// transaction as the business write that needs it (the outbox property), so a
// committed invoice always has its generation job and a rolled-back one never
// does.
//
// The package holds the runner logic only: leases, retries with exponential
// backoff and jitter, the dead state, the worker pool, the in-process wake-up
// and a deterministic RunOnce for tests. SQL lives in internal/store, which
// implements Queue (claiming with FOR UPDATE SKIP LOCKED on PostgreSQL and a
// plain claim inside SQLite's single-writer transaction).
//
// Limits: delivery is at least once. A worker that dies or stalls past its
// lease loses the job to another worker, so handlers must be idempotent
// (invoice files are upserted by invoice id and format). There is no
// LISTEN/NOTIFY (CockroachDB lacks it): other instances see new jobs within
// one poll interval; the enqueuing instance is woken at once by Notify.
// There are no periodic or unique jobs.
package jobs
