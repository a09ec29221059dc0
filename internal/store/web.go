package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/jobs"
)

// InsertWebSession stores a session and drops the expired ones (there are
// few: one per sign-in).
func (q Q) InsertWebSession(ctx context.Context, s account.WebSession) error {
	if _, err := q.db.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at <= $1`, now(s.CreatedAt)); err != nil {
		return mapErr(err)
	}
	var acc any
	if s.AccountID != "" {
		acc = s.AccountID
	}
	_, err := q.db.ExecContext(ctx, `INSERT INTO web_sessions (id_hash, kind, subject, account_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, s.IDHash, s.Kind, s.Subject, acc, now(s.CreatedAt), now(s.ExpiresAt))
	return mapErr(err)
}

// WebSession returns the unexpired session with the id hash; NotFound
// otherwise.
func (q Q) WebSession(ctx context.Context, idHash string, at time.Time) (account.WebSession, error) {
	var s account.WebSession
	var acc sql.NullString
	err := q.db.QueryRowContext(ctx, `SELECT id_hash, kind, subject, account_id, created_at, expires_at
		FROM web_sessions WHERE id_hash = $1 AND expires_at > $2`, idHash, now(at)).
		Scan(&s.IDHash, &s.Kind, &s.Subject, &acc, &s.CreatedAt, &s.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return s, apperr.NotFoundf("store.WebSession", CodeSessionNotFound)
	}
	if p := nullStr(acc); p != nil {
		s.AccountID = *p
	}
	return s, mapErr(err)
}

// DeleteWebSession ends a session (sign-out).
func (q Q) DeleteWebSession(ctx context.Context, idHash string) error {
	_, err := q.db.ExecContext(ctx, `DELETE FROM web_sessions WHERE id_hash = $1`, idHash)
	return mapErr(err)
}

// JobsInState lists up to limit jobs in state ("" for every state), newest
// first: the console's job queue.
func (q Q) JobsInState(ctx context.Context, state string, limit int) ([]jobs.Record, error) {
	return collect(ctx, q, `SELECT `+jobColumns+` FROM jobs WHERE ($1 = '' OR state = $1) ORDER BY id DESC LIMIT $2`,
		[]any{state, limit}, scanJob)
}

// RetryDeadJob makes a dead job ready again at at with a fresh count of
// attempts; NotFound when no dead job has the id.
func (q Q) RetryDeadJob(ctx context.Context, id int64, at time.Time) error {
	res, err := q.db.ExecContext(ctx, `UPDATE jobs SET state = 'ready', attempts = 0, run_at = $1, finished_at = NULL
		WHERE id = $2 AND state = 'dead'`, now(at), id)
	if err != nil {
		return mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return apperr.E("store.RetryDeadJob", apperr.NotFound, CodeDeadJobNotFound, "no dead job has this id")
	}
	return nil
}
