package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// A write's outcome and the request's end (docs/storage.md, "A write that
// outlives its request").
//
// pgx answers a cancelled context by closing the connection at once (its
// default context watcher sets a deadline on the socket). The server
// notices only when it next reads from or writes to that socket: an
// autocommitted statement waiting on a lock commits once the lock is
// released, and a COMMIT already sent completes. The caller had been told
// "cancelled" about a write that happened (issue 28). So on PostgreSQL a
// write runs on a connection of its own under a context the request's end
// does not cancel (pgWrite); when the request ends first, the server is
// asked to cancel the statement (the protocol's cancel request) and the
// statement's own answer is awaited: it either failed, and nothing of it
// committed, or it finished, and the write is answered as done. Only when
// the server answers neither within CancelGrace is the connection cut,
// and a write whose commit had been sent is reported as apperr.CodeOutcomeUnknown.
// A statement inside a transaction is not started once its context has
// ended, nor is the COMMIT (ctxDB with gate).

// CancelGrace is how long a write whose request ended waits for the
// server's answer to the cancel request before it gives the connection up.
var CancelGrace = 10 * time.Second

// errOutcomeUnknown is the error of a write whose commit was sent but
// whose answer never came.
func errOutcomeUnknown(cause error) error {
	return apperr.E("store", apperr.Unavailable, apperr.CodeOutcomeUnknown,
		"the database did not confirm whether the change was written; look the result up before retrying").WithCause(cause)
}

// commitLog records whether a write under a context committed
// (TrackCommits).
type commitLog struct{ committed atomic.Bool }

type commitLogKey struct{}

// TrackCommits returns ctx carrying a record of the writes committed under
// it. Once one has committed, the request's end no longer cancels its
// later statements (reads and writes alike): its effects are in the
// database, so it runs to its answer, which says what was done, instead
// of a request_cancelled about a change that happened.
func TrackCommits(ctx context.Context) context.Context {
	return context.WithValue(ctx, commitLogKey{}, &commitLog{})
}

// CommittedUnder reports whether a write under ctx (TrackCommits) committed.
func CommittedUnder(ctx context.Context) bool {
	l, _ := ctx.Value(commitLogKey{}).(*commitLog)
	return l != nil && l.committed.Load()
}

func noteCommit(ctx context.Context) {
	if l, _ := ctx.Value(commitLogKey{}).(*commitLog); l != nil {
		l.committed.Store(true)
	}
}

// settledCtx is ctx, or ctx without its cancellation once a write under it
// committed (TrackCommits).
func settledCtx(ctx context.Context) context.Context {
	if ctx.Err() != nil && CommittedUnder(ctx) {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// ctxDB runs each statement of db under with(ctx) instead of ctx:
//   - the reader pool under settledCtx (Read), so that its statements
//     outlive the request's end once the request committed a write;
//   - a PostgreSQL write transaction of pgWrite under gate: a statement
//     whose context has ended is not started (database/sql refuses a done
//     context before it sends anything); one that starts runs under a
//     context that does not cancel it, the cancellation being pgWrite's
//     cancel request.
type ctxDB struct {
	db   dbtx
	with func(context.Context) context.Context
}

func gate(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

func (c ctxDB) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return c.db.PrepareContext(c.with(ctx), q)
}

func (c ctxDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return c.db.ExecContext(c.with(ctx), q, args...)
}

func (c ctxDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.db.QueryContext(c.with(ctx), q, args...)
}

func (c ctxDB) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return c.db.QueryRowContext(c.with(ctx), q, args...)
}

// pgWrite runs op on one connection of the writer pool. op gets a context
// ctx's end does not cancel and sets *committing just before it sends the
// statement that commits (a COMMIT, or an autocommitted statement). When
// ctx ends while op runs, pgWrite sends the server a cancel request for
// the connection and waits for op: an op that still succeeds committed
// (nil); one whose statement was cancelled (SQLSTATE 57014) wrote nothing
// (ctx's error). Only when neither comes within CancelGrace is the
// connection closed under op: then op's error is apperr.CodeOutcomeUnknown if
// the commit had been sent, else ctx's error. A connection that had a
// cancel request sent is closed afterwards, never reused: a cancel request
// the server delivers late must not meet another request's statement.
func (s *Store) pgWrite(ctx context.Context, op func(run context.Context, conn *sql.Conn, committing *atomic.Bool) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	var pg *pgconn.PgConn
	if err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: the PostgreSQL pool holds a %T", dc)
		}
		pg = c.Conn().PgConn()
		return nil
	}); err != nil {
		conn.Close()
		return err
	}
	var committing, cancelled, cut atomic.Bool
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		cancelled.Store(true)
		grace, stop := context.WithTimeout(context.Background(), CancelGrace)
		defer stop()
		_ = pg.CancelRequest(grace) // on failure the grace below still bounds the wait
		select {
		case <-done:
		case <-grace.Done():
			cut.Store(true)
			_ = pg.Conn().Close() // op's read fails at once
		}
	}()
	err = op(context.WithoutCancel(ctx), conn, &committing)
	close(done)
	<-watched
	if cancelled.Load() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // closes it
	}
	conn.Close()
	switch {
	case err == nil:
		return nil
	case cut.Load() || (committing.Load() && apperr.As(err) == nil && isConnErr(err) && !pgconn.SafeToRetry(err)):
		if committing.Load() {
			return errOutcomeUnknown(err)
		}
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	case cancelled.Load() && isQueryCanceled(err):
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// isQueryCanceled reports PostgreSQL's query_canceled (57014), the answer
// to a cancel request.
func isQueryCanceled(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "57014"
}

// pgWriteTx is writeOnce on PostgreSQL: fn's transaction on a connection of
// pgWrite, its statements gated by ctxDB with gate, the COMMIT sent only while ctx
// has not ended.
func (s *Store) pgWriteTx(ctx context.Context, claim idempotency.Claim, fn func(q Q) error) error {
	var after []func()
	err := s.pgWrite(ctx, func(run context.Context, conn *sql.Conn, committing *atomic.Bool) (err error) {
		tx, err := conn.BeginTx(run, nil)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil && !committing.Load() {
				_ = tx.Rollback()
			}
		}()
		q := Q{db: ctxDB{tx, gate}, engine: s.engine, tx: tx, s: s, after: &after}
		if err = fn(q); err != nil {
			return err
		}
		if err = q.markClaim(ctx, claim); err != nil {
			return err
		}
		if err = ctx.Err(); err != nil {
			return err
		}
		committing.Store(true)
		return tx.Commit()
	})
	if err != nil {
		return err
	}
	noteCommit(ctx)
	for _, f := range after {
		f()
	}
	return nil
}

// pgAutocommit runs one autocommitted write statement through pgWrite:
// op sends it on conn under run. The caller notes a commit that wrote
// something (noteCommit).
func (s *Store) pgAutocommit(ctx context.Context, op func(run context.Context, conn *sql.Conn) error) error {
	return s.pgWrite(ctx, func(run context.Context, conn *sql.Conn, committing *atomic.Bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		committing.Store(true)
		return op(run, conn)
	})
}
