// Package store is the only package that knows SQL and database drivers.
//
// It opens either an embedded SQLite file (modernc.org/sqlite, pure Go) or a
// PostgreSQL database (pgx through database/sql) and runs one set of queries
// on both: the queries use PostgreSQL-style $N placeholders, which modernc
// binds by number, and stay inside the subset both engines share
// (architecture.md 5.3). Where the engines must differ (row locking for the
// job queue, sequences), the Dialect seam names the variant.
//
// SQLite runs with two pools on one file: a single-connection writer (WAL,
// BEGIN IMMEDIATE) and a multi-connection reader. On PostgreSQL both are the
// same pool. Write transactions go through Write, which retries
// serialization failures and SQLITE_BUSY; reads use Read.
//
// Timestamps are written by the application clock in UTC truncated to
// microseconds (PostgreSQL precision), never by SQL defaults. Unique
// violations surface as apperr.Conflict from both drivers.
//
// The store maps rows to the records of the package that owns each concept
// (account, ticketing, invoicing, gtfs, idempotency, jobs, usage, catalog)
// and defines no record type of its own; no database/sql type leaves it
// (TestAPIHandsOutDomainTypes).
package store
