// Package privacy is the personal-data capability (docs/privacy.md): the
// retention job that erases what is past each retention class (a run now,
// or the daily run one instance claims), and a partner's export and
// erasure of a coupon's, subscription's or customer's personal data. What
// an erasure must have done by internal/app in the same transaction
// (revoking a still valid ticket, writing the <subject>.erased event) it
// asks of the Work the wiring hands it with each transaction (Tx,
// App.TxWork). It reaches the database only through Queries.
package privacy

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/ticketing"
)

// Queries are the store methods privacy uses (store.Q implements them;
// the wiring passes store.NewView[Queries]).
type Queries interface {
	// The retention job.
	RetentionDue(ctx context.Context, identCutoff, at, billingCutoff time.Time) (retention.Due, error)
	EraseExpiredTickets(ctx context.Context, cutoff time.Time, cur retention.TicketCursor, limit int) (int, retention.TicketCursor, error)
	EraseExpiredCouponSettings(ctx context.Context, cutoff time.Time, limit int) (int64, error)
	EraseRestrictedCustomers(ctx context.Context, at time.Time, limit int) (int64, error)
	EventStreams(ctx context.Context) ([][2]string, error)
	OldestEvent(ctx context.Context, accountID string, env account.Environment) (seq int64, at time.Time, object string, ok bool, err error)
	SetEventObject(ctx context.Context, accountID string, env account.Environment, seq int64, object string) error
	ClaimRetentionRun(ctx context.Context, at time.Time, every time.Duration) (bool, error)
	FinishRetentionRun(ctx context.Context, at time.Time) error

	// A subject's records.
	Coupon(ctx context.Context, id string) (ticketing.Coupon, error)
	Subscription(ctx context.Context, accountID string, env account.Environment, id string) (ticketing.Subscription, error)
	CouponsOfSubscription(ctx context.Context, subscriptionID string) ([]ticketing.Coupon, error)
	Customer(ctx context.Context, accountID string, env account.Environment, id string) (invoicing.Customer, error)
	TicketsOfCoupon(ctx context.Context, couponID string) ([]ticketing.Ticket, error)
	BillingRecordsOf(ctx context.Context, kind, id string) ([]retention.RecordRef, error)
	ErasedAt(ctx context.Context, kind, id string) (erased, restrictedUntil *time.Time, err error)

	// Erasure.
	LockCoupon(ctx context.Context, id string) error
	LockSubscription(ctx context.Context, id string) error
	EraseTicketData(ctx context.Context, ts []ticketing.Ticket) error
	EraseCouponSettings(ctx context.Context, id string, at time.Time) error
	MarkSubscriptionErased(ctx context.Context, id string, at time.Time) error
	RestrictCustomer(ctx context.Context, id string, at, until time.Time) error
	EraseCustomer(ctx context.Context, id string, at time.Time) error
	EventsOfObjects(ctx context.Context, accountID string, env account.Environment, ids []string) (map[int64]string, error)
	AnswersNaming(ctx context.Context, scope string, ids []string) ([]idempotency.Answer, error)
	EraseAnswer(ctx context.Context, scope, key string) error
}

// DB is the database as privacy sees it (store.View).
type DB = kit.DB[Queries]

// Work is what internal/app does inside an erasure's transaction
// (app.TxWork, bound to the transaction by Tx).
type Work interface {
	// Revoke revokes a still valid ticket: revocation feed, pass update.
	Revoke(ctx context.Context, t ticketing.Ticket, kind, reason string, now time.Time) error
	// WriteEvent writes p's event of type t about objectID showing obj,
	// with its webhook deliveries; called last in the transaction.
	WriteEvent(ctx context.Context, p account.Principal, t event.Type, objectID string, obj any) error
}

// Tx runs fn in one write transaction that also marks claim committed
// (store.Store.WriteClaimed), handing it the transaction through Queries
// and internal/app's Work bound to it (NewTx).
type Tx func(ctx context.Context, claim idempotency.Claim, fn func(q Queries, w Work) error) error

// NewTx is the Tx of write (the wiring hands store.Store.WriteClaimed)
// whose transactions work binds to internal/app's Work (App.TxWork).
func NewTx[Q Queries, W Work](write func(ctx context.Context, claim idempotency.Claim, fn func(q Q) error) error, work func(q Q) W) Tx {
	return func(ctx context.Context, claim idempotency.Claim, fn func(q Queries, w Work) error) error {
		return write(ctx, claim, func(q Q) error { return fn(q, work(q)) })
	}
}

// Options configure New.
type Options struct {
	// Policy is the retention of each class (zero: retention.Default()).
	Policy retention.Policy
	// Location is the calendar of the billing years (nil: clock.Berlin).
	Location *time.Location
	// Batch is the rows per retention transaction (0: DefaultBatch).
	Batch int
	// Yield is the pause after a full batch, in multiples of the batch's
	// duration (0: DefaultYield, negative: none).
	Yield float64
}

// Service holds the retention job and the export and erasure of personal
// data.
type Service struct {
	kit.Base[DB]
	tx     Tx
	policy retention.Policy
	loc    *time.Location
	batch  int
	yield  float64
}

// New returns the privacy use cases over db; c is the service clock (nil:
// the system clock), tx runs an erasure's transaction with internal/app's
// Work.
func New(db DB, c clock.Clock, o Options, tx Tx) *Service {
	s := &Service{Base: kit.NewBase(db, c, ""), tx: tx, policy: o.Policy, loc: o.Location, batch: o.Batch}
	if s.policy == (retention.Policy{}) {
		s.policy = retention.Default()
	}
	if s.loc == nil {
		s.loc = clock.Berlin
	}
	if s.batch <= 0 {
		s.batch = DefaultBatch
	}
	switch s.yield = o.Yield; {
	case s.yield == 0:
		s.yield = DefaultYield
	case s.yield < 0:
		s.yield = 0
	}
	return s
}
