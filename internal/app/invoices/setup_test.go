package invoices_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/config/configtest"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
)

// start is where every bundle's clock stands: Monday 2026-06-15, 12:00 in Berlin.
var start = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// testBundle is invoicing over a fresh database with a fake clock, one
// account with a live and a test principal, and a product its billable
// items bill. Items are stored directly, as ordering stores them (ordering
// is internal/app's): invoicing only reads them.
type testBundle struct {
	ctx   context.Context
	inv   *invoices.Service
	books *books.Books
	clock *clocktest.Fixed
	store *store.Store
	live  account.Principal
	test  account.Principal

	jobs *jobs.Runner // runs the file jobs (RunOnce)

	mu     sync.Mutex
	events []event.Event // handed to the event writer, in order
	woken  int           // Notify calls
}

const (
	productID = "product-single-berlin"
	accountID = "acc_partner"
)

// setup builds a bundle on engine.
func setup(t testing.TB, engine store.Engine) *testBundle {
	t.Helper()
	clk := clocktest.NewFixed(start)
	s := storetest.OpenWith(t, engine, func(o *store.Options) { o.Clock = clk })
	d := configtest.Defaults()
	b := &testBundle{ctx: context.Background(), clock: clk, store: s,
		live: account.Principal{AccountID: accountID, Environment: account.Live, KeyID: "key_live"},
		test: account.Principal{AccountID: accountID, Environment: account.Test, KeyID: "key_test"}}
	links := kit.NewLinks("http://farebox.test")
	b.books = books.New(store.NewView[books.Queries](s), clk, "farebox", d.Seller, links, nil)
	b.inv = invoices.New(store.NewView[invoices.Queries](s), clk, "farebox", invoices.Options{Seller: d.Seller, Links: links,
		PaymentDays: d.PaymentDays, Books: b.books, Events: b.writeEvents, Notify: func() { b.mu.Lock(); b.woken++; b.mu.Unlock() }})
	b.jobs = jobs.New(s.Jobs(), clk, jobs.Options{})
	b.inv.Handle(b.jobs)
	for _, stmt := range []string{`INSERT INTO areas (id, position, data) VALUES ('area-berlin', 0, '{}')`,
		`INSERT INTO products (id, area_id, position, data) VALUES ('` + productID + `', 'area-berlin', 0, '{}')`} {
		if _, err := s.DB().ExecContext(b.ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	b.newAccount(t, accountID)
	return b
}

// writeEvents stores the events in the change's transaction (the store
// behind the view is a store.Q), as the application's writer does without
// webhook endpoints, and remembers them.
func (b *testBundle) writeEvents(ctx context.Context, q invoices.Queries, evs []event.Event) error {
	if _, err := any(q).(store.Q).InsertEvents(ctx, evs); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, evs...)
	return nil
}

// wakes is how often the job runner was woken.
func (b *testBundle) wakes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.woken
}

// eachEngine runs fn on a fresh bundle on each engine (SQLite only under
// -short), in parallel subtests.
func eachEngine(t *testing.T, fn func(t *testing.T, b *testBundle)) {
	t.Helper()
	storetest.EachEngineWith(t, setup, fn)
}

// newAccount stores account id.
func (b *testBundle) newAccount(t testing.TB, id string) {
	t.Helper()
	if err := b.store.Write(b.ctx, func(q store.Q) error {
		return q.CreateAccount(b.ctx, account.Account{ID: id, Name: "Partner " + id, CreatedAt: start})
	}); err != nil {
		t.Fatal(err)
	}
}

// customer creates a customer of p named name.
func (b *testBundle) customer(t *testing.T, p account.Principal, name string) invoicing.Customer {
	t.Helper()
	c, err := b.inv.CreateCustomer(b.ctx, idempotency.Claim{}, p, invoicing.CustomerInput{AddressLines: []string{name, "Hauptstraße 1", "10115 Berlin"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var items atomic.Int64 // billable item ids, unique across bundles

// itemOf stores a billable item of p for a 3.80 € single ticket at 7 %
// VAT, ordered now, as an order does, and returns its id.
func (b *testBundle) itemOf(t testing.TB, p account.Principal) string {
	t.Helper()
	id := fmt.Sprintf("farebox-billable-%d", items.Add(1))
	it := ticketing.BillableItem{ID: id, AccountID: p.AccountID, Environment: p.Environment, ProductID: productID,
		Description: "Einzelfahrschein Berlin AB", AmountCents: 380, Currency: "EUR", VATRateBP: 700, OrderedAt: b.clock.Now()}
	if err := b.store.Write(b.ctx, func(q store.Q) error { return q.InsertBillableItem(b.ctx, it) }); err != nil {
		t.Fatal(err)
	}
	return id
}

func (b *testBundle) update(p account.Principal, itemID string, field, value string) (invoices.BillableItemView, error) {
	var u invoices.ItemUpdate
	switch field {
	case "customer_id":
		u.CustomerID = []byte(value)
	case "split":
		u.Split = []byte(value)
	case "collection_id":
		u.CollectionID = []byte(value)
	}
	return b.inv.UpdateBillableItem(b.ctx, idempotency.Claim{}, p, itemID, u)
}

func (b *testBundle) invoice(t *testing.T, p account.Principal, itemID, customerID string) invoicing.Invoice {
	t.Helper()
	inv, err := b.inv.IssueInvoice(b.ctx, idempotency.Claim{}, p, invoices.InvoiceRequest{ItemID: itemID, CustomerID: customerID})
	if err != nil {
		t.Fatalf("invoice %s for %q: %v", itemID, customerID, err)
	}
	return inv
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
