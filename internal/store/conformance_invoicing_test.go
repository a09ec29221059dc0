package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
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
		checkInsert(t, f, c, func(q store.Q) error { return q.InsertCustomer(f.ctx, c) },
			func(q store.Q) (invoicing.Customer, error) { return q.Customer(f.ctx, fxAccount, account.Live, c.ID) })
	},
	"Customer": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.customer(fxAccount, account.Test, "cust-1", fxAt)
		if got, err := f.read().Customer(f.ctx, fxAccount, account.Test, c.ID); err != nil || !cmp.Equal(got, c) {
			t.Errorf("Customer = %+v, %v; want %+v", got, err, c)
		}
		wantOwnOnly(t, account.Test, c.ID, store.CodeCustomerNotFound, lookup(f.ctx, f.read().Customer))
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
		want := []invoicing.Collection{{ID: "coll-1", AccountID: fxAccount, Environment: account.Live, CreatedAt: fxAt}}
		checkInsert(t, f, want, func(q store.Q) error { return q.InsertCollection(f.ctx, "coll-1", fxAccount, account.Live, fxAt) },
			func(q store.Q) ([]invoicing.Collection, error) {
				p, err := q.Collections(f.ctx, invoicing.CollectionFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 5}})
				return p.Items, err
			})
	},
	"CollectionExists": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error { return q.InsertCollection(f.ctx, "coll-1", fxAccount, account.Live, fxAt) })
		if err := f.read().CollectionExists(f.ctx, fxAccount, account.Live, "coll-1"); err != nil {
			t.Errorf("CollectionExists of the tenant's collection: %v", err)
		}
		wantOwnOnly(t, account.Live, "coll-1", store.CodeBillableCollectionNotFound, func(acct string, env account.Environment, id string) error {
			return f.read().CollectionExists(f.ctx, acct, env, id)
		})
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
		wantOwnOnly(t, account.Live, b.ID, store.CodeBillableItemNotFound, lookup(f.ctx, f.read().BillableItem))
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
			"i-c": {Split: []invoicing.Share{{CustomerID: cust, AmountInCents: 250}}}})
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

func TestConformanceInvoices(t *testing.T) { invoicesConformance.run(t) }

// invoicesConformance: invoices.go (number series, documents, claims,
// files).
var invoicesConformance = conformanceCases{
	"NextNumber": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		next := func(series string) int64 {
			var n int64
			f.write(func(q store.Q) (err error) { n, err = q.NextNumber(f.ctx, series); return err })
			return n
		}
		for i, want := range []int64{1, 2, 3} {
			if n := next("R-2026"); n != want {
				t.Errorf("NextNumber #%d of R-2026 = %d, want %d", i+1, n, want)
			}
		}
		if n := next("S-2026"); n != 1 {
			t.Errorf("NextNumber of a new series = %d, want 1", n)
		}
		// A rolled-back transaction gives its number back: the series stays gap-free.
		boom := errors.New("boom")
		err := s.Write(f.ctx, func(q store.Q) error {
			if _, err := q.NextNumber(f.ctx, "R-2026"); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if n := next("R-2026"); n != 4 {
			t.Errorf("NextNumber after a rollback = %d, want 4", n)
		}
	},
	"InsertInvoice": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cust, coll := f.customer(fxAccount, account.Live, "cust-1", fxAt).ID, "coll-1"
		f.write(func(q store.Q) error { return q.InsertCollection(f.ctx, coll, fxAccount, account.Live, fxAt) })
		orig := f.invoice(fxAccount, account.Live, "inv-0", "R-0", fxAt, &cust)
		inv := cancellationRecord(orig, "inv-1", "R-1")
		inv.Identifier, inv.CollectionID, inv.Electronic = "secret", &coll, true
		checkInsert(t, f, inv, func(q store.Q) error { return q.InsertInvoice(f.ctx, inv) },
			func(q store.Q) (invoicing.Invoice, error) { return q.Invoice(f.ctx, fxAccount, account.Live, inv.ID) })
		dup := orig // another id, a number taken
		dup.ID = "inv-2"
		wantCode(t, "an invoice of a taken number", s.Write(f.ctx, func(q store.Q) error { return q.InsertInvoice(f.ctx, dup) }),
			apperr.Conflict, store.CodeConflict)
	},
	"Invoice": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxAccount, account.Test, "inv-1", "R-1", fxAt, nil)
		if got, err := f.read().Invoice(f.ctx, fxAccount, account.Test, inv.ID); err != nil || !cmp.Equal(got, inv) {
			t.Errorf("Invoice = %+v, %v; want %+v", got, err, inv)
		}
		wantOwnOnly(t, account.Test, inv.ID, store.CodeInvoiceNotFound, lookup(f.ctx, f.read().Invoice))
	},
	"InvoiceByID": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxOther, account.Live, "inv-1", "R-1", fxAt, nil)
		checkByID(t, inv, inv.ID, store.CodeInvoiceNotFound, func(id string) (invoicing.Invoice, error) { return f.read().InvoiceByID(f.ctx, id) })
	},
	"Invoices": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		cust := f.customer(fxAccount, account.Live, "cust-1", fxAt).ID
		var want []list.Cursor
		for i, id := range []string{"v-a", "v-b", "v-c", "v-d", "v-e"} {
			var c *string
			if i%2 == 0 {
				c = &cust
			}
			inv := f.invoice(fxAccount, account.Live, id, "R-"+id, fxAt.Add(time.Duration(i)*time.Minute), c)
			want = append(want, invoiceCursor(inv))
		}
		f.invoice(fxOther, account.Live, "v-other", "O-1", fxAt, nil)
		f.invoice(fxAccount, account.Test, "v-test", "T-1", fxAt, nil)
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			p, err := q.Invoices(f.ctx, invoicing.InvoiceFilter{Query: lq})
			return cursors(p.Items, invoiceCursor), p.HasMore, err
		})
		num := "R-v-b"
		lq := list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}
		for name, c := range map[string]struct {
			f    invoicing.InvoiceFilter
			want []string
		}{
			"number":   {invoicing.InvoiceFilter{Query: lq, Number: &num}, []string{"v-b"}},
			"customer": {invoicing.InvoiceFilter{Query: lq, CustomerID: &cust}, []string{"v-e", "v-c", "v-a"}},
		} {
			p, err := f.read().Invoices(f.ctx, c.f)
			if got := cursorIDs(cursors(p.Items, invoiceCursor)); err != nil || !cmp.Equal(got, c.want) {
				t.Errorf("Invoices of a %s = %v, %v; want %v", name, got, err, c.want)
			}
		}
	},
	"ClaimItem": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		b := f.item(fxAccount, account.Live, "item-1", fxAt, nil)
		inv1, inv2 := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil), f.invoice(fxAccount, account.Live, "inv-2", "R-2", fxAt, nil)
		f.write(func(q store.Q) error { return q.ClaimItem(f.ctx, b.ID, "", inv1.ID) })
		// The first invoice stands.
		err := s.Write(f.ctx, func(q store.Q) error { return q.ClaimItem(f.ctx, b.ID, "", inv2.ID) })
		wantCode(t, "a second claim of the item for the same customer", err, apperr.Conflict, store.CodeAlreadyInvoiced)
		if got, err := f.read().ItemClaims(f.ctx, b.ID); err != nil || !cmp.Equal(got, map[string]string{"": inv1.ID}) {
			t.Errorf("claims = %v, %v; want the first", got, err)
		}
	},
	"ReleaseClaims": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		b1, b2 := f.item(fxAccount, account.Live, "item-1", fxAt, nil), f.item(fxAccount, account.Live, "item-2", fxAt, nil)
		inv1, inv2 := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil), f.invoice(fxAccount, account.Live, "inv-2", "R-2", fxAt, nil)
		f.write(func(q store.Q) error {
			for _, c := range [][2]string{{b1.ID, inv1.ID}, {b2.ID, inv1.ID}} {
				if err := q.ClaimItem(f.ctx, c[0], "", c[1]); err != nil {
					return err
				}
			}
			if err := q.ClaimItem(f.ctx, b1.ID, "cust", inv2.ID); err != nil {
				return err
			}
			return q.ReleaseClaims(f.ctx, inv1.ID)
		})
		for id, want := range map[string]map[string]string{b1.ID: {"cust": inv2.ID}, b2.ID: {}} {
			if got, err := f.read().ItemClaims(f.ctx, id); err != nil || !cmp.Equal(got, want) {
				t.Errorf("claims of %s after ReleaseClaims = %v, %v; want %v", id, got, err, want)
			}
		}
		// Released, the item may be invoiced again.
		f.write(func(q store.Q) error { return q.ClaimItem(f.ctx, b2.ID, "", inv2.ID) })
	},
	"MarkCancelled": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil)
		other := f.invoice(fxAccount, account.Live, "inv-9", "R-9", fxAt, nil)
		storno, storno2 := cancellationOf(f, inv, "inv-2", "S-1"), cancellationOf(f, inv, "inv-3", "S-2")
		// The books' trigger refuses a cancelled_by that is no cancellation of the invoice.
		if err := s.Write(f.ctx, func(q store.Q) error { return q.MarkCancelled(f.ctx, other.ID, storno.ID) }); err == nil {
			t.Error("MarkCancelled by a cancellation of another invoice was written")
		}
		f.write(func(q store.Q) error { return q.MarkCancelled(f.ctx, inv.ID, storno.ID) })
		if got, err := f.read().InvoiceByID(f.ctx, inv.ID); err != nil || got.CancelledBy == nil || *got.CancelledBy != storno.ID {
			t.Errorf("invoice after MarkCancelled = %+v, %v", got, err)
		}
		for what, id := range map[string]string{"a second cancellation": inv.ID, "an unknown invoice": "inv-x", "a cancellation": storno.ID} {
			err := s.Write(f.ctx, func(q store.Q) error { return q.MarkCancelled(f.ctx, id, storno2.ID) })
			wantCode(t, what, err, apperr.Conflict, store.CodeAlreadyCancelled)
		}
		if got, err := f.read().InvoiceByID(f.ctx, inv.ID); err != nil || *got.CancelledBy != storno.ID {
			t.Errorf("cancelled_by changed by a refused cancellation: %+v, %v", got, err)
		}
	},
	"InsertFile": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil)
		first := invoicing.File{Format: "pdf", ContentType: "application/pdf", Body: []byte("%PDF first")}
		for i, put := range []invoicing.File{first, {Format: "pdf", ContentType: "application/pdf", Body: []byte("%PDF second")}} {
			var stored bool
			f.write(func(q store.Q) (err error) { stored, err = q.InsertFile(f.ctx, inv.ID, put, fxAt); return err })
			if stored != (i == 0) { // the first writer wins
				t.Errorf("InsertFile(%s) stored = %v, want %v", put.Body, stored, i == 0)
			}
			if got, err := f.read().GetFile(f.ctx, inv.ID, "pdf"); err != nil || !cmp.Equal(got, first) {
				t.Errorf("after InsertFile(%s): %+v, %v; want the first stored %+v", put.Body, got, err, first)
			}
		}
		files, err := f.read().StoredFiles(f.ctx, "", "", 10)
		sum := sha256.Sum256(first.Body)
		if err != nil || len(files) != 1 || files[0].SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("stored files = %+v, %v; want the first with its SHA-256", files, err)
		}
	},
	"GetFile": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil)
		ubl := invoicing.File{Format: "ubl", ContentType: "application/xml", Body: []byte("<Invoice/>")}
		f.write(func(q store.Q) error { _, err := q.InsertFile(f.ctx, inv.ID, ubl, fxAt); return err })
		if got, err := f.read().GetFile(f.ctx, inv.ID, "ubl"); err != nil || !cmp.Equal(got, ubl) {
			t.Errorf("GetFile = %+v, %v; want %+v", got, err, ubl)
		}
		for _, c := range [][2]string{{inv.ID, "pdf"}, {"inv-x", "ubl"}} {
			_, err := f.read().GetFile(f.ctx, c[0], c[1])
			wantCode(t, c[0]+"/"+c[1], err, apperr.NotFound, store.CodeFileNotFound)
		}
	},
	"InvoiceNumbers": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.invoice(fxAccount, account.Test, "inv-1", "T-2", fxAt, nil)
		f.invoice(fxOther, account.Test, "inv-2", "T-1", fxAt, nil)
		f.invoice(fxAccount, account.Live, "inv-3", "L-1", fxAt, nil)
		if got, err := f.read().InvoiceNumbers(f.ctx, account.Test); err != nil || !cmp.Equal(got, []string{"T-1", "T-2"}) {
			t.Errorf("InvoiceNumbers(test) = %v, %v; want T-1, T-2 (every account's, in order)", got, err)
		}
	},
	"LockInvoice": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil)
		f.write(func(q store.Q) error {
			if err := q.LockInvoice(f.ctx, inv.ID); err != nil { // an issued invoice's trigger lets the no-op update pass
				return err
			}
			return q.LockInvoice(f.ctx, "inv-x")
		})
		if got, err := f.read().InvoiceByID(f.ctx, inv.ID); err != nil || !cmp.Equal(got, inv) {
			t.Errorf("invoice changed by its lock: %+v, %v", got, err)
		}
	},
	"FileFormats": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv, other := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil), f.invoice(fxAccount, account.Live, "inv-2", "R-2", fxAt, nil)
		if got, err := f.read().FileFormats(f.ctx, inv.ID); err != nil || len(got) != 0 {
			t.Errorf("FileFormats before any = %v, %v", got, err)
		}
		f.write(func(q store.Q) error {
			for _, put := range []struct{ id, format string }{{inv.ID, "ubl"}, {inv.ID, "cii"}, {inv.ID, "pdf"}, {other.ID, "xml"}} {
				if _, err := q.InsertFile(f.ctx, put.id, invoicing.File{Format: put.format, ContentType: "x", Body: []byte(put.format)}, fxAt); err != nil {
					return err
				}
			}
			return nil
		})
		if got, err := f.read().FileFormats(f.ctx, inv.ID); err != nil || !cmp.Equal(got, []string{"cii", "pdf", "ubl"}) {
			t.Errorf("FileFormats = %v, %v; want cii, pdf, ubl", got, err)
		}
	},
}

func TestConformanceBooks(t *testing.T) { booksConformance.run(t) }

// booksConformance: books.go (the audit log, cancellation receipts, what
// farebox books verify reads) and owners.go (the owner of a record whose id
// is a credential).
var booksConformance = conformanceCases{
	"InsertAudit": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		e := auditEntry("audit-1", "item-1", fxAt)
		checkInsert(t, f, []invoicing.AuditEntry{e}, func(q store.Q) error { return q.InsertAudit(f.ctx, e) },
			func(q store.Q) ([]invoicing.AuditEntry, error) {
				p, err := q.AuditLog(f.ctx, invoicing.AuditFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 5}})
				return p.Items, err
			})
	},
	"AuditLog": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		var want []list.Cursor
		f.write(func(q store.Q) error {
			for i := range 5 {
				e := auditEntry(fmt.Sprintf("audit-%d", i), fmt.Sprintf("item-%d", i%2), fxAt.Add(time.Duration(i)*time.Minute))
				want = append(want, list.Cursor{CreatedAt: e.CreatedAt, ID: e.ID})
				if err := q.InsertAudit(f.ctx, e); err != nil {
					return err
				}
			}
			other, test := auditEntry("audit-other", "item-0", fxAt), auditEntry("audit-test", "item-0", fxAt)
			other.AccountID, test.Environment = fxOther, account.Test
			if err := q.InsertAudit(f.ctx, other); err != nil {
				return err
			}
			return q.InsertAudit(f.ctx, test)
		})
		page := func(q store.Q, f2 invoicing.AuditFilter) ([]list.Cursor, bool, error) {
			p, err := q.AuditLog(f.ctx, f2)
			return cursors(p.Items, func(e invoicing.AuditEntry) list.Cursor { return list.Cursor{CreatedAt: e.CreatedAt, ID: e.ID} }), p.HasMore, err
		}
		checkList(t, s, account.Live, want, func(q store.Q, lq list.Query) ([]list.Cursor, bool, error) {
			return page(q, invoicing.AuditFilter{Query: lq})
		})
		obj := "item-1"
		got, _, err := page(f.read(), invoicing.AuditFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 10}, ObjectID: &obj})
		if ids := cursorIDs(got); err != nil || !cmp.Equal(ids, []string{"audit-3", "audit-1"}) {
			t.Errorf("AuditLog of %s = %v, %v; want audit-3, audit-1", obj, ids, err)
		}
	},
	"InsertReceipt": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Live, "sub-1", fxAt, 0)
		r := receiptOf(sub, "rcpt-1")
		checkInsert(t, f, r, func(q store.Q) error { return q.InsertReceipt(f.ctx, r) },
			func(q store.Q) (ticketing.CancellationReceipt, error) {
				return q.Receipt(f.ctx, fxAccount, account.Live, sub.ID)
			})
		second := receiptOf(sub, "rcpt-2") // one receipt per subscription
		err := s.Write(f.ctx, func(q store.Q) error { return q.InsertReceipt(f.ctx, second) })
		wantCode(t, "a second receipt of the subscription", err, apperr.Conflict, store.CodeConflict)
	},
	"Receipt": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sub := f.subscription(fxAccount, account.Test, "sub-1", fxAt, 0)
		f.subscription(fxAccount, account.Test, "sub-2", fxAt, 0)
		r := receiptOf(sub, "rcpt-1")
		f.write(func(q store.Q) error { return q.InsertReceipt(f.ctx, r) })
		if got, err := f.read().Receipt(f.ctx, fxAccount, account.Test, sub.ID); err != nil || !cmp.Equal(got, r) {
			t.Errorf("Receipt = %+v, %v; want %+v", got, err, r)
		}
		wantOwnOnly(t, account.Test, sub.ID, store.CodeReceiptNotFound, lookup(f.ctx, f.read().Receipt))
		_, err := f.read().Receipt(f.ctx, fxAccount, account.Test, "sub-2")
		wantCode(t, "a subscription without a receipt", err, apperr.NotFound, store.CodeReceiptNotFound)
	},
	"AllInvoiceNumbers": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if got, err := f.read().AllInvoiceNumbers(f.ctx); err != nil || len(got) != 0 {
			t.Errorf("AllInvoiceNumbers of none = %v, %v", got, err)
		}
		f.invoice(fxAccount, account.Test, "inv-1", "T-2", fxAt, nil)
		f.invoice(fxOther, account.Live, "inv-2", "L-1", fxAt, nil)
		f.invoice(fxAccount, account.Test, "inv-3", "T-1", fxAt, nil)
		if got, err := f.read().AllInvoiceNumbers(f.ctx); err != nil || !cmp.Equal(got, []string{"L-1", "T-1", "T-2"}) {
			t.Errorf("AllInvoiceNumbers = %v, %v; want every series in order", got, err)
		}
	},
	"InvoiceCounters": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if got, err := f.read().InvoiceCounters(f.ctx); err != nil || len(got) != 0 {
			t.Errorf("InvoiceCounters of none = %v, %v", got, err)
		}
		f.write(func(q store.Q) error {
			for _, series := range []string{"A", "B", "A", "A"} {
				if _, err := q.NextNumber(f.ctx, series); err != nil {
					return err
				}
			}
			return nil
		})
		if got, err := f.read().InvoiceCounters(f.ctx); err != nil || !cmp.Equal(got, map[string]int64{"A": 3, "B": 1}) {
			t.Errorf("InvoiceCounters = %v, %v; want A 3, B 1", got, err)
		}
	},
	"StoredFiles": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.invoice(fxAccount, account.Live, "inv-a", "R-1", fxAt, nil)
		f.invoice(fxAccount, account.Live, "inv-b", "R-2", fxAt, nil)
		f.write(func(q store.Q) error {
			for _, put := range [][2]string{{"inv-b", "pdf"}, {"inv-a", "ubl"}, {"inv-a", "pdf"}} {
				if _, err := q.InsertFile(f.ctx, put[0], invoicing.File{Format: put[1], ContentType: "x", Body: []byte(put[0] + put[1])}, fxAt); err != nil {
					return err
				}
			}
			return nil
		})
		// Keyset pages by (invoice, format).
		var got []string
		after := [2]string{}
		for {
			page, err := f.read().StoredFiles(f.ctx, after[0], after[1], 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, sf := range page {
				got = append(got, sf.InvoiceID+"/"+sf.Format+"/"+sf.Number+"/"+string(sf.Body))
				if len(sf.SHA256) != 64 {
					t.Errorf("stored file %s/%s has hash %q", sf.InvoiceID, sf.Format, sf.SHA256)
				}
				after = [2]string{sf.InvoiceID, sf.Format}
			}
			if len(page) < 2 {
				break
			}
		}
		want := []string{"inv-a/pdf/R-1/inv-apdf", "inv-a/ubl/R-1/inv-aubl", "inv-b/pdf/R-2/inv-bpdf"}
		if !cmp.Equal(got, want) {
			t.Errorf("StoredFiles pages = %v, want %v", got, want)
		}
	},
	"CouponOwner": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		c := f.order(fxOther, account.Test, "order-1", fxAt, 1).Coupons[0]
		checkOwner(t, c.ID)(f.read().CouponOwner(f.ctx, c.ID))
		_, err := f.read().CouponOwner(f.ctx, "coupon-x")
		wantCode(t, "an unknown coupon", err, apperr.NotFound, store.CodeCouponNotFound)
	},
	"TicketOwner": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		tk := f.ticket(f.order(fxOther, account.Test, "order-1", fxAt, 1).Coupons[0], "ticket-1", fxAt, nil)
		checkOwner(t, tk.ID)(f.read().TicketOwner(f.ctx, tk.ID))
		_, err := f.read().TicketOwner(f.ctx, "ticket-x")
		wantCode(t, "an unknown ticket", err, apperr.NotFound, store.CodeTicketNotFound)
	},
	"InvoiceOwner": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxOther, account.Test, "inv-1", "R-1", fxAt, nil)
		o, secret, err := f.read().InvoiceOwner(f.ctx, inv.ID)
		checkOwner(t, inv.ID)(o, err)
		if secret != inv.Identifier {
			t.Errorf("InvoiceOwner's identifier = %q, want %q", secret, inv.Identifier)
		}
		_, _, err = f.read().InvoiceOwner(f.ctx, "inv-x")
		wantCode(t, "an unknown invoice", err, apperr.NotFound, store.CodeInvoiceNotFound)
	},
}

// auditEntry is an entry of fxAccount's live audit log about item.
func auditEntry(id, item string, at time.Time) invoicing.AuditEntry {
	return invoicing.AuditEntry{ID: id, AccountID: fxAccount, Environment: account.Live, ObjectType: "billable_item", ObjectID: item,
		Action: "assigned", Actor: account.Actor{Type: account.ActorAPIKey, ID: "key-1"},
		Detail: map[string]any{"customer_id": "cust-1", "amount": float64(250)}, CreatedAt: at}
}

// receiptOf is a cancellation receipt of sub.
func receiptOf(sub ticketing.Subscription, id string) ticketing.CancellationReceipt {
	return ticketing.CancellationReceipt{ID: id, SubscriptionID: sub.ID, AccountID: sub.AccountID, Environment: sub.Environment,
		ProductID: sub.ProductID, ProductName: "Monthly", Type: "ordinary", ReceivedAt: fxAt, EffectiveEnd: fxAt.Add(30 * 24 * time.Hour),
		Actor: account.Actor{Type: account.ActorOperator, ID: "root"}, CreatedAt: fxAt}
}

// checkOwner returns the check that record id's owner, as a lookup
// answered, is fxOther's test environment (where the owner cases write it).
func checkOwner(t *testing.T, id string) func(o account.Owner, err error) {
	return func(o account.Owner, err error) {
		t.Helper()
		if want := (account.Owner{AccountID: fxOther, Environment: account.Test}); err != nil || o != want {
			t.Errorf("owner of %s = %+v, %v; want %+v", id, o, err, want)
		}
	}
}
