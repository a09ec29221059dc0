//go:build ledgerfloor

package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/farebox/farebox/internal/usage"
)

// ledgerFloor, in binaries built with -tags ledgerfloor for
// bench/ledger-floor.sh only, replaces the usage ledger's writer by one
// that writes nothing and returns after FAREBOX_LEDGER_FLOOR (a duration;
// "0s" returns at once): the same group commit (usage.Ledger), the same
// requests waiting for their batch, no database. What such a build costs
// against --usage-ledger=false is what waiting for any commit of that
// latency costs a request, whatever the database does (docs/storage.md,
// "The floor of waiting"). Unset, the ledger is the configured one.
func ledgerFloor(log *slog.Logger) usage.Recorder {
	v := os.Getenv("FAREBOX_LEDGER_FLOOR")
	if v == "" {
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		log.Error("FAREBOX_LEDGER_FLOOR is not a duration; using the configured ledger", "value", v)
		return nil
	}
	log.Warn("usage ledger replaced by a writer that only waits: nothing is recorded (ledgerfloor build)", "wait", d.String())
	return usage.NewLedger(func(context.Context, []usage.Event) error {
		if d > 0 {
			time.Sleep(d)
		}
		return nil
	}, nil)
}
