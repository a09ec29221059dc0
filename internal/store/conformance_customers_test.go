package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/money"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceCustomers(t *testing.T) { customersConformance.run(t) }

// customersConformance: customers.go (customers, billable items with their
// assignments, collections).
var customersConformance = conformanceCases{
	"InsertCustomer": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := invoicing.Customer{ID: "cust-1", AccountID: fxAccount, Environment: account.Live, AddressLines: []string{"Ä GmbH", "Weg 1"},
			Electronic: &invoicing.Electronic{ElectronicAddress: "a@example.com", ElectronicAddressSchemeID: "EM", BuyerReference: "ref"},
			CreatedAt:  fxAt}
		f.write(func(q store.Q) error { return q.InsertCustomer(f.ctx, c) })
		if got, err := f.read().Customer(f.ctx, fxAccount, account.Live, c.ID); err != nil || !cmp.Equal(got, c) {
			t.Errorf("Customer after InsertCustomer = %+v, %v; want %+v", got, err, c)
		}
		err := s.Write(f.ctx, func(q store.Q) error { return q.InsertCustomer(f.ctx, c) })
		wantCode(t, "a second customer of the same id", err, apperr.Conflict, store.CodeConflict)
	},
	"Customer": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.customer(fxAccount, account.Test, "cust-1", fxAt)
		if got, err := f.read().Customer(f.ctx, fxAccount, account.Test, c.ID); err != nil || !cmp.Equal(got, c) {
			t.Errorf("Customer = %+v, %v; want %+v", got, err, c)
		}
		for _, q := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Test, c.ID}, {fxAccount, account.Live, c.ID}, {fxAccount, account.Test, "cust-x"}} {
			_, err := f.read().Customer(f.ctx, q.acct, q.env, q.id)
			wantCode(t, q.acct+"/"+string(q.env)+"/"+q.id, err, apperr.NotFound, store.CodeCustomerNotFound)
		}
	},
	"Customers": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		for i, id := range []string{"c-a", "c-b", "c-c", "c-d", "c-e"} {
			want = append(want, list.Cursor{CreatedAt: f.customer(fxAccount, account.Live, id, fxAt.Add(time.Duration(i)*time.Minute)).CreatedAt, ID: id})
		}
		f.customer(fxOther, account.Live, "c-other", fxAt)
		f.customer(fxAccount, account.Test, "c-test", fxAt)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Customers(f.ctx, invoicing.CustomerFilter{Query: lq})
			return cursors(p.Items, func(c invoicing.Customer) list.Cursor { return list.Cursor{CreatedAt: c.CreatedAt, ID: c.ID} }), p.HasMore, err
		})
	},
	"InsertCollection": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error { return q.InsertCollection(f.ctx, "coll-1", fxAccount, account.Live, fxAt) })
		p, err := f.read().Collections(f.ctx, invoicing.CollectionFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 5}})
		want := []invoicing.Collection{{ID: "coll-1", AccountID: fxAccount, Environment: account.Live, CreatedAt: fxAt}}
		if err != nil || !cmp.Equal(p.Items, want) {
			t.Errorf("Collections after InsertCollection = %+v, %v; want %+v", p.Items, err, want)
		}
		err = s.Write(f.ctx, func(q store.Q) error { return q.InsertCollection(f.ctx, "coll-1", fxAccount, account.Live, fxAt) })
		wantCode(t, "a second collection of the same id", err, apperr.Conflict, store.CodeConflict)
	},
	"CollectionExists": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error { return q.InsertCollection(f.ctx, "coll-1", fxAccount, account.Live, fxAt) })
		if err := f.read().CollectionExists(f.ctx, fxAccount, account.Live, "coll-1"); err != nil {
			t.Errorf("CollectionExists of the tenant's collection: %v", err)
		}
		for _, q := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Live, "coll-1"}, {fxAccount, account.Test, "coll-1"}, {fxAccount, account.Live, "coll-x"}} {
			err := f.read().CollectionExists(f.ctx, q.acct, q.env, q.id)
			wantCode(t, q.acct+"/"+string(q.env)+"/"+q.id, err, apperr.NotFound, store.CodeBillableCollectionNotFound)
		}
	},
	"BillableItem": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cust := f.customer(fxAccount, account.Live, "cust-1", fxAt)
		clock := "clock-1"
		f.write(func(q store.Q) error { return q.InsertTestClock(f.ctx, clockRecord(clock, account.Live, fxAt)) })
		b := f.item(fxAccount, account.Live, "item-1", fxAt, func(b *ticketing.BillableItem) { b.TestClockID = &clock })
		want := invoicing.BillableItem{BillableItem: b}
		if got, err := f.read().BillableItem(f.ctx, fxAccount, account.Live, b.ID); err != nil || !cmp.Equal(got, want) {
			t.Errorf("BillableItem without an assignment = %+v, %v; want %+v", got, err, want)
		}
		want.Assignment = invoicing.Assignment{CustomerID: &cust.ID}
		f.write(func(q store.Q) error { return q.SetAssignment(f.ctx, b.ID, want.Assignment, fxAt) })
		if got, err := f.read().BillableItem(f.ctx, fxAccount, account.Live, b.ID); err != nil || !cmp.Equal(got, want) {
			t.Errorf("BillableItem with its assignment = %+v, %v; want %+v", got, err, want)
		}
		for _, q := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Live, b.ID}, {fxAccount, account.Test, b.ID}, {fxAccount, account.Live, "item-x"}} {
			_, err := f.read().BillableItem(f.ctx, q.acct, q.env, q.id)
			wantCode(t, q.acct+"/"+string(q.env)+"/"+q.id, err, apperr.NotFound, store.CodeBillableItemNotFound)
		}
	},
	"CollectionItems": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		coll, other := "coll-1", "coll-2"
		f.write(func(q store.Q) error {
			if err := q.InsertCollection(f.ctx, coll, fxAccount, account.Live, fxAt); err != nil {
				return err
			}
			return q.InsertCollection(f.ctx, other, fxAccount, account.Live, fxAt)
		})
		late := f.item(fxAccount, account.Live, "item-a", fxAt.Add(time.Hour), nil)
		early := f.item(fxAccount, account.Live, "item-b", fxAt, nil)
		f.item(fxAccount, account.Live, "item-c", fxAt, nil)
		assign(f, map[string]invoicing.Assignment{late.ID: {CollectionID: &coll}, early.ID: {CollectionID: &coll}, "item-c": {CollectionID: &other}})
		got, err := f.read().CollectionItems(f.ctx, coll)
		want := []invoicing.BillableItem{{BillableItem: early, Assignment: invoicing.Assignment{CollectionID: &coll}},
			{BillableItem: late, Assignment: invoicing.Assignment{CollectionID: &coll}}}
		if d := cmp.Diff(want, got); err != nil || d != "" {
			t.Errorf("CollectionItems, oldest first (%v; -want +got):\n%s", err, d)
		}
	},
	"BillableItems": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		for i, id := range []string{"i-a", "i-b", "i-c", "i-d", "i-e"} {
			b := f.item(fxAccount, account.Live, id, fxAt.Add(time.Duration(i)*time.Minute), nil)
			want = append(want, itemCursor(invoicing.BillableItem{BillableItem: b}))
		}
		f.item(fxOther, account.Live, "i-other", fxAt, nil)
		f.item(fxAccount, account.Test, "i-test", fxAt, nil)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.BillableItems(f.ctx, invoicing.BillableItemFilter{Query: lq})
			return cursors(p.Items, itemCursor), p.HasMore, err
		})
		// The filters: a customer, a collection, invoiced or not.
		cust, coll := f.customer(fxAccount, account.Live, "cust-1", fxAt).ID, "coll-1"
		f.write(func(q store.Q) error { return q.InsertCollection(f.ctx, coll, fxAccount, account.Live, fxAt) })
		assign(f, map[string]invoicing.Assignment{"i-a": {CustomerID: &cust}, "i-b": {CustomerID: &cust, CollectionID: &coll},
			"i-c": {Split: []invoicing.Share{{CustomerID: cust, AmountInCents: money.Cents(250)}}}})
		inv := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, &cust)
		f.write(func(q store.Q) error { return q.ClaimItem(f.ctx, "i-b", cust, inv.ID) })
		yes, no := true, false
		lq := list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}
		for name, c := range map[string]struct {
			f    invoicing.BillableItemFilter
			want []string
		}{
			"customer":     {invoicing.BillableItemFilter{Query: lq, CustomerID: &cust}, []string{"i-b", "i-a"}},
			"collection":   {invoicing.BillableItemFilter{Query: lq, CollectionID: &coll}, []string{"i-b"}},
			"invoiced":     {invoicing.BillableItemFilter{Query: lq, Invoiced: &yes}, []string{"i-b"}},
			"not invoiced": {invoicing.BillableItemFilter{Query: lq, Invoiced: &no}, []string{"i-e", "i-d", "i-c", "i-a"}},
		} {
			p, err := f.read().BillableItems(f.ctx, c.f)
			if got := cursorIDs(cursors(p.Items, itemCursor)); err != nil || !cmp.Equal(got, c.want) {
				t.Errorf("BillableItems of a %s = %v, %v; want %v", name, got, err, c.want)
			}
		}
	},
	"Collections": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		f.write(func(q store.Q) error {
			for i, id := range []string{"k-a", "k-b", "k-c", "k-d", "k-e"} {
				at := fxAt.Add(time.Duration(i) * time.Minute)
				if err := q.InsertCollection(f.ctx, id, fxAccount, account.Live, at); err != nil {
					return err
				}
				want = append(want, list.Cursor{CreatedAt: at, ID: id})
			}
			if err := q.InsertCollection(f.ctx, "k-other", fxOther, account.Live, fxAt); err != nil {
				return err
			}
			return q.InsertCollection(f.ctx, "k-test", fxAccount, account.Test, fxAt)
		})
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Collections(f.ctx, invoicing.CollectionFilter{Query: lq})
			return cursors(p.Items, func(c invoicing.Collection) list.Cursor { return list.Cursor{CreatedAt: c.CreatedAt, ID: c.ID} }), p.HasMore, err
		})
	},
	"SetAssignment": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		b := f.item(fxAccount, account.Live, "item-1", fxAt, nil)
		cust, coll := f.customer(fxAccount, account.Live, "cust-1", fxAt).ID, "coll-1"
		f.write(func(q store.Q) error { return q.InsertCollection(f.ctx, coll, fxAccount, account.Live, fxAt) })
		for _, a := range []invoicing.Assignment{ // inserted, then replaced twice
			{CustomerID: &cust},
			{Split: []invoicing.Share{{CustomerID: cust, AmountInCents: 100}, {CustomerID: "cust-2", AmountInCents: 150}}, CollectionID: &coll},
			{},
		} {
			f.write(func(q store.Q) error { return q.SetAssignment(f.ctx, b.ID, a, fxAt) })
			if got, err := f.read().BillableItem(f.ctx, fxAccount, account.Live, b.ID); err != nil || !cmp.Equal(got.Assignment, a) {
				t.Errorf("assignment after SetAssignment(%+v) = %+v, %v", a, got.Assignment, err)
			}
		}
		err := s.Write(f.ctx, func(q store.Q) error { return q.SetAssignment(f.ctx, "item-x", invoicing.Assignment{}, fxAt) })
		if err == nil {
			t.Error("SetAssignment of an unknown item was written")
		}
	},
	"ItemClaims": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		b := f.item(fxAccount, account.Live, "item-1", fxAt, nil)
		cust := f.customer(fxAccount, account.Live, "cust-1", fxAt).ID
		inv1, inv2 := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, &cust), f.invoice(fxAccount, account.Live, "inv-2", "R-2", fxAt, nil)
		if got, err := f.read().ItemClaims(f.ctx, b.ID); err != nil || len(got) != 0 {
			t.Errorf("ItemClaims before any = %v, %v", got, err)
		}
		f.write(func(q store.Q) error {
			if err := q.ClaimItem(f.ctx, b.ID, cust, inv1.ID); err != nil {
				return err
			}
			return q.ClaimItem(f.ctx, b.ID, "", inv2.ID)
		})
		if got, err := f.read().ItemClaims(f.ctx, b.ID); err != nil || !cmp.Equal(got, map[string]string{cust: inv1.ID, "": inv2.ID}) {
			t.Errorf("ItemClaims = %v, %v", got, err)
		}
	},
	"LockItem": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		b := f.item(fxAccount, account.Live, "item-1", fxAt, nil)
		f.write(func(q store.Q) error {
			if err := q.LockItem(f.ctx, b.ID); err != nil {
				return err
			}
			return q.LockItem(f.ctx, "item-x")
		})
		if got, err := f.read().BillableItem(f.ctx, fxAccount, account.Live, b.ID); err != nil || !cmp.Equal(got.BillableItem, b) {
			t.Errorf("item changed by its lock: %+v, %v", got, err)
		}
	},
}

func itemCursor(b invoicing.BillableItem) list.Cursor {
	return list.Cursor{CreatedAt: b.OrderedAt, ID: b.ID}
}

// assign sets the assignments of items (by id).
func assign(f *fixture, as map[string]invoicing.Assignment) {
	f.t.Helper()
	f.write(func(q store.Q) error {
		for id, a := range as {
			if err := q.SetAssignment(f.ctx, id, a, fxAt); err != nil {
				return err
			}
		}
		return nil
	})
}
