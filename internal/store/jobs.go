package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	_, err := q.execPrepared(ctx, insertJobSQL, j.Kind, j.Payload, jobs.StateReady, j.MaxAttempts, now(runAt), now(at))
	return mapErr(err)
}

const insertJobSQL = `INSERT INTO jobs (kind, payload, state, attempts, max_attempts, run_at, created_at)
	VALUES ($1, $2, $3, 0, $4, $5, $6)`

// Jobs lists all jobs of a kind by id.
func (q Q) Jobs(ctx context.Context, kind string) ([]jobs.Record, error) {
	return collect(ctx, q, `SELECT `+jobColumns+` FROM jobs WHERE kind = $1 ORDER BY id`, []any{kind}, scanJob)
}

// jobColumns are the columns scanJob reads.
const jobColumns = `id, kind, payload, state, attempts, max_attempts, run_at, locked_by, locked_until, last_error`

func scanJob(scan scanner) (j jobs.Record, err error) {
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
}

// JobQueue is the store's implementation of jobs.Queue.
type JobQueue struct {
	s    *Store
	kind string // "": every kind
}

// Jobs returns the job queue of this store.
func (s *Store) Jobs() JobQueue { return JobQueue{s: s} }

// JobsOf returns the queue of one kind of job: its Claim takes only jobs
// of kind (a runner with workers of their own for webhook deliveries).
func (s *Store) JobsOf(kind string) JobQueue { return JobQueue{s: s, kind: kind} }

// Of implements jobs.Queue: the queue of one kind of job.
func (jq JobQueue) Of(kind string) jobs.Queue { return JobQueue{s: jq.s, kind: kind} }

// The claim reads the two kinds of due job separately, each from its own
// partial index in the order it is claimed in, and at most limit of each
// (docs/storage.md, "The job queue"): ready jobs by (run_at, id) from
// jobs_ready, running jobs whose lease expired from jobs_running. Of these
// at most 2·limit rows it takes the first limit by (run_at, id): what one
// ordered scan of all due jobs would give, at a cost that does not grow
// with the backlog. (One condition ORing both kinds defeats the ordered
// index scan: every claim read and sorted every due row.)
//
// The engines differ in the lock (docs/storage.md, "Where the engines
// differ"): on PostgreSQL concurrent claims skip each other's locked rows
// (a row another claim took meanwhile is re-checked and dropped, and the
// scan reads on); SQLite has a single writer, so the statement inside the
// write transaction is already exclusive.
const claimJob = `WITH ready AS (SELECT id, run_at FROM jobs WHERE state = 'ready' AND run_at <= $3%[2]s
		ORDER BY run_at, id LIMIT $4%[1]s),
	expired AS (SELECT id, run_at FROM jobs WHERE state = 'running' AND locked_until <= $3%[2]s
		ORDER BY run_at, id LIMIT $4%[1]s),
	claimed AS (SELECT id FROM (SELECT id, run_at FROM ready UNION ALL SELECT id, run_at FROM expired) due
		ORDER BY run_at, id LIMIT $4)
	UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = $1, locked_until = $2
	WHERE id %[3]s
	RETURNING id, kind, payload, attempts, max_attempts, run_at`

// The claim statements: [engine is PostgreSQL][queue of one kind]. A queue
// of one kind adds `AND kind = $5` to both parts (JobsOf). On PostgreSQL
// the claimed ids are collected into an array first and the UPDATE finds
// them by the primary key (id = ANY(ARRAY(...)), an index condition
// whatever the statistics say): with `id IN (SELECT ...)` and statistics
// taken while the table was small (a month turn enqueues 10,000 jobs at
// once, before autovacuum analyzes them), PostgreSQL joined the claimed
// ids to an index scan of every job, 478 × 20,000 comparisons, 3.4 s per
// claim of 484 jobs (BenchmarkMonthTurnApplePushes; docs/storage.md).
var claimJobs4 = func() (v [2][2]string) {
	for pg, e := range [][2]string{{"", "IN (SELECT id FROM claimed)"}, {" FOR UPDATE SKIP LOCKED", "= ANY (ARRAY(SELECT id FROM claimed))"}} {
		lock, match := e[0], e[1]
		v[pg][0] = fmt.Sprintf(claimJob, lock, "", match)
		v[pg][1] = fmt.Sprintf(claimJob, lock, " AND kind = $5", match)
	}
	return v
}()

func claimJobSQL(e Engine, ofKind bool) string {
	return claimJobs4[b2i(e == Postgres)][b2i(ofKind)]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// anyJobDue is 1 when a claim at $1 would find a job (of kind $2 for a
// queue of one kind): two index probes.
const anyJobDue = `SELECT CASE WHEN EXISTS (SELECT 1 FROM jobs WHERE state = 'ready' AND run_at <= $1%[1]s)
	OR EXISTS (SELECT 1 FROM jobs WHERE state = 'running' AND locked_until <= $1%[1]s) THEN 1 ELSE 0 END`

var anyJobDueOf = [2]string{fmt.Sprintf(anyJobDue, ""), fmt.Sprintf(anyJobDue, " AND kind = $2")}

func anyJobDueSQL(ofKind bool) string { return anyJobDueOf[b2i(ofKind)] }

// args appends the queue's kind, if it has one, to a statement's arguments.
func (jq JobQueue) args(a ...any) []any {
	if jq.kind != "" {
		a = append(a, jq.kind)
	}
	return a
}

// Claim implements jobs.Queue. The jobs come in (run_at, id) order.
//
// On PostgreSQL the claim is one statement in a transaction of its own:
// one round trip, an idle poll included (an UPDATE of no rows). On SQLite
// an idle poll reads first, so that it does not take the database-wide
// write lock unless a job is due.
func (jq JobQueue) Claim(ctx context.Context, worker string, at time.Time, lease time.Duration, limit int) ([]jobs.Job, error) {
	args := jq.args(worker, now(at.Add(lease)), now(at), limit)
	if jq.s.engine == Postgres {
		// Autocommitted: pgAutocommit, so a claim cancelled at shutdown is
		// never reported failed while it commits (the jobs would sit leased).
		var out []jobs.Job
		err := jq.s.pgAutocommit(ctx, func(run context.Context, conn *sql.Conn) (err error) {
			out, err = claimJobs(run, conn, claimJobSQL(Postgres, jq.kind != ""), args)
			return err
		})
		return out, mapErr(err)
	}
	var due int
	if err := jq.s.r.QueryRowContext(ctx, anyJobDueSQL(jq.kind != ""), jq.args(now(at))...).Scan(&due); err != nil {
		return nil, mapErr(err)
	}
	if due == 0 {
		return nil, nil
	}
	var out []jobs.Job
	err := jq.s.Write(ctx, func(q Q) (err error) {
		out, err = claimJobs(ctx, q.prepared(ctx, claimJobSQL(SQLite, jq.kind != "")), "", args)
		return err
	})
	return out, err
}

// claimJobs runs a claim statement and returns its jobs by (run_at, id).
func claimJobs(ctx context.Context, db interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}, stmt string, args []any) ([]jobs.Job, error) {
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type claimed struct {
		job   jobs.Job
		runAt time.Time
	}
	var cs []claimed
	for rows.Next() {
		var c claimed
		if err := rows.Scan(&c.job.ID, &c.job.Kind, &c.job.Payload, &c.job.Attempts, &c.job.MaxAttempts, &c.runAt); err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(cs, func(a, b claimed) int {
		if c := a.runAt.Compare(b.runAt); c != 0 {
			return c
		}
		return cmp.Compare(a.job.ID, b.job.ID)
	})
	out := make([]jobs.Job, len(cs))
	for i, c := range cs {
		out[i] = c.job
	}
	return out, nil
}

// Complete implements jobs.Queue.
func (jq JobQueue) Complete(ctx context.Context, id int64, worker string, at time.Time) error {
	return jq.s.Write(ctx, func(q Q) error {
		_, err := q.db.ExecContext(ctx, `UPDATE jobs SET state = 'done', locked_by = NULL, locked_until = NULL, finished_at = $1
			WHERE id = $2 AND locked_by = $3`, now(at), id, worker)
		return err
	})
}

// DeleteJobs removes finished jobs inside the caller's transaction,
// each if its worker still holds it: handlers that record their results
// (which are then the jobs' record) and their completion in one commit,
// then return jobs.ErrCompleted. Webhook attempts finish this way, so the
// queue does not grow by a done row per attempt. held maps a job id to
// the worker that ran it.
func (q Q) DeleteJobs(ctx context.Context, held map[int64]string) error {
	byWorker := map[string][]any{}
	for id, w := range held {
		byWorker[w] = append(byWorker[w], id)
	}
	for w, ids := range byWorker {
		if _, err := q.db.ExecContext(ctx, `DELETE FROM jobs WHERE locked_by = $1 AND id IN (`+q.placeholders(2, len(ids))+`)`,
			append([]any{w}, ids...)...); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// CompleteJobs marks jobs done inside the caller's transaction, each if
// worker still holds it: a handler that finishes many jobs at once (a
// month turn's Apple pass updates) records them in one statement with its
// results, then returns jobs.ErrCompleted.
func (q Q) CompleteJobs(ctx context.Context, ids []int64, worker string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, len(ids)+2)
	args = append(args, now(at), worker)
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := q.db.ExecContext(ctx, `UPDATE jobs SET state = 'done', locked_by = NULL, locked_until = NULL, finished_at = $1
		WHERE locked_by = $2 AND id IN (`+q.placeholders(3, len(ids))+`)`, args...)
	return mapErr(err)
}

// EnqueueJobs inserts jobs inside the caller's transaction, in one
// statement on PostgreSQL (one round trip).
func (q Q) EnqueueJobs(ctx context.Context, js []jobs.NewJob, at time.Time) error {
	if len(js) == 0 {
		return nil
	}
	if q.engine == SQLite {
		// One prepared statement per job (hotStatements): in-process, it
		// costs no round trip, and it is not parsed anew for every count
		// of jobs.
		for _, j := range js {
			if err := q.EnqueueJob(ctx, j, at); err != nil {
				return err
			}
		}
		return nil
	}
	rows := make([]string, len(js))
	args := make([]any, 0, 6*len(js))
	for i, j := range js {
		if j.MaxAttempts <= 0 {
			j.MaxAttempts = jobs.DefaultMaxAttempts
		}
		runAt := j.RunAt
		if runAt.IsZero() {
			runAt = at
		}
		rows[i] = "(" + q.placeholders(len(args)+1, 6) + ", 0)"
		args = append(args, j.Kind, j.Payload, jobs.StateReady, j.MaxAttempts, now(runAt), now(at))
	}
	_, err := q.db.ExecContext(ctx, `INSERT INTO jobs (kind, payload, state, max_attempts, run_at, created_at, attempts) VALUES `+
		strings.Join(rows, ", "), args...)
	return mapErr(err)
}

// Retry implements jobs.Queue.
func (jq JobQueue) Retry(ctx context.Context, id int64, worker string, at, runAt time.Time, msg string, dead bool) error {
	state, fin := jobs.StateReady, any(nil)
	if dead {
		state, fin = jobs.StateDead, now(at)
	}
	// At most 2000 bytes of valid UTF-8 without NUL: PostgreSQL refuses
	// text that is not (a cut through a character, or a NUL, would fail
	// the update and leave the job running, to be claimed again and again).
	if len(msg) > 2000 {
		msg = msg[:2000]
	}
	msg = strings.ReplaceAll(strings.ToValidUTF8(msg, ""), "\x00", "")
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

// pruneBatch is how many done jobs one transaction of PruneJobs deletes.
const pruneBatch = 1000

// PruneJobs deletes the jobs that finished successfully before before, in
// transactions of up to pruneBatch rows found by jobs_finished, and
// returns how many it deleted. Dead jobs stay for inspection (and for
// JobState, which reports a dead invoice-files job); ready and running
// jobs are never touched.
func (jq JobQueue) PruneJobs(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		var n int64
		err := jq.s.Write(ctx, func(q Q) error {
			res, err := q.db.ExecContext(ctx, `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs
				WHERE state = 'done' AND finished_at < $1 ORDER BY finished_at LIMIT $2)`, now(before), pruneBatch)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		total += int(n)
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
}
