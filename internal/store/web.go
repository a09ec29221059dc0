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
	var cred any
	if s.Credential != "" {
		cred = s.Credential
	}
	_, err := q.db.ExecContext(ctx, `INSERT INTO web_sessions (id_hash, kind, subject, account_id, created_at, expires_at, credential)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, s.IDHash, s.Kind, s.Subject, acc, now(s.CreatedAt), now(s.ExpiresAt), cred)
	return mapErr(err)
}

// PasswordFingerprintSQL is, in SQL, the fingerprint of a dashboard user's
// password hash (u.password_hash) that a session records as its
// credential: the last 16 characters of the PHC string (of its key). It is
// the same expression as PasswordFingerprint.
const PasswordFingerprintSQL = `substr(u.password_hash, length(u.password_hash) - 15)`

// PasswordFingerprint is PasswordFingerprintSQL in Go.
func PasswordFingerprint(phc string) string {
	if len(phc) <= 16 {
		return phc
	}
	return phc[len(phc)-16:]
}

// WebSession returns the unexpired session with the id hash; NotFound
// otherwise. A dashboard user's session counts only while the user exists
// in its account with the password the session was opened with: a
// removal or a new password that races a sign-in still ends that
// session. An inspector's session (the inspector app) likewise counts only
// while the inspector is not revoked and keeps that password.
func (q Q) WebSession(ctx context.Context, idHash string, at time.Time) (account.WebSession, error) {
	var s account.WebSession
	var acc, flash, cred sql.NullString
	err := q.db.QueryRowContext(ctx, `SELECT id_hash, kind, subject, account_id, created_at, expires_at, flash, credential
		FROM web_sessions WHERE id_hash = $1 AND expires_at > $2
		AND (kind <> 'dashboard' OR EXISTS (SELECT 1 FROM dashboard_users u
			WHERE u.email = web_sessions.subject AND u.account_id = web_sessions.account_id
			AND (web_sessions.credential IS NULL OR web_sessions.credential = `+PasswordFingerprintSQL+`)))
		AND (kind <> 'inspector' OR EXISTS (SELECT 1 FROM inspectors u
			WHERE u.id = web_sessions.subject AND u.revoked_at IS NULL AND u.password_hash IS NOT NULL
			AND web_sessions.credential = `+PasswordFingerprintSQL+`))`, idHash, now(at)).
		Scan(&s.IDHash, &s.Kind, &s.Subject, &acc, &s.CreatedAt, &s.ExpiresAt, &flash, &cred)
	if errors.Is(err, sql.ErrNoRows) {
		return s, apperr.NotFoundf("store.WebSession", CodeSessionNotFound)
	}
	s.AccountID, s.Flash, s.Credential = acc.String, flash.String, cred.String
	return s, mapErr(err)
}

// SetWebSessionFlash stores the session's one-time notice (sealed by the
// caller), replacing one not shown yet; NotFound when the session is gone.
func (q Q) SetWebSessionFlash(ctx context.Context, idHash, flash string, at time.Time) error {
	res, err := q.db.ExecContext(ctx, `UPDATE web_sessions SET flash = $2 WHERE id_hash = $1 AND expires_at > $3`, idHash, flash, now(at))
	if err != nil {
		return mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return apperr.NotFoundf("store.SetWebSessionFlash", CodeSessionNotFound)
	}
	return nil
}

// TakeWebSessionFlash returns the session's one-time notice and clears it,
// once: of two concurrent takers only the one whose clearing matched the
// value read gets it ("" for the other, and when there is none).
func (q Q) TakeWebSessionFlash(ctx context.Context, idHash string) (string, error) {
	var flash sql.NullString
	err := q.db.QueryRowContext(ctx, `SELECT flash FROM web_sessions WHERE id_hash = $1`, idHash).Scan(&flash)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !flash.Valid) {
		return "", nil
	}
	if err != nil {
		return "", mapErr(err)
	}
	res, err := q.db.ExecContext(ctx, `UPDATE web_sessions SET flash = NULL WHERE id_hash = $1 AND flash = $2`, idHash, flash.String)
	if err != nil {
		return "", mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return "", mapErr(err)
	}
	return flash.String, nil
}

// DeleteWebSessionsOf ends every session of kind for subject (a dashboard
// user's address) but keep (an id hash; "" for none), and returns how many
// it ended.
func (q Q) DeleteWebSessionsOf(ctx context.Context, kind, subject, keep string) (int64, error) {
	n, err := q.affected(ctx, `DELETE FROM web_sessions WHERE kind = $1 AND subject = $2 AND id_hash <> $3`, kind, subject, keep)
	return n, mapErr(err)
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
