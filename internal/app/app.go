package app

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/deliveries"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/schema"
	"github.com/farebox/farebox/internal/store"
)

// App wires the use cases to the store and the clock.
type App struct {
	store *store.Store
	clock clock.Clock
	IDs   ident.Prefix
	Loc   *time.Location // calendar rules (Europe/Berlin by default)

	// products is the catalog (package products); schemas its cache of
	// the products' compiled schemas.
	products *products.Service
	schemas  *schema.Cache

	// Jobs runs the background jobs of the instance (invoice files are
	// package invoices', which the wiring lets it run).
	Jobs *jobs.Runner
	// books receives the receipts of cancellations (receipts.go).
	books *books.Books

	// deliveries are the webhook deliveries of the changes' events (events.go).
	deliveries *deliveries.Service
}

// Options configure New.
type Options struct {
	Store    *store.Store
	Clock    clock.Clock
	IDPrefix string
	Location *time.Location
	// Products is the instance's catalog; nil: one of its own over Store
	// (a command that does not load the catalog).
	Products *products.Service
	// Jobs tunes the job runner.
	Jobs jobs.Options
	// Books are the books a cancellation's receipt is appended to (nil:
	// books over Store without a receipt PDF link).
	Books *books.Books
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
	if o.Products == nil {
		o.Products = products.New(store.NewView[products.Queries](o.Store), o.Clock, ident.Prefix(o.IDPrefix))
	}
	a := &App{store: o.Store, clock: o.Clock, IDs: ident.Prefix(o.IDPrefix), Loc: o.Location,
		products: o.Products, schemas: o.Products.Schemas()}
	a.books = o.Books
	if a.books == nil {
		a.books = books.New(store.NewView[books.Queries](o.Store), o.Clock, a.IDs, invoicedoc.Seller{}, nil, nil)
	}
	if a.store != nil {
		a.Jobs = jobs.New(a.store.Jobs(), a.clock, o.Jobs)
		a.Jobs.Handle(JobTestClockAdvance, a.advanceJob)
	}
	a.deliveries = deliveries.New(a.clock, a.IDs)
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

// Catalog returns the instance's current catalog index (products.Service
// Catalog), which ordering, activation and the passes read.
func (a *App) Catalog() *catalog.Index { return a.products.Catalog() }

// notifyJobs wakes a job worker of this instance after a commit that
// enqueued work (others find it at their next poll).
func (a *App) notifyJobs() {
	if a.Jobs != nil {
		a.Jobs.Notify()
	}
}
