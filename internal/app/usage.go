package app

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/usage"
)

// maxUsageDays bounds one usage query.
const maxUsageDays = 366

// Usage reports ledger counts by day and endpoint for days from..to
// (YYYY-MM-DD, inclusive). accountID "" reports every account (operator).
func (a *App) Usage(ctx context.Context, accountID, from, to string) ([]usage.Row, error) {
	const op = "app.Usage"
	f, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return nil, apperr.Param(op, "from", "from must be a date YYYY-MM-DD")
	}
	t, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return nil, apperr.Param(op, "to", "to must be a date YYYY-MM-DD")
	}
	if t.Before(f) {
		return nil, apperr.Param(op, "to", "to must not be before from")
	}
	// Both ends count: from == to is one day.
	if days := int(t.Sub(f)/(24*time.Hour)) + 1; days > maxUsageDays {
		return nil, apperr.Param(op, "to", "a usage query covers at most 366 days")
	}
	return a.store.Read().UsageSummary(ctx, accountID, from, to)
}
