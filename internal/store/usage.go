package store

import (
	"context"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/usage"
	"github.com/jackc/pgx/v5"
)

const (
	insertUsageBatchSQL = `INSERT INTO usage_batches (at, events, data) VALUES ($1, $2, $3)`
	upsertUsageDailySQL = `INSERT INTO usage_daily (account_id, environment, day, endpoint, counted, uncounted, refused)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (account_id, day, endpoint, environment) DO UPDATE
		SET counted = usage_daily.counted + excluded.counted, uncounted = usage_daily.uncounted + excluded.uncounted,
			refused = usage_daily.refused + excluded.refused`
)

// InsertUsage commits one ledger batch: a single row holding every event
// (usage.EncodeBatch) plus an upsert of the per-day counters it touches.
// The cost per batch is a few statements whatever its size, which is what
// keeps the ledger off the critical path (bench/ledger.sh).
func (q Q) InsertUsage(ctx context.Context, events []usage.Event) error {
	if len(events) == 0 {
		return nil
	}
	at := now(events[0].At)
	if _, err := q.execPrepared(ctx, insertUsageBatchSQL,
		at, len(events), usage.EncodeBatch(events)); err != nil {
		return mapErr(err)
	}
	return q.addCounts(ctx, usage.Aggregate(events))
}

// addCounts adds to the per-day counters.
func (q Q) addCounts(ctx context.Context, counts []usage.Count) error {
	for _, c := range counts {
		if _, err := q.execPrepared(ctx, upsertUsageDailySQL,
			c.AccountID, string(c.Environment), c.Day, c.Endpoint, c.Counted, c.Uncounted, c.Refused); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// usageCountsSQL is every per-day counter row: usage_daily and the rows
// PostgreSQL's ledger staged in usage_pending and RollupUsageCounts has not
// moved yet. A roll-up moves rows in one statement, so a snapshot sees each
// count in exactly one of the two; readers sum by their key.
const usageCountsSQL = `SELECT account_id, environment, day, endpoint, counted, uncounted, refused FROM usage_daily
	UNION ALL SELECT account_id, environment, day, endpoint, counted, uncounted, refused FROM usage_pending`

// UsageSummary counts ledger rows by account, day and endpoint for days in
// [fromDay, toDay] (YYYY-MM-DD); accountID "" means every account. Test and
// live requests of an account are added up.
func (q Q) UsageSummary(ctx context.Context, accountID, fromDay, toDay string) ([]usage.Row, error) {
	rows, err := q.db.QueryContext(ctx, `SELECT account_id, day, endpoint, SUM(counted), SUM(uncounted), SUM(refused)
		FROM (`+usageCountsSQL+`) u
		WHERE ($1 = '' OR account_id = $1) AND day >= $2 AND day <= $3
		GROUP BY account_id, day, endpoint ORDER BY account_id, day, endpoint`, accountID, fromDay, toDay)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	out := []usage.Row{}
	for rows.Next() {
		var r usage.Row
		if err := rows.Scan(&r.AccountID, &r.Day, &r.Endpoint, &r.Counted, &r.Uncounted, &r.Refused); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, r)
	}
	return out, mapErr(rows.Err())
}

// UsageEvents returns every ledger event committed in [from, to) (audits and
// tests: each request appears exactly once).
func (q Q) UsageEvents(ctx context.Context, from, to time.Time) ([]usage.Event, error) {
	rows, err := q.db.QueryContext(ctx, `SELECT data FROM usage_batches WHERE at >= $1 AND at < $2 ORDER BY id`, now(from), now(to))
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var out []usage.Event
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, mapErr(err)
		}
		ev, err := usage.DecodeBatch(data)
		if err != nil {
			return nil, err
		}
		out = append(out, ev...)
	}
	return out, mapErr(rows.Err())
}

// UsageByRequest returns the ledger events of one request id. It decodes
// the whole ledger, so it is for tests and audits, never a request path.
func (q Q) UsageByRequest(ctx context.Context, requestID string) ([]usage.Event, error) {
	all, err := q.UsageEvents(ctx, time.Unix(0, 0), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		return nil, err
	}
	var out []usage.Event
	for _, e := range all {
		if e.RequestID == requestID {
			out = append(out, e)
		}
	}
	return out, nil
}

// LedgerDurability says when a ledger commit returns.
type LedgerDurability int

const (
	// LedgerCommitted returns once the batch is committed in the database
	// server: it survives the crash of any farebox instance. This is what
	// SQLite's WAL with synchronous=NORMAL gives every commit; on PostgreSQL
	// the ledger pool's sessions run with synchronous_commit=off, so it does not
	// wait for the WAL flush (the server flushes within wal_writer_delay; a
	// crash of the database server itself may lose the last fraction of a
	// second of ledger rows, never a business record).
	LedgerCommitted LedgerDurability = iota
	// LedgerFlushed also waits for the WAL flush to disk on PostgreSQL.
	LedgerFlushed
)

// RollupSegment stores one journal segment of the ledger in one
// transaction: its rows as one usage_batches row (usage.Compact: one string
// table for the segment, a third of the frames' size), the counters, and
// the segment's name; a segment already recorded changes nothing.
func (s *Store) RollupSegment(ctx context.Context, name string, data []byte) error {
	var tally usage.Tally
	if len(data) > 0 {
		var err error
		if data, tally, err = usage.Compact(data); err != nil {
			return err
		}
	}
	return s.Write(ctx, func(q Q) error {
		res, err := q.db.ExecContext(ctx, `INSERT INTO usage_segments (name, rolled_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
			name, now(s.clock.Now()))
		if err != nil {
			return mapErr(err)
		}
		if n, _ := res.RowsAffected(); n == 0 || tally.Events == 0 {
			return nil
		}
		// One row per segment (about a second of traffic), not per batch.
		if _, err := q.execPrepared(ctx, insertUsageBatchSQL, now(tally.First), tally.Events, data); err != nil {
			return mapErr(err)
		}
		return q.addCounts(ctx, tally.Counts)
	})
}

// UsageWriter is the usage.Writer committing ledger batches to this store.
// On PostgreSQL a batch is a single autocommitted statement (one round trip)
// on the ledger's own connection, whose session does not wait for the WAL
// flush unless d is LedgerFlushed (then the batch commits on the main pool).
func (s *Store) UsageWriter(d LedgerDurability) usage.Writer {
	if s.engine == Postgres {
		exec := s.ledgerExec(d)
		return func(ctx context.Context, events []usage.Event) error {
			if len(events) == 0 {
				return nil
			}
			return mapErr(exec(ctx, insertUsagePostgresSQL, usagePostgresArgs(events)...))
		}
	}
	return func(ctx context.Context, events []usage.Event) error {
		return s.Write(ctx, func(q Q) error { return q.InsertUsage(ctx, events) })
	}
}

// ledgerExec is how PostgreSQL's ledger runs its one statement per batch
// or window: on the ledger's own connection, whose session does not wait
// for the WAL flush, or on the main pool when d is LedgerFlushed.
func (s *Store) ledgerExec(d LedgerDurability) func(ctx context.Context, sql string, args ...any) error {
	if d == LedgerFlushed {
		return func(ctx context.Context, sql string, args ...any) error {
			_, err := s.w.ExecContext(ctx, sql, args...)
			return err
		}
	}
	return s.ledger.exec
}

// insertUsagePostgresSQL stores a batch row and appends its counters to
// usage_pending in one statement (a data-modifying CTE; PostgreSQL-only,
// hence outside the shared subset). Appending, not upserting usage_daily:
// an upsert per batch updated the same counter row hundreds of times a
// second, and the backend's CPU per batch grew with the row's chain of
// dead versions (bench/ledger-cpu.sh, docs/storage.md); RollupUsageCounts
// folds the staged rows into usage_daily once a second.
const insertUsagePostgresSQL = `WITH batch AS (
		INSERT INTO usage_batches (at, events, data) VALUES ($1, $2, $3))
	INSERT INTO usage_pending (account_id, environment, day, endpoint, counted, uncounted, refused)
	SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[])`

// rollupUsageSQL moves every staged counter row into usage_daily in one
// statement: the rows it deletes are exactly the rows it adds, and a
// concurrent roll-up (another instance) skips the rows this one took.
const rollupUsageSQL = `WITH moved AS (
		DELETE FROM usage_pending RETURNING account_id, environment, day, endpoint, counted, uncounted, refused)
	INSERT INTO usage_daily (account_id, environment, day, endpoint, counted, uncounted, refused)
	SELECT account_id, environment, day, endpoint, SUM(counted), SUM(uncounted), SUM(refused)
	FROM moved GROUP BY account_id, environment, day, endpoint
	ON CONFLICT (account_id, day, endpoint, environment) DO UPDATE
	SET counted = usage_daily.counted + excluded.counted, uncounted = usage_daily.uncounted + excluded.uncounted,
		refused = usage_daily.refused + excluded.refused`

// RollupUsageCounts folds the counters PostgreSQL's ledger staged in
// usage_pending into usage_daily (farebox serve runs it every second and
// at shutdown). Readers add both tables, so it changes no report; it keeps
// usage_pending short. A no-op on SQLite, whose ledger writes usage_daily.
func (s *Store) RollupUsageCounts(ctx context.Context) error {
	if s.engine != Postgres {
		return nil
	}
	_, err := s.w.ExecContext(ctx, rollupUsageSQL)
	return mapErr(err)
}

// usagePostgresArgs are the parameters of insertUsagePostgresSQL.
func usagePostgresArgs(events []usage.Event) []any {
	counts := usage.Aggregate(events)
	acc := make([]string, len(counts))
	env := make([]string, len(counts))
	day := make([]string, len(counts))
	ep := make([]string, len(counts))
	cnt := make([]int64, len(counts))
	unc := make([]int64, len(counts))
	ref := make([]int64, len(counts))
	for i, c := range counts {
		acc[i], env[i], day[i], ep[i], cnt[i], unc[i], ref[i] = c.AccountID, string(c.Environment), c.Day, c.Endpoint, c.Counted, c.Uncounted, c.Refused
	}
	return []any{now(events[0].At), len(events), usage.EncodeBatch(events), acc, env, day, ep, cnt, unc, ref}
}

// LedgerApplicationName is the application_name of the PostgreSQL ledger
// connection (followed by the schema when Options.Schema is set).
const LedgerApplicationName = "farebox-usage-ledger"

// ledgerConn is the PostgreSQL ledger's connection: pgx directly, without
// database/sql's pool and argument conversion, since the ledger writes one
// batch at a time. A broken connection is replaced at the next batch.
type ledgerConn struct {
	cfg  *pgx.ConnConfig
	mu   sync.Mutex
	conn *pgx.Conn
}

func (l *ledgerConn) exec(ctx context.Context, sql string, args ...any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		c, err := pgx.ConnectConfig(ctx, l.cfg)
		if err != nil {
			return err
		}
		l.conn = c
	}
	_, err := l.conn.Exec(ctx, sql, args...)
	if err != nil && (l.conn.IsClosed() || isConnErr(err)) {
		_ = l.conn.Close(context.Background())
		l.conn = nil
	}
	return err
}

func (l *ledgerConn) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		_ = l.conn.Close(context.Background())
		l.conn = nil
	}
}

// NewLedger returns a usage ledger committing to this store (one batch
// write in flight at a time: batches grow while it runs, see usage.Ledger).
func (s *Store) NewLedger(d LedgerDurability, onCommit func(batch int, d time.Duration)) *usage.Ledger {
	// Without the prepared statements the ledger still works, just slower.
	_ = s.prepareHot(context.Background())
	return usage.NewLedger(s.UsageWriter(d), onCommit)
}
