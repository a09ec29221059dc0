// Package billing is how requests are billed and reported
// (docs/operations.md "Billing"): the billing rule that turns an answered
// request into its usage ledger row, and the usage reports of the
// operator (farebox usage) and of the partner dashboard, read from the
// per-day counters. It reaches the database only through Queries.
package billing

import (
	"context"
	"net/http"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/usage"
)

// Queries are the store methods the usage reports read (store.Q
// implements them).
type Queries interface {
	UsageSummary(ctx context.Context, accountID, fromDay, toDay string) ([]usage.Row, error)
	UsageOfEnvironment(ctx context.Context, accountID string, env account.Environment, fromDay, toDay string) ([]usage.Row, error)
}

// Service holds the billing rule and the usage reports.
type Service struct {
	db    Queries
	clock clock.Clock
	// flush, when set, commits the rows this instance's ledger holds
	// before a report reads (ReadAfterFlush).
	flush func(context.Context) error
}

// New returns the billing of db (read only: the reports read the
// counters; the rows are written by the ledger); c is the service clock
// (nil: the system clock).
func New(db Queries, c clock.Clock) *Service {
	if c == nil {
		c = clock.System{}
	}
	return &Service{db: db, clock: c}
}

// ReadAfterFlush makes every usage report first commit the rows the
// ledger of this instance acknowledged but still holds (the deferred
// ledger's open window, the journal's current segment), so a report shows
// every request this instance answered before it (docs/operations.md
// "Billing"). Call it before serving.
func (s *Service) ReadAfterFlush(flush func(context.Context) error) { s.flush = flush }

// flushed commits what the ledger holds (ReadAfterFlush).
func (s *Service) flushed(ctx context.Context, op string) error {
	if s.flush == nil {
		return nil
	}
	if err := s.flush(ctx); err != nil {
		return apperr.E(op, apperr.Unavailable, CodeUsageLedgerUnavailable,
			"the usage ledger could not commit the latest requests; retry later").WithCause(err)
	}
	return nil
}

// Ledger takes a request's usage row (usage.Deferred, committing it within
// its window after the response; usage.Ledger, the database ledger, or
// usage.FileLog, the journal, once it is durable).
type Ledger = usage.Recorder

// Why a request is not billed (usage.Event.Reason); ReasonCounted for
// billed requests.
const (
	ReasonCounted = usage.ReasonCounted
	ReasonSession = usage.ReasonSession
	ReasonReplay  = usage.ReasonReplay
)

// UncountedReasons are the reasons of unbilled rows (metric label values).
var UncountedReasons = usage.UncountedReasons

// RequestOutcome is what the transport knows of an answered request.
type RequestOutcome struct {
	RequestID   string
	Endpoint    string // route pattern, e.g. "GET /v1/departures.json"
	Status      int
	AccountID   string // the caller or the account the request is attributed to
	Environment account.Environment
	// Uncounted, when set, is why the request is not billed although it
	// succeeded (ReasonReplay, ReasonSession).
	Uncounted string
}

// Judged is a request as the billing rule judged it: whether it is billed
// and, when not, why (the transport's metrics count both), and the ledger
// row that records it.
type Judged struct {
	Counted bool
	Reason  string
	Row     usage.Event
}

// UsageEvent judges an answered request at the clock's now.
// The billing rule (api/openapi.yaml, docs/operations.md "Billing"): a
// request is billed when the service did the work it was asked for or
// judged the request (2xx, 3xx, 4xx other than 429: a client's mistake
// costs as much as its success), and not when the service failed (5xx),
// refused it for a rate limit (429), replayed a stored answer, or a session
// block covers it.
func (s *Service) UsageEvent(o RequestOutcome) Judged {
	ev := usage.Event{RequestID: o.RequestID, AccountID: o.AccountID, Environment: o.Environment,
		Endpoint: o.Endpoint, Status: o.Status, At: s.clock.Now(), Counted: true, Reason: usage.ReasonCounted}
	switch {
	case o.Status >= 500:
		ev.Counted, ev.Reason = false, usage.ReasonFailed
	case o.Status == http.StatusTooManyRequests:
		ev.Counted, ev.Reason = false, usage.ReasonRateLimited
	case o.Uncounted != "":
		ev.Counted, ev.Reason = false, o.Uncounted
	}
	return Judged{Counted: ev.Counted, Reason: ev.Reason, Row: ev}
}
