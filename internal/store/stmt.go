package store

// The general statement wrapper: a statement run on the transaction,
// through its prepared form on SQLite's writer when there is one
// (the job claim and the webhook deliveries and attempts use it).

import (
	"context"
	"database/sql"
)

// prepared is the transaction's handle of a hot statement prepared on
// SQLite's writer (hotStatements), or the transaction itself when the
// statement is not prepared (PostgreSQL, or before NewLedger prepared
// them); claimJobs and the attempt log run their statement on it.
func (q Q) prepared(ctx context.Context, query string) stmtOrTx {
	if q.tx != nil && q.s != nil {
		if st, ok := q.s.stmts.Load(query); ok {
			return stmtOrTx{st: q.tx.StmtContext(ctx, st.(*sql.Stmt))}
		}
	}
	return stmtOrTx{db: q.db, query: query}
}

// stmtOrTx runs one statement, prepared or not.
type stmtOrTx struct {
	st    *sql.Stmt
	db    dbtx
	query string
}

func (s stmtOrTx) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	if s.st != nil {
		return s.st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, s.query, args...)
}

func (s stmtOrTx) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	if s.st != nil {
		return s.st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, s.query, args...)
}

func (s stmtOrTx) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	if s.st != nil {
		return s.st.ExecContext(ctx, args...)
	}
	return s.db.ExecContext(ctx, s.query, args...)
}
