package app

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/schema"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/webhook/sender"
)

// App wires the use cases to the store and the clock.
type App struct {
	store *store.Store
	clock clock.Clock
	IDs   ident.Prefix
	Loc   *time.Location // calendar rules (Europe/Berlin by default)

	catalog catalogPtr
	schemas schema.Cache

	// Jobs runs the background jobs of the instance (invoice files are
	// package invoices', which the wiring lets it run).
	Jobs *jobs.Runner
	// books receives the receipts of cancellations (receipts.go).
	books *books.Books
	// pusher sends Apple pass-update pushes (passupdates.go); nil: none.
	pusher atomic.Pointer[PassPusher]

	parts partCache // event parts by hash (eventparts.go)

	// wallets is the instance's Wallets (NewWallets), which runs the pass
	// update jobs (googleupdates.go); nil until wallets are configured.
	wallets atomic.Pointer[Wallets]
	// Webhooks (webhooks.go).
	hooks          WebhookOptions
	sender         *sender.Sender
	hookRunner     atomic.Pointer[jobs.Runner] // WebhookRunner's, if started
	hookBatch      hookBatch                   // group commit of delivery attempts
	retention      retention.Policy            // retention classes (retention.go)
	retentionBatch int
	retentionYield float64
}

// Options configure New.
type Options struct {
	Store    *store.Store
	Clock    clock.Clock
	IDPrefix string
	Location *time.Location
	// Jobs tunes the job runner.
	Jobs jobs.Options
	// Books are the books a cancellation's receipt is appended to (nil:
	// books over Store without a receipt PDF link).
	Books *books.Books
	// Webhooks configures webhook deliveries.
	Webhooks WebhookOptions
	// Retention is the retention policy (zero: retention.Default());
	// RetentionBatch the rows per retention transaction (0: DefaultRetentionBatch);
	// RetentionYield the pause after a full batch, in multiples of the
	// batch's duration (0: DefaultRetentionYield, negative: none).
	Retention      retention.Policy
	RetentionBatch int
	RetentionYield float64
}

// New returns an App.
func New(o Options) *App {
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	if o.Location == nil {
		o.Location = clock.Berlin
	}
	if o.IDPrefix == "" {
		o.IDPrefix = "farebox"
	}
	a := &App{store: o.Store, clock: o.Clock, IDs: ident.Prefix(o.IDPrefix), Loc: o.Location}
	a.books = o.Books
	if a.books == nil {
		a.books = books.New(store.NewView[books.Queries](o.Store), o.Clock, a.IDs, invoicedoc.Seller{}, nil)
	}
	if a.store != nil {
		a.Jobs = jobs.New(a.store.Jobs(), a.clock, o.Jobs)
		a.Jobs.Handle(JobTestClockAdvance, a.advanceJob)
	}
	a.initPassUpdates()
	a.initWebhooks(o.Webhooks)
	a.retention, a.retentionBatch = o.Retention, o.RetentionBatch
	if a.retention == (retention.Policy{}) {
		a.retention = retention.Default()
	}
	if a.retentionBatch <= 0 {
		a.retentionBatch = DefaultRetentionBatch
	}
	switch a.retentionYield = o.RetentionYield; {
	case a.retentionYield == 0:
		a.retentionYield = DefaultRetentionYield
	case a.retentionYield < 0:
		a.retentionYield = 0
	}
	return a
}

// Ping checks that the database answers (for /readyz).
func (a *App) Ping(ctx context.Context) error { return a.store.Ping(ctx) }

// Database names the engine the store runs on ("sqlite" or "postgres").
func (a *App) Database() string { return string(a.store.Engine()) }

// ParseEnvironment reads "live" or "test".
func ParseEnvironment(s string) (Environment, error) {
	switch Environment(s) {
	case account.Live, account.Test:
		return Environment(s), nil
	}
	return "", apperr.Validation("app.ParseEnvironment", CodeInvalidEnvironment, "environment", "environment: live or test")
}
