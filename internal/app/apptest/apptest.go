// Package apptest builds the application over a fresh database for the
// tests of the capability packages that need real tickets (wallets,
// inspection): orders and activations made as the API makes them, on a
// fixed clock, for one live account.
package apptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/accounts"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/config/configtest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
)

// Start is where every bundle's clock stands: Monday 2026-06-15, 12:00 in Berlin.
var Start = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// BerlinTariff is the monthly product's tariff settings.
const BerlinTariff = `{"german_postal_code":"10115"}`

// Bundle is one App over a fresh database with a fixed clock, the default
// catalog and a live account.
type Bundle struct {
	Ctx      context.Context
	App      *app.App
	Products *products.Service // the catalog App reads
	Store    *store.Store
	Clock    *clocktest.Fixed
	Live     account.Principal
}

// New builds a bundle on engine (a copy of the migrated template database).
func New(t testing.TB, engine store.Engine) *Bundle {
	t.Helper()
	clk := clocktest.NewFixed(Start)
	s := storetest.OpenWith(t, engine, func(o *store.Options) { o.Clock = clk })
	b := &Bundle{Ctx: context.Background(), Store: s, Clock: clk}
	b.App, b.Products = NewApp(s, clk)
	if err := b.Products.Load(b.Ctx); err != nil {
		t.Fatalf("load catalog: %v", err)
	}
	b.Live = LiveAccount(t, s, clk)
	return b
}

// LiveAccount creates the account "Partner GmbH" on s with a live key and
// returns the key's principal, as the API's authentication gives it.
func LiveAccount(t testing.TB, s *store.Store, clk *clocktest.Fixed) account.Principal {
	t.Helper()
	ctx := context.Background()
	keys := accounts.New(store.NewView[accounts.Queries](s), clk, "farebox", 0)
	k, err := keys.CreateAccount(ctx, idempotency.Claim{}, "Partner GmbH", account.Live)
	if err != nil {
		t.Fatal(err)
	}
	p, err := keys.Authenticate(ctx, k.Secret)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// NewApp is an App on s and clk as the bundles have it (another instance
// on the same database) and the catalog it reads, not loaded yet.
func NewApp(s *store.Store, clk *clocktest.Fixed) (*app.App, *products.Service) {
	w := Wire(s, clk)
	return w.App, w.Products
}

// Wired is the App with the services cmd/farebox wires around it: the
// catalog it reads, the books its cancellations append to, and invoicing
// (whose files job the App's runner handles).
type Wired struct {
	App      *app.App
	Products *products.Service
	Books    *books.Books
	Invoices *invoices.Service
}

// Wire builds the App and its services on s and clk with the development
// seller (configtest) and links under http://farebox.test; the catalog is
// not loaded yet.
func Wire(s *store.Store, clk *clocktest.Fixed) Wired {
	d := configtest.Defaults()
	links := kit.NewLinks("http://farebox.test")
	w := Wired{Products: products.New(store.NewView[products.Queries](s), clk, "farebox"),
		Books: books.New(store.NewView[books.Queries](s), clk, "farebox", d.Seller, links, nil)}
	w.App = app.New(app.Options{Store: s, Clock: clk, IDPrefix: "farebox", Products: w.Products, Books: w.Books})
	w.Invoices = invoices.New(store.NewView[invoices.Queries](s), clk, "farebox", invoices.Options{Seller: d.Seller, Links: links,
		PaymentDays: d.PaymentDays, Books: w.Books, Events: app.EventWriter[invoices.Queries](w.App), Notify: w.App.Jobs.Notify})
	w.Invoices.Handle(w.App.Jobs)
	return w
}

// ForEachEngine runs fn on a fresh bundle on SQLite and on PostgreSQL, in
// parallel subtests.
func ForEachEngine(t *testing.T, fn func(t *testing.T, b *Bundle)) {
	t.Helper()
	for _, e := range storetest.Engines {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			fn(t, New(t, e))
		})
	}
}

// Single and Monthly are the default catalog's products the tests use:
// a single adult Berlin AB ticket and the (unrestricted) monthly
// subscription.
const (
	Single  = "single"
	Monthly = "monthly"
)

// Product finds the product of role (Single or Monthly) in the catalog.
func (b *Bundle) Product(t testing.TB, role string) *catalog.Product {
	t.Helper()
	for _, p := range b.App.Catalog().File().Products {
		pr, _ := b.Products.Product(p.ID)
		switch {
		case role == Monthly && pr.IsSubscription && !pr.Restricted:
			return pr
		case role == Single && pr.TicketType == catalog.TicketSingle && pr.CustomerType == catalog.CustomerAdult && b.inBerlin(pr):
			return pr
		}
	}
	t.Fatalf("the default catalog has no %s product", role)
	return nil
}

func (b *Bundle) inBerlin(pr *catalog.Product) bool {
	a, err := b.Products.Area(pr.AreaID)
	return err == nil && strings.Contains(a.Name, "Berlin")
}

// Order places an order of productIDs for the live account.
func (b *Bundle) Order(t testing.TB, productIDs ...string) ticketing.Order {
	t.Helper()
	o, err := b.App.PlaceOrder(b.Ctx, idempotency.Claim{}, b.Live, app.OrderRequest{ProductIDs: productIDs})
	if err != nil {
		t.Fatalf("order %v: %v", productIDs, err)
	}
	return o
}

// Activation is a v9 first activation with Max Mustermann's photo id and
// tariff ("" for none).
func Activation(tariff string) app.ActivationRequest {
	r := app.ActivationRequest{Version: 9,
		IdentificationMedium: json.RawMessage(`{"photo_id_lite":{"first_name":"Max","last_name":"Mustermann","birth_date":"1990-01-01"}}`)}
	if tariff != "" {
		r.TariffSettings = json.RawMessage(tariff)
	}
	return r
}

// Activate activates a coupon with Activation(tariff) and returns its ticket id.
func (b *Bundle) Activate(t testing.TB, couponID, tariff string) string {
	t.Helper()
	act, err := b.App.ActivateCoupon(b.Ctx, idempotency.Claim{}, couponID, Activation(tariff))
	if err != nil {
		t.Fatalf("activate %s: %v", couponID, err)
	}
	return act.TicketID
}

// Ticket reads a ticket with its coupon and catalog entries.
func (b *Bundle) Ticket(t testing.TB, id string) passes.TicketDetails {
	t.Helper()
	d, err := b.App.Ticket(b.Ctx, id)
	if err != nil {
		t.Fatalf("ticket %s: %v", id, err)
	}
	return d
}
