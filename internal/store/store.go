package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Engine names the database behind a Store.
type Engine string

const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// Options say which database to open.
type Options struct {
	// URL is a postgres:// URL; empty means embedded SQLite in DataDir.
	URL string
	// DataDir holds the SQLite file (farebox.db) when URL is empty.
	DataDir string
	// Schema, on PostgreSQL, sets search_path (tests use one schema each).
	Schema string
	// MaxConns bounds the PostgreSQL pool and the SQLite reader pool.
	MaxConns int
	// MustExist refuses to create the embedded database: Open fails with
	// ErrNoDatabase when the SQLite file is missing instead of creating the
	// data dir and an empty database (operator commands run in the wrong
	// directory must not).
	MustExist bool
	// Clock stamps the rows the store writes on its own (the usage
	// journal's rolled_at); nil is clock.System. Use cases pass their
	// times in.
	Clock clock.Clock
}

// ErrNoDatabase is returned by Open with MustExist when the embedded
// database file does not exist.
var ErrNoDatabase = errors.New("no embedded database")

// Store is an open database.
type Store struct {
	engine Engine
	w, r   *sql.DB
	stmts  sync.Map    // SQLite: query → *sql.Stmt prepared on the writer
	ledger *ledgerConn // PostgreSQL: the usage ledger's connection (synchronous_commit off)
	clock  clock.Clock
}

// Open connects to the database Options describe. It does not migrate.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.MaxConns <= 0 {
		o.MaxConns = 16
	}
	var s *Store
	var err error
	if o.URL == "" || strings.HasPrefix(o.URL, "sqlite:") || strings.HasPrefix(o.URL, "file:") {
		s, err = openSQLite(o)
	} else {
		s, err = openPostgres(o)
	}
	if err != nil {
		return nil, err
	}
	s.clock = o.Clock
	if s.clock == nil {
		s.clock = clock.System{}
	}
	if err := s.Ping(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// SQLite's page caches. modernc.org/sqlite builds SQLite with
// SQLITE_ENABLE_MEMORY_MANAGEMENT, which makes every connection's page
// cache draw on one process-wide LRU (pcache1's unified mode): its limit is
// the sum of the cache_size of every open connection, and any connection
// may recycle the least recently used page of any other. The writer, which
// touches every new page, so grows into the readers' shares: with 2 MiB for
// the writer and 512 KiB for each of 16 readers it held up to 10 MiB of
// pages, filled at 1.5-2.5 MiB per 1,000 invoices and was full only after
// 5,000 or so (bench/soak.sh; issue 33 §5). The pages live outside the Go
// heap (modernc.org/libc maps them), and each page of 4 KiB plus SQLite's
// header takes an 8 KiB slot there, so resident memory is about twice the
// budget.
//
// A reader gains little from a cache of its own: in WAL mode a connection
// drops its whole cache when it starts a read after another connection
// committed (pager_reset), which under any write load is nearly every read,
// so readers held 5-60 KiB each. They keep readerCacheKiB (SQLite keeps at
// least 10 pages anyway) and the writer writerCacheKiB, so the budget is
// pageCacheBudgetKiB: 3 MiB at the default 16 readers (about 6 MiB
// resident), full within the soak's first 1,000 invoices.
const (
	writerCacheKiB = 2048
	readerCacheKiB = 64
)

// pageCacheBudgetKiB is the most page memory SQLite's unified page cache
// holds for one store with readers reader connections (as SQLite counts
// it: page, header and the pager's extra bytes).
func pageCacheBudgetKiB(readers int) int { return writerCacheKiB + readers*readerCacheKiB }

func openSQLite(o Options) (*Store, error) {
	path := filepath.Join(o.DataDir, "farebox.db")
	if strings.HasPrefix(o.URL, "sqlite:") {
		path = strings.TrimPrefix(strings.TrimPrefix(o.URL, "sqlite:"), "//")
	}
	if o.MustExist {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			abs, _ := filepath.Abs(path)
			return nil, fmt.Errorf("%w at %s", ErrNoDatabase, abs)
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("store: create data dir: %w", err)
		}
	}
	// The path goes into a file: URI, where #, ? and % mean something:
	// escaped, a data directory named "data#1" is that directory.
	base := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_time_format=sqlite"
	w, err := sql.Open("sqlite", base+fmt.Sprintf("&_txlock=immediate&_pragma=cache_size(-%d)", writerCacheKiB))
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err := sql.Open("sqlite", base+fmt.Sprintf("&_pragma=query_only(1)&_pragma=cache_size(-%d)", readerCacheKiB))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open sqlite reader: %w", err)
	}
	r.SetMaxOpenConns(o.MaxConns)
	r.SetMaxIdleConns(o.MaxConns)
	return &Store{engine: SQLite, w: w, r: r}, nil
}

func openPostgres(o Options) (*Store, error) {
	cfg, err := pgx.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("store: parse database URL: %w", redact(err))
	}
	if o.Schema != "" {
		cfg.RuntimeParams["search_path"] = o.Schema
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	// The usage ledger's own connection (it writes one batch at a time):
	// its session commits without waiting for the WAL flush (see
	// LedgerCommitted).
	lcfg := cfg.Copy()
	lcfg.RuntimeParams["synchronous_commit"] = "off"
	// Named in pg_stat_activity (per schema, so tests can find their own).
	lcfg.RuntimeParams["application_name"] = strings.TrimSpace(LedgerApplicationName + " " + o.Schema)
	ledger := &ledgerConn{cfg: lcfg}
	return &Store{engine: Postgres, w: db, r: db, ledger: ledger}, nil
}

// redact drops a URL's password from an error message.
func redact(err error) error {
	msg := err.Error()
	if u, perr := url.Parse(msg); perr == nil && u.User != nil {
		return errors.New(strings.Replace(msg, u.User.String()+"@", "", 1))
	}
	return err
}

// Engine reports which database is open.
func (s *Store) Engine() Engine { return s.engine }

// DB returns the writer pool (for metrics and the migrator).
func (s *Store) DB() *sql.DB { return s.w }

// ReaderDB returns the reader pool.
func (s *Store) ReaderDB() *sql.DB { return s.r }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return apperr.E("store.Ping", apperr.Unavailable, CodeDatabaseUnavailable, "database unavailable").WithCause(err)
	}
	return nil
}

// Close closes both pools.
func (s *Store) Close() error {
	err := s.w.Close()
	if s.ledger != nil {
		s.ledger.close()
	}
	if s.r != s.w {
		if e := s.r.Close(); err == nil {
			err = e
		}
	}
	return err
}

// dbtx is what both *sql.DB and *sql.Tx offer.
type dbtx interface {
	PrepareContext(ctx context.Context, q string) (*sql.Stmt, error)
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// Q runs queries on a pool or inside a transaction. All repository methods hang off Q.
type Q struct {
	db     dbtx
	engine Engine
	tx     *sql.Tx // set inside Write
	s      *Store
	after  *[]func() // set inside Write: run after the commit (AfterCommit)
}

// AfterCommit runs f once the transaction q belongs to has committed (not
// when it rolls back or is retried); outside a transaction at once. It
// wakes what waits for the rows the transaction wrote (the job runner).
func (q Q) AfterCommit(f func()) {
	if q.after == nil {
		f()
		return
	}
	*q.after = append(*q.after, f)
}

// affected runs a write and returns how many rows it changed; the error is
// the driver's (callers map it).
func (q Q) affected(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// execPrepared runs a hot statement. On SQLite, where modernc parses every
// statement it is given, the statements listed in hotStatements are
// prepared once on the writer and reused through the transaction;
// PostgreSQL's driver caches statements itself.
func (q Q) execPrepared(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if q.tx != nil && q.s != nil {
		if st, ok := q.s.stmts.Load(query); ok {
			return q.tx.StmtContext(ctx, st.(*sql.Stmt)).ExecContext(ctx, args...)
		}
	}
	return q.db.ExecContext(ctx, query, args...)
}

// hotStatements are prepared on SQLite's writer by NewLedger (after
// migration, before any transaction holds the writer's single connection).
var hotStatements = []string{insertUsageBatchSQL, upsertUsageDailySQL, insertEventSQLite, insertEventNoHooksSQLite,
	insertJobSQL, claimJobs4[0][0], claimJobs4[0][1], recordAttemptSQLite, insertAttemptSQL,
	insertDeliverySQL, lockChainHeadSQL, setChainHeadSQL, insertChainEntrySQL, insertSaltSQL}

func (s *Store) prepareHot(ctx context.Context) error {
	if s.engine != SQLite {
		return nil
	}
	for _, q := range hotStatements {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("store: prepare: %w", err)
		}
		s.stmts.Store(q, st)
	}
	return nil
}

// Read returns a Q on the reader pool for read-only use cases.
// Once a write under the context committed (TrackCommits), its statements
// are no longer cancelled by the context's end.
func (s *Store) Read() Q { return Q{db: ctxDB{s.r, settledCtx}, engine: s.engine} }

// Write runs fn in a write transaction and commits it. Serialization
// failures, deadlocks and SQLITE_BUSY are retried with jittered backoff; fn
// must therefore be safe to run again (no side effects outside the tx).
// An error means nothing of fn committed, except apperr.CodeOutcomeUnknown: on
// PostgreSQL the end of ctx cancels the running statement through the
// server and waits for its answer (pgWrite), so a write is never reported
// failed while it commits.
func (s *Store) Write(ctx context.Context, fn func(q Q) error) error {
	return s.WriteClaimed(ctx, idempotency.Claim{}, fn)
}

// WriteClaimed is Write for the write that commits the change of a request
// holding an Idempotency-Key claim: the transaction also marks claim
// committed, so a take-over of the claim after a crash knows the change is
// already in the database (docs/storage.md). A zero claim marks nothing.
func (s *Store) WriteClaimed(ctx context.Context, claim idempotency.Claim, fn func(q Q) error) error {
	ctx = settledCtx(ctx)
	if s.engine == Postgres {
		return mapErr(s.retrying(ctx, func() error { return s.pgWriteTx(ctx, claim, fn) }))
	}
	return mapErr(s.retrying(ctx, func() error { return s.writeOnce(ctx, claim, fn) }))
}

// retrying runs op until it succeeds or fails for good: serialization
// failures, deadlocks and SQLITE_BUSY are retried with jittered backoff,
// up to 8 attempts.
func (s *Store) retrying(ctx context.Context, op func() error) error {
	const attempts = 8
	var err error
	for i := 0; i < attempts; i++ {
		err = op()
		if err == nil || !retryable(err) {
			return err
		}
		backoff := time.Duration(1<<i)*5*time.Millisecond + time.Duration(rand.IntN(5))*time.Millisecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
	return err
}

func (s *Store) writeOnce(ctx context.Context, claim idempotency.Claim, fn func(q Q) error) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var after []func()
	q := Q{db: tx, engine: s.engine, tx: tx, s: s, after: &after}
	if err = fn(q); err != nil {
		return err
	}
	if err = q.markClaim(ctx, claim); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return err
	}
	noteCommit(ctx)
	for _, f := range after {
		f()
	}
	return nil
}

func retryable(err error) bool {
	is, _ := engineErr(err, func(state string) bool { return state == "40001" || state == "40P01" },
		func(code int) bool { c := code & 0xff; return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED })
	return is
}

// engineErr classifies a driver error of either engine: pg decides on a
// PostgreSQL SQLSTATE, lite on a SQLite (extended) result code; known is
// false when err carries neither.
func engineErr(err error, pg func(state string) bool, lite func(code int) bool) (is, known bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pg(pe.Code), true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return lite(se.Code()), true
	}
	return false, false
}

// IsUnique reports whether err is a unique-constraint violation on either engine.
func IsUnique(err error) bool {
	is, _ := engineErr(err, func(state string) bool { return state == "23505" },
		func(code int) bool {
			return code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
		})
	return is
}

// mapErr turns driver errors into apperr kinds; apperr errors pass through.
func mapErr(err error) error {
	if err == nil || apperr.As(err) != nil {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apperr.E("store", apperr.Unavailable, CodeRequestCancelled, "request cancelled or timed out").WithCause(err)
	case IsUnique(err):
		return apperr.E("store", apperr.Conflict, CodeConflict, "record already exists").WithCause(err)
	case isFull(err):
		return apperr.E("store", apperr.Unavailable, CodeStorageFull, "database storage is full: writes are refused until space is freed; retry later").WithCause(err)
	case isConnErr(err):
		return apperr.E("store", apperr.Unavailable, CodeDatabaseUnavailable, "database unavailable, retry later").WithCause(err)
	}
	return apperr.Wrap("store", err)
}

// isFull reports a full disk or database: SQLITE_FULL (also
// max_page_count reached) or PostgreSQL's disk_full (53100).
func isFull(err error) bool {
	is, _ := engineErr(err, func(state string) bool { return state == "53100" },
		func(code int) bool { return code&0xff == sqlite3.SQLITE_FULL })
	return is
}

func isConnErr(err error) bool {
	if is, known := engineErr(err, func(state string) bool { return strings.HasPrefix(state, "08") || strings.HasPrefix(state, "57P") },
		func(code int) bool {
			c := code & 0xff
			return c == sqlite3.SQLITE_FULL || c == sqlite3.SQLITE_IOERR || c == sqlite3.SQLITE_CANTOPEN
		}); known {
		return is
	}
	// A connection that died under a statement (server restart, terminated
	// backend, network cut) surfaces as EOF, a closed or reset connection or
	// a net.Error rather than a SQLSTATE.
	var netErr net.Error
	msg := err.Error()
	return pgconn.SafeToRetry(err) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &netErr) ||
		strings.Contains(msg, "connect") || strings.Contains(msg, "conn closed") ||
		strings.Contains(msg, "broken pipe") || strings.Contains(msg, "connection reset")
}

// now truncates t to what both engines store exactly.
func now(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
