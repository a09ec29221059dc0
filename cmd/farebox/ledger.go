package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/farebox/farebox/internal/config"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/usage"
)

// runningLedger is the usage ledger of serve: the recorder the pipeline
// writes to (nil when --usage-ledger=false), flush (nil when every
// acknowledged row is already in the database) and stop, which commits
// what it holds; serve defers stop after the HTTP server returned and
// before the store closes.
type runningLedger struct {
	rec   usage.Recorder
	flush func(context.Context) error
	stop  func()
}

// startLedger opens the usage ledger (--usage-ledger), or a nil recorder
// when it is off.
func startLedger(ctx context.Context, cfg config.Config, st *store.Store, metrics *httpapi.Metrics, log *slog.Logger) (runningLedger, error) {
	if !cfg.UsageLedger {
		log.Warn("usage ledger disabled: requests are not recorded for billing")
		return runningLedger{stop: func() {}}, nil
	}
	l, err := openLedger(ctx, cfg, st, metrics, log)
	if err != nil {
		return runningLedger{}, err
	}
	if floor := ledgerFloor(log); floor != nil { // only in -tags ledgerfloor builds
		l.rec, l.flush = floor, nil
	}
	return l, nil
}

// openLedger starts the usage ledger. By default embedded SQLite journals
// rows into memory-mapped segment files in the data dir (usage.FileLog) and
// rolls them into the database every second, while PostgreSQL commits
// them in the database (instances may run on disks that do not outlive
// them, so no instance's disk holds the only copy): after the response, a
// window at a time (usage.Deferred, --usage-ledger-commit=deferred), or
// before it (usage.Ledger, before-response). --usage-ledger-journal
// chooses journal or database for either engine.
func openLedger(ctx context.Context, cfg config.Config, st *store.Store, m *httpapi.Metrics, log *slog.Logger) (runningLedger, error) {
	journaled := cfg.LedgerJournal == "journal" || (cfg.LedgerJournal == "auto" && st.Engine() == store.SQLite)
	if journaled {
		return openJournal(ctx, cfg, st, log)
	}
	logLedgerPosition(ctx, st, log)
	d := store.LedgerCommitted
	if cfg.LedgerFlush {
		d = store.LedgerFlushed
	}
	var l runningLedger
	closeLedger := func() {}
	if cfg.LedgerCommit == "deferred" {
		def, err := st.NewDeferredLedger(d, usage.DeferredOptions{Window: cfg.LedgerWindow, MaxRows: cfg.LedgerWindowRows,
			OnCommit: m.ObserveLedger, OnError: func(err error, rows int, lost bool) {
				m.ObserveLedgerFailure(err, rows, lost)
				if lost {
					log.Error("usage ledger window lost at shutdown: the database refused it", "rows", rows, "error", err.Error())
					return
				}
				log.Warn("usage ledger window write failed; retrying under the same key", "rows", rows, "error", err.Error())
			}})
		if err != nil {
			return runningLedger{}, err
		}
		log.Info("usage ledger: deferred group commit", "window", cfg.LedgerWindow.String(), "window_rows", cfg.LedgerWindowRows, "run", def.Run())
		l.rec, l.flush, closeLedger = def, def.Flush, def.Close
	} else {
		waiting := st.NewLedger(d, m.ObserveLedger)
		l.rec, closeLedger = waiting, waiting.Close
	}
	// PostgreSQL's ledger stages its counters (store.RollupUsageCounts).
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(rctx, time.Second, func() {
			if err := st.RollupUsageCounts(rctx); err != nil && rctx.Err() == nil {
				log.Warn("usage counters rollup failed; retrying", "error", err.Error())
			}
		})
	}()
	l.stop = func() {
		closeLedger() // after the last request: every accepted row is committed
		cancel()
		<-done
		if err := st.RollupUsageCounts(context.Background()); err != nil {
			log.Error("usage counters rollup at shutdown failed; reports still add the staged rows", "error", err.Error())
		}
	}
	return l, nil
}

// logLedgerPosition logs where the ledger stands before this process
// writes to it: after a crash, the last window the crashed process
// committed (its key "<run>-<n>" and time); rows it acknowledged later
// were lost with it.
func logLedgerPosition(ctx context.Context, st *store.Store, log *slog.Logger) {
	pos, found, err := st.Read().LastUsageBatch(ctx)
	switch {
	case err != nil:
		log.Warn("usage ledger: last committed position unknown", "error", err.Error())
	case !found:
		log.Info("usage ledger: last committed position: none (empty ledger)")
	default:
		log.Info("usage ledger: last committed position", "batch", pos.Batch, "at", pos.At.UTC().Format(time.RFC3339Nano),
			"rows", pos.Rows, "window_key", pos.Key)
	}
}

// openJournal starts the journal (usage.FileLog) and its roll-up every
// second; flush rolls the current segment up at once.
func openJournal(ctx context.Context, cfg config.Config, st *store.Store, log *slog.Logger) (runningLedger, error) {
	journal, err := usage.OpenFileLog(filepath.Join(cfg.DataDir, "usage-journal"))
	if err != nil {
		return runningLedger{}, err
	}
	// Segments a crashed process left behind are counted before serving.
	if err := journal.Rollup(ctx, st.RollupSegment); err != nil {
		return runningLedger{}, fmt.Errorf("usage journal: %w", err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(rctx, time.Second, func() {
			if err := journal.Rollup(rctx, st.RollupSegment); err != nil && rctx.Err() == nil {
				log.Warn("usage journal rollup failed; retrying", "error", err.Error())
			}
		})
	}()
	stop := func() {
		_ = journal.Close() // after the last request: refuses rows from here on
		cancel()
		<-done
		if err := journal.Rollup(context.Background(), st.RollupSegment); err != nil {
			log.Error("usage journal rollup at shutdown failed; it is retried at the next start", "error", err.Error())
		}
		_ = journal.Release()
	}
	flush := func(ctx context.Context) error { return journal.Rollup(ctx, st.RollupSegment) }
	return runningLedger{rec: journal, flush: flush, stop: stop}, nil
}
