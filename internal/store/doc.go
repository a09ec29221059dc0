// Package store is the only package that knows SQL and database drivers.
//
// It opens either an embedded SQLite file (modernc.org/sqlite, pure Go) or a
// PostgreSQL database (pgx through database/sql) and runs one set of
// hand-written queries on both: the queries use PostgreSQL-style $N
// placeholders, which modernc binds by number, and stay inside the subset
// both engines share. There is no dialect interface: the Store knows its
// Engine, and the few places that branch on it are listed in
// docs/storage.md (the pools, the hot prepared statements, the migration
// translation and lock, the job claim's SKIP LOCKED, the usage ledger's
// writer, the driver error codes). The migrations are written once in
// PostgreSQL's dialect; dialect.go translates their three type spellings
// for SQLite at migration time, and migrations_parity_test.go compares the
// schemas the two engines report after migrating.
//
// Engine-specific SQL: what the engines cannot share (trigger bodies:
// PL/pgSQL functions on PostgreSQL, RAISE(ABORT, …) on SQLite) is written
// in engine blocks of the same migration file,
//
//	-- +engine postgres
//	…
//	-- +engine sqlite
//	…
//	-- +engine end
//
// and each engine runs its block while the other's lines become comments
// (forEngine), keeping the files line for line in step. Migration 00019
// uses them for the books' triggers: issued invoices, their files, the
// audit log and cancellation receipts refuse UPDATE and DELETE, except
// setting an invoice's cancelled_by once (docs/books.md). Nothing in the
// store updates or deletes those rows; books.go only appends and reads.
//
// SQLite runs with two pools on one file: a single-connection writer (WAL,
// BEGIN IMMEDIATE) and a multi-connection reader. On PostgreSQL both are the
// same pool. Write transactions go through Write, which retries
// serialization failures and SQLITE_BUSY; reads use Read.
//
// Timestamps are written by the application clock in UTC truncated to
// microseconds (PostgreSQL precision), never by SQL defaults; the one row
// the store stamps itself uses Options.Clock. Unique violations surface as
// apperr.Conflict from both drivers.
//
// The store maps rows to the records of the package that owns each concept
// (account, ticketing, invoicing, gtfs, idempotency, jobs, usage, catalog)
// and defines no record type of its own; no database/sql type leaves it
// (TestAPIHandsOutDomainTypes).
package store
