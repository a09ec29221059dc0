package store_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	gocmp "github.com/google/go-cmp/cmp"
)

// The conformance suite's shared world: one fixture per test store, built
// with the store's own insert methods (each of which has its own case).

const (
	fxAccount = "acct-1" // the account under test
	fxOther   = "acct-2" // another tenant, whose records a query must not see
	fxArea    = "area-1"
	fxProduct = "product-1"
)

// fxAt is the fixtures' time: a whole second, so what comes back compares
// equal on both engines.
var fxAt = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// fixture writes records into one test's store.
type fixture struct {
	t   *testing.T
	s   *store.Store
	ctx context.Context
}

// newFixture gives s the two accounts and a catalog of one area and one
// product that the records refer to.
func newFixture(t *testing.T, s *store.Store) *fixture {
	t.Helper()
	f := &fixture{t: t, s: s, ctx: context.Background()}
	f.write(func(q store.Q) error {
		for _, id := range []string{fxAccount, fxOther} {
			if err := q.CreateAccount(f.ctx, account.Account{ID: id, Name: "Account " + id, CreatedAt: fxAt}); err != nil {
				return err
			}
		}
		return q.UpsertCatalog(f.ctx, fxCatalog(), fxAt)
	})
	return f
}

// fxCatalog is the catalog newFixture writes (its JSON fields set, as an
// imported catalog's are: a stored nil reads back as null).
func fxCatalog() *catalog.File {
	return &catalog.File{Version: catalog.FormatVersion,
		Areas: []catalog.Area{{ID: fxArea, Name: "Area", Geometry: json.RawMessage(`{"type":"Polygon","coordinates":[]}`)}},
		Products: []catalog.Product{{ID: fxProduct, AreaID: fxArea, IdentificationMediumSchema: json.RawMessage(`{"type":"object"}`),
			TariffSettingsSchema: json.RawMessage(`{"type":"object"}`)}}}
}

// write runs fn in a write transaction and fails the test if it does not
// commit.
func (f *fixture) write(fn func(q store.Q) error) {
	f.t.Helper()
	mustWrite(f.t, f.s, fn)
}

// read is the store's reader.
func (f *fixture) read() store.Q { return f.s.Read() }

// order writes order id of account acct in env at time at with n coupons
// (ids id-c0, id-c1, …).
func (f *fixture) order(acct string, env account.Environment, id string, at time.Time, n int) ticketing.Order {
	f.t.Helper()
	o := ticketing.Order{ID: id, AccountID: acct, Environment: env, RestoreSecret: "secret-" + id, CreatedAt: at}
	for i := range n {
		o.Coupons = append(o.Coupons, ticketing.Coupon{ID: fmt.Sprintf("%s-c%d", id, i), OrderID: id, Position: i, AccountID: acct,
			Environment: env, ProductID: fxProduct, CreatedAt: at})
	}
	f.write(func(q store.Q) error { _, err := q.InsertOrderRows(f.ctx, o, nil, nil, nil); return err })
	return o
}

// subscription writes subscription id of acct in env at time at with
// cycles undated (unordered) cycles id-y0, id-y1, ….
func (f *fixture) subscription(acct string, env account.Environment, id string, at time.Time, cycles int) ticketing.Subscription {
	f.t.Helper()
	s := ticketing.Subscription{ID: id, AccountID: acct, Environment: env, ProductID: fxProduct, CreatedAt: at}
	for i := range cycles {
		s.Cycles = append(s.Cycles, ticketing.Cycle{ID: fmt.Sprintf("%s-y%d", id, i), SubscriptionID: id, ProductID: fxProduct,
			CreatedAt: at.Add(time.Duration(i) * time.Second)})
	}
	f.write(func(q store.Q) error {
		if err := q.InsertSubscription(f.ctx, s); err != nil {
			return err
		}
		for _, c := range s.Cycles {
			if err := q.InsertCycle(f.ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	return s
}

// ticket writes ticket id of coupon c, valid for a day from at.
func (f *fixture) ticket(c ticketing.Coupon, id string, at time.Time, edit func(*ticketing.Ticket)) ticketing.Ticket {
	f.t.Helper()
	tk := ticketing.Ticket{ID: id, CouponID: c.ID, AccountID: c.AccountID, Environment: c.Environment, ProductID: c.ProductID,
		IdentificationMedium: []byte(`{"type":"name"}`), MediumHash: "hash-" + id, ValidFrom: at, ValidUntil: at.Add(24*time.Hour - time.Second),
		CreatedAt: at}
	if edit != nil {
		edit(&tk)
	}
	f.write(func(q store.Q) error { return q.InsertTicket(f.ctx, tk) })
	return tk
}

// item writes billable item id of acct in env ordered at at.
func (f *fixture) item(acct string, env account.Environment, id string, at time.Time, edit func(*ticketing.BillableItem)) ticketing.BillableItem {
	f.t.Helper()
	b := ticketing.BillableItem{ID: id, AccountID: acct, Environment: env, ProductID: fxProduct, Description: "Ticket " + id,
		AmountCents: 250, Currency: "EUR", VATRateBP: 700, OrderedAt: at}
	if edit != nil {
		edit(&b)
	}
	f.write(func(q store.Q) error { return q.InsertBillableItem(f.ctx, b) })
	return b
}

// wantCode fails unless err is an apperr of kind and code.
func wantCode(t *testing.T, what string, err error, kind apperr.Kind, code string) {
	t.Helper()
	if ae := apperr.As(err); ae == nil || ae.Kind != kind || ae.Code != code {
		t.Errorf("%s: error %v, want %v %s", what, err, kind, code)
	}
}

// listed is a list contract under test: the page of lq.
type listed func(q store.Q, lq list.Query) ([]list.Cursor, bool, error)

// checkList tests a list's contract on a store holding want, the
// positions of the records of fxAccount in env the list shows, at least
// four, the oldest and the two newest each at its own time: newest first by (created_at,
// id), pages of a limit with has_more, starting_after and ending_before a
// cursor, the created range, and nothing of the other tenant or
// environment (which the caller also wrote).
func checkList(t *testing.T, s *store.Store, env account.Environment, want []list.Cursor, page listed) {
	t.Helper()
	slices.SortFunc(want, func(a, b list.Cursor) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	check := func(name string, lq list.Query, wantItems []list.Cursor, wantMore bool) {
		t.Helper()
		lq.AccountID, lq.Environment = fxAccount, env
		got, more, err := page(s.Read(), lq)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(cursorIDs(got), cursorIDs(wantItems)) || more != wantMore {
			t.Errorf("%s: %v has_more %v, want %v has_more %v", name, cursorIDs(got), more, cursorIDs(wantItems), wantMore)
		}
	}
	n := len(want)
	check("all", list.Query{Limit: 100}, want, false)
	check("first page", list.Query{Limit: 2}, want[:2], true)
	check("starting_after", list.Query{Limit: 2, After: &want[1]}, want[2:4], n > 4)
	check("starting_after the last", list.Query{Limit: 2, After: &want[n-1]}, nil, false)
	check("ending_before", list.Query{Limit: 1, Before: &want[2]}, want[1:2], true)
	check("ending_before the first", list.Query{Limit: 2, Before: &want[0]}, nil, false)
	gte, lt := want[n-2].CreatedAt, want[1].CreatedAt
	var inRange []list.Cursor
	for _, c := range want {
		if !c.CreatedAt.Before(gte) && c.CreatedAt.Before(lt) {
			inRange = append(inRange, c)
		}
	}
	check("created range", list.Query{Limit: 100, CreatedGTE: &gte, CreatedLT: &lt}, inRange, false)
}

// cursorIDs are the ids of cs (never nil).
func cursorIDs(cs []list.Cursor) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// cursors are the list positions of items.
func cursors[T any](items []T, pos func(T) list.Cursor) []list.Cursor {
	out := []list.Cursor{}
	for _, it := range items {
		out = append(out, pos(it))
	}
	return out
}

// clockRecord is a ready test clock of fxAccount in env standing at at.
func clockRecord(id string, env account.Environment, at time.Time) ticketing.TestClock {
	return ticketing.TestClock{ID: id, AccountID: fxAccount, Environment: env, FrozenTime: at, Status: ticketing.TestClockReady, CreatedAt: at}
}

// customer writes customer id of acct in env created at at.
func (f *fixture) customer(acct string, env account.Environment, id string, at time.Time) invoicing.Customer {
	f.t.Helper()
	c := invoicing.Customer{ID: id, AccountID: acct, Environment: env, AddressLines: []string{"Customer " + id, "Street 1"}, CreatedAt: at}
	f.write(func(q store.Q) error { return q.InsertCustomer(f.ctx, c) })
	return c
}

// invoice writes invoice id of acct in env numbered number, created at at,
// for customer (nil: none).
func (f *fixture) invoice(acct string, env account.Environment, id, number string, at time.Time, customer *string) invoicing.Invoice {
	f.t.Helper()
	inv := invoicing.Invoice{ID: id, AccountID: acct, Environment: env, Kind: invoicedoc.KindInvoice, Number: number,
		Identifier: "ident-" + id, CustomerID: customer, GrossCents: 1190, CreatedAt: at}
	f.write(func(q store.Q) error { return q.InsertInvoice(f.ctx, inv) })
	return inv
}

// checkInsert tests an insert's contract: once insert committed, read
// returns want, and the same insert again is an apperr.Conflict (the
// record's key is taken) that writes nothing.
func checkInsert[T any](t *testing.T, f *fixture, want T, insert func(q store.Q) error, read func(q store.Q) (T, error)) {
	t.Helper()
	f.write(insert)
	got, err := read(f.read())
	if d := gocmp.Diff(want, got); err != nil || d != "" {
		t.Errorf("read after the insert (%v; -want +got):\n%s", err, d)
	}
	wantCode(t, "the same insert again", f.s.Write(f.ctx, insert), apperr.Conflict, store.CodeConflict)
}

// wantOwnOnly checks a lookup by account, environment and id of record
// id of fxAccount in env: another account, the other environment and an
// unknown id find nothing (apperr.NotFound with code).
func wantOwnOnly(t *testing.T, env account.Environment, id, code string, get func(acct string, env account.Environment, id string) error) {
	t.Helper()
	other := account.Live
	if env == account.Live {
		other = account.Test
	}
	for _, c := range [][3]string{{fxOther, string(env), id}, {fxAccount, string(other), id}, {fxAccount, string(env), "unknown-id"}} {
		wantCode(t, c[0]+"/"+c[1]+"/"+c[2], get(c[0], account.Environment(c[1]), c[2]), apperr.NotFound, code)
	}
}

// lookup is a lookup of a record by account, environment and id as
// wantOwnOnly takes it.
func lookup[T any](ctx context.Context, get func(context.Context, string, account.Environment, string) (T, error)) func(string, account.Environment, string) error {
	return func(acct string, env account.Environment, id string) error {
		_, err := get(ctx, acct, env, id)
		return err
	}
}

// checkByID tests a lookup by id alone (the id is the credential, of
// another tenant here): it finds want; an unknown id is apperr.NotFound
// with code.
func checkByID[T any](t *testing.T, want T, id, code string, get func(id string) (T, error)) {
	t.Helper()
	if got, err := get(id); err != nil || !gocmp.Equal(got, want) {
		t.Errorf("lookup of %s = %+v, %v; want %+v", id, got, err, want)
	}
	_, err := get("unknown-id")
	wantCode(t, "an unknown id", err, apperr.NotFound, code)
}

// invite writes an invitation of fxAccount for email, valid a day from fxAt.
func invite(f *fixture, token, email string) account.DashboardInvite {
	f.t.Helper()
	inv := account.DashboardInvite{TokenHash: token, AccountID: fxAccount, Email: email, CreatedAt: fxAt, ExpiresAt: fxAt.Add(24 * time.Hour)}
	f.write(func(q store.Q) error { return q.InsertDashboardInvite(f.ctx, inv) })
	return inv
}

// cancellationRecord is cancellation id (numbered number) of inv, not
// written.
func cancellationRecord(inv invoicing.Invoice, id, number string) invoicing.Invoice {
	c := inv
	c.ID, c.Number, c.Kind, c.RefersTo, c.GrossCents = id, number, invoicedoc.KindCancellation, &inv.ID, -inv.GrossCents
	c.Document = invoicedoc.Document{Kind: invoicedoc.KindCancellation, Number: number}
	return c
}

// cancellationOf writes cancellation id (numbered number) of inv.
func cancellationOf(f *fixture, inv invoicing.Invoice, id, number string) invoicing.Invoice {
	f.t.Helper()
	c := cancellationRecord(inv, id, number)
	f.write(func(q store.Q) error { return q.InsertInvoice(f.ctx, c) })
	return c
}

// clocks writes ready test clocks of fxAccount's test environment
// standing at fxAt and returns them.
func (f *fixture) clocks(ids ...string) []ticketing.TestClock {
	f.t.Helper()
	var cs []ticketing.TestClock
	for _, id := range ids {
		cs = append(cs, clockRecord(id, account.Test, fxAt))
	}
	f.write(func(q store.Q) error {
		for _, c := range cs {
			if err := q.InsertTestClock(f.ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	return cs
}

// wantClocks fails unless the clocks stored are as want.
func wantClocks(t *testing.T, f *fixture, want ...ticketing.TestClock) {
	t.Helper()
	for _, c := range want {
		if got, err := f.read().TestClock(f.ctx, c.AccountID, c.Environment, c.ID); err != nil || !gocmp.Equal(got, c) {
			t.Errorf("clock %s = %+v, %v; want %+v", c.ID, got, err, c)
		}
	}
}

// The list positions of the records the list cases page through.
func orderCursor(o ticketing.Order) list.Cursor { return list.Cursor{CreatedAt: o.CreatedAt, ID: o.ID} }
func couponCursor(c ticketing.Coupon) list.Cursor {
	return list.Cursor{CreatedAt: c.CreatedAt, ID: c.ID}
}
func subscriptionCursor(s ticketing.Subscription) list.Cursor {
	return list.Cursor{CreatedAt: s.CreatedAt, ID: s.ID}
}
func ticketCursor(tk ticketing.Ticket) list.Cursor {
	return list.Cursor{CreatedAt: tk.CreatedAt, ID: tk.ID}
}
func itemCursor(b invoicing.BillableItem) list.Cursor {
	return list.Cursor{CreatedAt: b.OrderedAt, ID: b.ID}
}
func invoiceCursor(inv invoicing.Invoice) list.Cursor {
	return list.Cursor{CreatedAt: inv.CreatedAt, ID: inv.ID}
}
