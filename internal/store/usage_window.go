package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/farebox/farebox/internal/usage"
)

// insertUsageWindowSQL stores a deferred ledger window under its key; a
// window already stored (a retry after an unknown outcome) is skipped.
const insertUsageWindowSQL = `INSERT INTO usage_batches (at, events, data, window_key) VALUES ($1, $2, $3, $4)
	ON CONFLICT (window_key) DO NOTHING`

// insertUsageWindowPostgresSQL is insertUsagePostgresSQL under a window
// key: the counters are staged only when the batch row was inserted.
const insertUsageWindowPostgresSQL = `WITH batch AS (
		INSERT INTO usage_batches (at, events, data, window_key) VALUES ($1, $2, $3, $11)
		ON CONFLICT (window_key) DO NOTHING RETURNING 1)
	INSERT INTO usage_pending (account_id, environment, day, endpoint, counted, uncounted, refused)
	SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[])
	WHERE EXISTS (SELECT 1 FROM batch)`

// WindowWriter is the usage.KeyedWriter committing the deferred ledger's
// windows to this store, each once whatever the retries (migration 00039):
// on PostgreSQL one statement on the ledger's connection (the main pool
// when d is LedgerFlushed), on SQLite one transaction on the writer.
func (s *Store) WindowWriter(d LedgerDurability) usage.KeyedWriter {
	if s.engine == Postgres {
		exec := s.ledgerExec(d)
		return func(ctx context.Context, key string, events []usage.Event) error {
			if len(events) == 0 {
				return nil
			}
			return mapErr(exec(ctx, insertUsageWindowPostgresSQL, append(usagePostgresArgs(events), key)...))
		}
	}
	return func(ctx context.Context, key string, events []usage.Event) error {
		if len(events) == 0 {
			return nil
		}
		return s.Write(ctx, func(q Q) error {
			res, err := q.db.ExecContext(ctx, insertUsageWindowSQL, now(events[0].At), len(events), usage.EncodeBatch(events), key)
			if err != nil {
				return mapErr(err)
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return mapErr(err) // stored by an earlier attempt
			}
			return q.addCounts(ctx, usage.Aggregate(events))
		})
	}
}

// NewDeferredLedger returns a deferred usage ledger (usage.Deferred)
// committing its windows to this store.
func (s *Store) NewDeferredLedger(d LedgerDurability, opt usage.DeferredOptions) (*usage.Deferred, error) {
	_ = s.prepareHot(context.Background()) // the roll-up's and events' statements; the ledger works without
	return usage.NewDeferred(s.WindowWriter(d), opt)
}

// LastUsageBatch is the position the ledger stands at: the newest batch
// committed (by any instance, any mode); found is false in an empty
// ledger. farebox serve logs it at start, so after a crash the operator
// sees the last window the crashed process committed.
func (q Q) LastUsageBatch(ctx context.Context) (pos usage.Position, found bool, err error) {
	var key sql.NullString
	err = q.db.QueryRowContext(ctx, `SELECT id, at, events, window_key FROM usage_batches ORDER BY id DESC LIMIT 1`).
		Scan(&pos.Batch, &pos.At, &pos.Rows, &key)
	if errors.Is(err, sql.ErrNoRows) {
		return usage.Position{}, false, nil
	}
	if err != nil {
		return usage.Position{}, false, mapErr(err)
	}
	pos.Key = key.String
	return pos, true, nil
}
