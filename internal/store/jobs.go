package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/jobs"
)

// EnqueueJob inserts a job inside the caller's transaction (the outbox
// property: the job exists exactly when the business write commits).
func (q Q) EnqueueJob(ctx context.Context, j jobs.NewJob, at time.Time) error {
	if j.MaxAttempts <= 0 {
		j.MaxAttempts = jobs.DefaultMaxAttempts
	}
	runAt := j.RunAt
	if runAt.IsZero() {
		runAt = at
	}
	_, err := q.db.ExecContext(ctx, `INSERT INTO jobs (kind, payload, state, attempts, max_attempts, run_at, created_at)
		VALUES ($1, $2, $3, 0, $4, $5, $6)`, j.Kind, j.Payload, jobs.StateReady, j.MaxAttempts, now(runAt), now(at))
	return mapErr(err)
}

// Jobs lists all jobs of a kind by id.
func (q Q) Jobs(ctx context.Context, kind string) ([]jobs.Record, error) {
	return collect(ctx, q, `SELECT id, kind, payload, state, attempts, max_attempts, run_at, locked_by, locked_until, last_error
		FROM jobs WHERE kind = $1 ORDER BY id`, []any{kind},
		func(scan scanner) (j jobs.Record, err error) {
			var lb, le sql.NullString
			var lu sql.NullTime
			if err = scan(&j.ID, &j.Kind, &j.Payload, &j.State, &j.Attempts, &j.MaxAttempts, &j.RunAt, &lb, &lu, &le); err != nil {
				return j, err
			}
			j.LockedBy, j.LastError = nullStr(lb), nullStr(le)
			if lu.Valid {
				j.LockedUntil = &lu.Time
			}
			return j, nil
		})
}

// JobQueue is the store's implementation of jobs.Queue.
type JobQueue struct{ s *Store }

// Jobs returns the job queue of this store.
func (s *Store) Jobs() JobQueue { return JobQueue{s: s} }

// The claim differs per engine (docs/storage.md, "Where the engines differ"): on
// PostgreSQL concurrent workers skip each other's locked rows; SQLite has a
// single writer, so the plain statement inside the write transaction is
// already exclusive.
const claimJobPostgres = `UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = $1, locked_until = $2
	WHERE id IN (SELECT id FROM jobs
		WHERE (state = 'ready' AND run_at <= $3) OR (state = 'running' AND locked_until <= $3)
		ORDER BY run_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
	RETURNING id, kind, payload, attempts, max_attempts`

const claimJobSQLite = `UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = $1, locked_until = $2
	WHERE id IN (SELECT id FROM jobs
		WHERE (state = 'ready' AND run_at <= $3) OR (state = 'running' AND locked_until <= $3)
		ORDER BY run_at, id LIMIT $4)
	RETURNING id, kind, payload, attempts, max_attempts`

func claimJobSQL(e Engine) string {
	if e == Postgres {
		return claimJobPostgres
	}
	return claimJobSQLite
}

// Claim implements jobs.Queue.
func (jq JobQueue) Claim(ctx context.Context, worker string, at time.Time, lease time.Duration, limit int) ([]jobs.Job, error) {
	// An idle poll reads first: no write transaction (on SQLite the
	// database-wide write lock) unless a job is due.
	var due int
	if err := jq.s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT id FROM jobs
		WHERE (state = 'ready' AND run_at <= $1) OR (state = 'running' AND locked_until <= $1) LIMIT 1) d`, now(at)).Scan(&due); err != nil {
		return nil, mapErr(err)
	}
	if due == 0 {
		return nil, nil
	}
	stmt := claimJobSQLite
	if jq.s.engine == Postgres {
		stmt = claimJobPostgres
	}
	var out []jobs.Job
	err := jq.s.Write(ctx, func(q Q) error {
		out = out[:0]
		rows, err := q.db.QueryContext(ctx, stmt, worker, now(at.Add(lease)), now(at), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var j jobs.Job
			if err := rows.Scan(&j.ID, &j.Kind, &j.Payload, &j.Attempts, &j.MaxAttempts); err != nil {
				return err
			}
			out = append(out, j)
		}
		return rows.Err()
	})
	return out, err
}

// Complete implements jobs.Queue.
func (jq JobQueue) Complete(ctx context.Context, id int64, worker string, at time.Time) error {
	return jq.s.Write(ctx, func(q Q) error {
		_, err := q.db.ExecContext(ctx, `UPDATE jobs SET state = 'done', locked_by = NULL, locked_until = NULL, finished_at = $1
			WHERE id = $2 AND locked_by = $3`, now(at), id, worker)
		return err
	})
}

// Retry implements jobs.Queue.
func (jq JobQueue) Retry(ctx context.Context, id int64, worker string, at, runAt time.Time, msg string, dead bool) error {
	state, fin := jobs.StateReady, any(nil)
	if dead {
		state, fin = jobs.StateDead, now(at)
	}
	if len(msg) > 2000 {
		msg = msg[:2000]
	}
	return jq.s.Write(ctx, func(q Q) error {
		_, err := q.db.ExecContext(ctx, `UPDATE jobs SET state = $1, run_at = $2, last_error = $3, finished_at = $4,
			locked_by = NULL, locked_until = NULL WHERE id = $5 AND locked_by = $6`, state, now(runAt), msg, fin, id, worker)
		return err
	})
}

// Extend implements jobs.Queue.
func (jq JobQueue) Extend(ctx context.Context, id int64, worker string, until time.Time) (bool, error) {
	var n int64
	err := jq.s.Write(ctx, func(q Q) error {
		res, err := q.db.ExecContext(ctx, `UPDATE jobs SET locked_until = $1 WHERE id = $2 AND locked_by = $3 AND state = 'running'`,
			now(until), id, worker)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, mapErr(err)
}

// JobStates counts jobs per state (metrics: queue depth, dead jobs).
func (q Q) JobStates(ctx context.Context) (map[string]int, error) {
	return keyed[int](ctx, q, `SELECT state, COUNT(*) FROM jobs GROUP BY state`)
}

// JobState returns the state of the newest job of kind with payload, or
// "" when there is none.
func (q Q) JobState(ctx context.Context, kind, payload string) (string, error) {
	var s string
	err := q.db.QueryRowContext(ctx, `SELECT state FROM jobs WHERE kind = $1 AND payload = $2 ORDER BY id DESC LIMIT 1`, kind, payload).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return s, mapErr(err)
}

// OldestReadyJob returns when the longest-waiting due job became due (its
// run_at), and false when no job is due at at: the queue-age metric.
func (q Q) OldestReadyJob(ctx context.Context, at time.Time) (time.Time, bool, error) {
	var due time.Time
	err := q.db.QueryRowContext(ctx, `SELECT run_at FROM jobs WHERE state = 'ready' AND run_at <= $1 ORDER BY run_at LIMIT 1`, now(at)).Scan(&due)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, mapErr(err)
	}
	return due.UTC(), true, nil
}
