package privacy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/apptest"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/privacy"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/ticketing"
)

// start is where every bed's clock stands: Monday 2026-06-15, 12:00 in Berlin.
var start = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// bed is the privacy use cases over a fresh database of one engine, with
// internal/app making the orders, tickets, customers and invoices they
// work on (as the wiring does, App.TxWork does an erasure's revocations
// and events), and one account's live principal.
type bed struct {
	ctx  context.Context
	app  *app.App
	priv *privacy.Service
	// events maintains the event list (ends subscriptions, prunes).
	events *events.Service
	// inv is invoicing (package invoices), for customers and invoices.
	inv *invoices.Service
	// books verify the books' chain after an erasure.
	books *books.Books
	clock *clocktest.Fixed
	store *store.Store
	live  account.Principal
}

// newBed builds a bed on engine; db, when not nil, wraps the privacy
// service's view of the store.
func newBed(t *testing.T, engine store.Engine, o privacy.Options, db func(privacy.DB) privacy.DB) *bed {
	t.Helper()
	clk := clocktest.NewFixed(start)
	s := storetest.OpenWith(t, engine, func(o *store.Options) { o.Clock = clk })
	w := apptest.Wire(s, clk)
	a, prods, inv, bk := w.App, w.Products, w.Invoices, w.Books
	var view privacy.DB = store.NewView[privacy.Queries](s)
	if db != nil {
		view = db(view)
	}
	o.Location = a.Loc
	b := &bed{ctx: context.Background(), app: a, inv: inv, books: bk, clock: clk, store: s,
		events: events.New(store.NewView[events.Queries](s), clk, s.SettledEventSeq, a.EndSubscriptions),
		priv:   privacy.New(view, clk, o, privacy.NewTx(s.WriteClaimed, a.TxWork))}
	if err := prods.Load(b.ctx); err != nil {
		t.Fatalf("load catalog: %v", err)
	}
	b.live = apptest.LiveAccount(t, s, clk)
	return b
}

// eachEngine runs fn on a fresh bed on SQLite and on PostgreSQL (SQLite
// only under -short), in parallel subtests.
func eachEngine(t *testing.T, o privacy.Options, fn func(t *testing.T, b *bed)) {
	t.Helper()
	storetest.EachEngine(t, func(t *testing.T, e store.Engine) { fn(t, newBed(t, e, o, nil)) })
}

// product finds a product of the default catalog: the monthly
// subscription (tariff settings: a postal code) or a single ticket.
func (b *bed) product(t *testing.T, subscription bool) string {
	t.Helper()
	for _, p := range b.app.Catalog().File().Products {
		pr, _ := b.app.Catalog().Product(p.ID)
		if pr.Restricted || pr.IsSubscription != subscription {
			continue
		}
		if subscription || (pr.TicketType == catalog.TicketSingle && pr.CustomerType == catalog.CustomerAdult) {
			return pr.ID
		}
	}
	t.Fatalf("the default catalog has no product (subscription %v)", subscription)
	return ""
}

// order places an order of one product for the live principal.
func (b *bed) order(t *testing.T, subscription bool) ticketing.Order {
	t.Helper()
	o, err := b.app.PlaceOrder(b.ctx, idempotency.Claim{}, b.live, app.OrderRequest{ProductIDs: []string{b.product(t, subscription)}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// berlinTariff is the monthly product's tariff settings.
const berlinTariff = `{"german_postal_code":"10115"}`

// ticketFor orders a single ticket (or a month of the subscription) and
// activates it for the passenger named first; it returns the coupon and
// the ticket.
func (b *bed) ticketFor(t *testing.T, first string, subscription bool) (ticketing.Coupon, ticketing.Ticket) {
	t.Helper()
	return b.activate(t, b.order(t, subscription).Coupons[0].ID, first)
}

// activate activates coupon id for the passenger named first (a
// subscription's coupon with berlinTariff) and returns the coupon and the
// ticket.
func (b *bed) activate(t *testing.T, id, first string) (ticketing.Coupon, ticketing.Ticket) {
	t.Helper()
	req := app.ActivationRequest{Version: 9,
		IdentificationMedium: json.RawMessage(`{"photo_id_lite":{"first_name":"` + first + `","last_name":"Fahrgast","birth_date":"1970-01-01"}}`)}
	if b.coupon(t, id).SubscriptionID != nil {
		req.TariffSettings = json.RawMessage(berlinTariff)
	}
	act, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, id, req)
	if err != nil {
		t.Fatalf("activate: %v", err)
	}
	return b.coupon(t, id), b.ticket(t, act.TicketID)
}

func (b *bed) ticket(t *testing.T, id string) ticketing.Ticket {
	t.Helper()
	return testtool.Must(b.store.Read().Ticket(b.ctx, id))(t)
}

func (b *bed) coupon(t *testing.T, id string) ticketing.Coupon {
	t.Helper()
	return testtool.Must(b.store.Read().Coupon(b.ctx, id))(t)
}

// customer creates a customer of the live principal named name.
func (b *bed) customer(t *testing.T, name string) invoicing.Customer {
	t.Helper()
	return testtool.Must(b.inv.CreateCustomer(b.ctx, idempotency.Claim{}, b.live,
		invoicing.CustomerInput{AddressLines: []string{name, "Hauptstraße 1", "10115 Berlin"}}, true))(t)
}

func (b *bed) storedCustomer(t *testing.T, id string) invoicing.Customer {
	t.Helper()
	return testtool.Must(b.store.Read().Customer(b.ctx, b.live.AccountID, b.live.Environment, id))(t)
}

// invoiced orders a single ticket, assigns its billable item to customer
// id and issues its invoice.
func (b *bed) invoiced(t *testing.T, customerID string) invoicing.Invoice {
	t.Helper()
	item := *b.order(t, false).Coupons[0].BillableItemID
	if _, err := b.inv.UpdateBillableItem(b.ctx, idempotency.Claim{}, b.live, item, invoices.ItemUpdate{CustomerID: json.RawMessage(`"` + customerID + `"`)}); err != nil {
		t.Fatal(err)
	}
	inv, err := b.inv.IssueInvoice(b.ctx, idempotency.Claim{}, b.live, invoices.InvoiceRequest{ItemID: item, CustomerID: customerID})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// eventsAbout are the stored objects of the live principal's events about
// the objects ids, as one text.
func (b *bed) eventsAbout(t *testing.T, ids ...string) string {
	t.Helper()
	evs, err := b.store.Read().EventsOfObjects(b.ctx, b.live.AccountID, b.live.Environment, ids)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, o := range evs {
		all = append(all, o)
	}
	return strings.Join(all, "\n")
}

// wantCode fails unless err is an apperr of kind with code.
func wantCode(t *testing.T, err error, kind apperr.Kind, code string) *apperr.Error {
	t.Helper()
	ae := apperr.As(err)
	if ae == nil || ae.Kind != kind || ae.Code != code {
		t.Fatalf("error %v, want kind %d code %q", err, kind, code)
	}
	return ae
}
