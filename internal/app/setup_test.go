package app_test

import (
	"context"

	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/app/accounts"
	"github.com/farebox/farebox/internal/app/apptest"
	"github.com/farebox/farebox/internal/app/billing"
	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/farebox/farebox/internal/usage"
)

// start is where every bundle's clock stands: Monday 2026-06-15, 12:00 in Berlin.
var start = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// testBundle is one App over a fresh database with a fake clock, an
// account with a live and a test principal, and the default catalog.
type testBundle struct {
	ctx context.Context
	app *app.App
	// products is the catalog the app reads (package products).
	products *products.Service
	keys     *accounts.Service
	// inv is invoicing (package invoices), wired as cmd/farebox does.
	inv   *invoices.Service
	users *webusers.Service
	// billing reads the usage counters (package billing).
	billing *billing.Service
	// events lists the events and runs their maintenance (package events).
	events *events.Service
	clock  *clocktest.Fixed
	store  *store.Store
	live   account.Principal
	test   account.Principal
	// liveKey is the live principal's API key.
	liveKey string
}

// setup builds a bundle on engine. Its database is a copy of the migrated
// template (storetest), so a bundle costs no migrations.
func setup(t testing.TB, engine store.Engine) *testBundle {
	t.Helper()
	clk := clocktest.NewFixed(start)
	s := storetest.OpenWith(t, engine, func(o *store.Options) { o.Clock = clk })
	w := apptest.Wire(s, clk)
	a, prods := w.App, w.Products
	b := &testBundle{ctx: context.Background(), app: a, products: prods, inv: w.Invoices, clock: clk, store: s,
		keys:    accounts.New(store.NewView[accounts.Queries](s), clk, "farebox", 0),
		users:   webusers.New(store.NewView[webusers.Queries](s), clk, "farebox"),
		billing: billing.New(s.Read(), clk),
		events:  events.New(store.NewView[events.Queries](s), clk, s.SettledEventSeq, a.EndSubscriptions)}
	if err := prods.Load(b.ctx); err != nil {
		t.Fatalf("load catalog: %v", err)
	}
	b.live, b.liveKey = b.newAccount(t, "Partner GmbH", account.Live)
	tk, err := b.keys.CreateKey(b.ctx, idempotency.Claim{}, b.live.AccountID, account.Test)
	if err != nil {
		t.Fatal(err)
	}
	if b.test, err = b.keys.Authenticate(b.ctx, tk.Secret); err != nil {
		t.Fatal(err)
	}
	return b
}

// eachEngine runs fn on a fresh bundle on SQLite and on PostgreSQL, in
// parallel subtests.
func eachEngine(t *testing.T, fn func(t *testing.T, b *testBundle)) {
	t.Helper()
	storetest.EachEngineWith(t, setup, fn)
}

// newAccount creates an account with one key in env and returns its principal and key.
func (b *testBundle) newAccount(t testing.TB, name string, env account.Environment) (account.Principal, string) {
	t.Helper()
	k, err := b.keys.CreateAccount(b.ctx, idempotency.Claim{}, name, env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.keys.Authenticate(b.ctx, k.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if p.AccountID != k.AccountID || p.AccountName != name || p.Environment != env {
		t.Fatalf("principal %+v for key of %s", p, k.AccountID)
	}
	return p, k.Secret
}

// Products of the default catalog the tests use.
const (
	singleBerlin = "single Berlin AB adult"
	monthly      = "monthly Deutschlandticket"
	jobTicket    = "restricted job ticket"
)

// product finds one product of the default catalog by role (the single
// and monthly products as the capability packages' tests find them).
func (b *testBundle) product(t testing.TB, role string) *catalog.Product {
	t.Helper()
	switch role {
	case singleBerlin:
		return b.bundle().Product(t, apptest.Single)
	case monthly:
		return b.bundle().Product(t, apptest.Monthly)
	}
	for _, p := range b.app.Catalog().File().Products {
		if pr, _ := b.products.Product(p.ID); role == jobTicket && pr.Restricted {
			return pr
		}
	}
	t.Fatalf("the default catalog has no %s", role)
	return nil
}

// bundle is b as package apptest has it.
func (b *testBundle) bundle() *apptest.Bundle {
	return &apptest.Bundle{Ctx: b.ctx, App: b.app, Products: b.products, Store: b.store, Clock: b.clock, Live: b.live}
}

// order places an order of the given products for p.
func (b *testBundle) order(t *testing.T, p account.Principal, productIDs ...string) ticketing.Order {
	t.Helper()
	o, err := b.app.PlaceOrder(b.ctx, idempotency.Claim{}, p, app.OrderRequest{ProductIDs: productIDs})
	if err != nil {
		t.Fatalf("order %v: %v", productIDs, err)
	}
	return o
}

// maxMedium is Max's photo id, as activation carries it.
var maxMedium = string(apptest.Activation("").IdentificationMedium)

// activation is a v9 first activation with Max's photo id.
func activation(tariff string) app.ActivationRequest { return apptest.Activation(tariff) }

// berlinTariff is the monthly product's tariff settings.
const berlinTariff = apptest.BerlinTariff

// activate activates a coupon and returns the ticket.
func (b *testBundle) activate(t *testing.T, couponID string, req app.ActivationRequest) ticketing.Ticket {
	t.Helper()
	act, err := b.app.ActivateCoupon(b.ctx, idempotency.Claim{}, couponID, req)
	if err != nil {
		t.Fatalf("activate %s: %v", couponID, err)
	}
	return b.ticket(t, act.TicketID).Ticket
}

func (b *testBundle) ticket(t *testing.T, id string) app.TicketDetails {
	t.Helper()
	d, err := b.app.Ticket(b.ctx, id)
	if err != nil {
		t.Fatalf("ticket %s: %v", id, err)
	}
	return d
}

func (b *testBundle) subscription(t *testing.T, p account.Principal, id string) ticketing.Subscription {
	t.Helper()
	s, err := b.app.Subscription(b.ctx, p, id)
	if err != nil {
		t.Fatalf("subscription %s: %v", id, err)
	}
	return s
}

// count is a table's row count.
func (b *testBundle) count(t *testing.T, table string) int {
	t.Helper()
	n, err := b.store.Read().CountRows(b.ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// counts are the row counts of the ticketing and invoicing tables.
func (b *testBundle) counts(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tbl := range []string{"orders", "coupons", "billable_items", "subscriptions", "subscription_cycles", "tickets"} {
		out[tbl] = b.count(t, tbl)
	}
	return out
}

// wantErr fails unless err is an apperr of kind with code, and returns it.
func wantErr(t *testing.T, err error, kind apperr.Kind, code string) *apperr.Error {
	t.Helper()
	return testtool.WantErr(t, err, kind, code)
}

// wantFields fails unless e names exactly fields, in order.
func wantFields(t *testing.T, e *apperr.Error, fields ...string) {
	t.Helper()
	testtool.WantFields(t, e, fields...)
}

// berlin is a wall-clock instant in Berlin.
func berlin(y int, m time.Month, d, h, min, s int) time.Time {
	return time.Date(y, m, d, h, min, s, 0, clock.Berlin).UTC()
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TestAuthCacheFollowsClock: a cached key stays valid on this instance for
// AuthCacheTTL of the injected clock after its revocation elsewhere, and
// not a second longer.
func TestAuthCacheFollowsClock(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		cached := accounts.New(store.NewView[accounts.Queries](b.store), b.clock, "farebox", time.Minute)
		p, err := cached.Authenticate(b.ctx, b.liveKey)
		if err != nil || p != b.live {
			t.Fatalf("authenticate: %+v %v", p, err)
		}
		// Another instance (b.app) revokes the key; this one has it cached.
		prefix := b.liveKey[:len("fbx_live_")+8]
		if n, err := b.keys.RevokeKeys(b.ctx, idempotency.Claim{}, prefix); err != nil || n != 1 {
			t.Fatalf("revoke %s: %d %v", prefix, n, err)
		}
		_, err = b.keys.Authenticate(b.ctx, b.liveKey)
		wantErr(t, err, apperr.Unauthenticated, "invalid_api_key")
		b.clock.Advance(time.Minute - time.Nanosecond)
		if p, err := cached.Authenticate(b.ctx, b.liveKey); err != nil || p != b.live {
			t.Fatalf("within the TTL: %+v %v", p, err)
		}
		b.clock.Advance(time.Nanosecond)
		_, err = cached.Authenticate(b.ctx, b.liveKey)
		wantErr(t, err, apperr.Unauthenticated, "invalid_api_key")
		_, err = cached.Authenticate(b.ctx, "not-a-key")
		wantErr(t, err, apperr.Unauthenticated, "invalid_api_key")
	})
}

// TestAccountsAndKeys: accounts and keys are stamped by the clock and a
// key prefix must name the environment.
func TestAccountsAndKeys(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		_, err := b.keys.CreateAccount(b.ctx, idempotency.Claim{}, "", account.Live)
		wantErr(t, err, apperr.Invalid, "name_required")
		_, err = b.keys.CreateKey(b.ctx, idempotency.Claim{}, "farebox-account-nope", account.Live)
		wantErr(t, err, apperr.NotFound, "account_not_found")
		for _, prefix := range []string{"", "fbx_", "fbx_live_", "abc", "fbx_live_u", "fbx_test_zzzzzzz"} {
			_, err = b.keys.RevokeKeys(b.ctx, idempotency.Claim{}, prefix)
			wantErr(t, err, apperr.Invalid, "invalid_key_prefix")
		}
		_, err = b.keys.RevokeKeys(b.ctx, idempotency.Claim{}, "fbx_test_zzzzzzzz")
		wantErr(t, err, apperr.NotFound, "key_not_found")
		if b.test.AccountID != b.live.AccountID || b.test.Environment != account.Test || b.test.KeyID == b.live.KeyID {
			t.Errorf("test principal %+v, live %+v", b.test, b.live)
		}
	})
}

// TestUsage: the ledger's rows come back per account, day and endpoint;
// the range is checked (at most 366 days, in order, real dates).
func TestUsage(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		other, _ := b.newAccount(t, "Other AG", account.Live)
		ev := func(acc string, at time.Time, endpoint string, counted bool) usage.Event {
			return usage.Event{RequestID: "r-" + at.String() + endpoint + acc, AccountID: acc, Environment: account.Live,
				Endpoint: endpoint, Status: 200, Counted: counted, Reason: usage.ReasonCounted, At: at}
		}
		day1, day2 := time.Date(2026, 6, 14, 23, 59, 0, 0, time.UTC), time.Date(2026, 6, 15, 0, 0, 1, 0, time.UTC)
		events := []usage.Event{
			ev(b.live.AccountID, day1, "POST /v9/ticketing/orders.json", true),
			ev(b.live.AccountID, day2, "POST /v9/ticketing/orders.json", true),
			ev(b.live.AccountID, day2.Add(time.Second), "POST /v9/ticketing/orders.json", false),
			ev(other.AccountID, day2, "GET /v1/account.json", true),
		}
		if err := b.store.Write(b.ctx, func(q store.Q) error { return q.InsertUsage(b.ctx, events) }); err != nil {
			t.Fatal(err)
		}
		rows, err := b.billing.Usage(b.ctx, b.live.AccountID, "2026-06-14", "2026-06-15")
		if err != nil {
			t.Fatal(err)
		}
		want := []billing.UsageRow{
			{AccountID: b.live.AccountID, Day: "2026-06-14", Endpoint: "POST /v9/ticketing/orders.json", Counted: 1},
			{AccountID: b.live.AccountID, Day: "2026-06-15", Endpoint: "POST /v9/ticketing/orders.json", Counted: 1, Uncounted: 1},
		}
		if len(rows) != len(want) || rows[0] != want[0] || rows[1] != want[1] {
			t.Errorf("rows %+v, want %+v", rows, want)
		}
		if all, err := b.billing.Usage(b.ctx, "", "2026-06-15", "2026-06-15"); err != nil || len(all) != 2 {
			t.Errorf("operator view %+v %v", all, err)
		}
		if rows, err := b.billing.Usage(b.ctx, b.live.AccountID, "2026-01-01", "2027-01-01"); err != nil || len(rows) != 2 {
			t.Errorf("366 days: %d rows, %v", len(rows), err)
		}
		for _, c := range []struct{ from, to, field string }{
			{"2026-01-01", "2027-01-02", "to"},
			{"2026-06-15", "2026-06-14", "to"},
			{"15.06.2026", "2026-06-15", "from"},
			{"2026-06-15", "2026-02-30", "to"},
		} {
			_, err := b.billing.Usage(b.ctx, b.live.AccountID, c.from, c.to)
			wantFields(t, wantErr(t, err, apperr.Invalid, "invalid_parameter"), c.field)
		}
	})
}
