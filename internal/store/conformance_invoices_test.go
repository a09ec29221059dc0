package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

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
		inv := invoicing.Invoice{ID: "inv-1", AccountID: fxAccount, Environment: account.Live, Kind: invoicedoc.KindCancellation,
			Number: "R-1", Identifier: "secret", CustomerID: &cust, CollectionID: &coll, RefersTo: &orig.ID, Electronic: true,
			GrossCents: -1190, Document: invoicedoc.Document{Kind: invoicedoc.KindCancellation, Number: "R-1"}, CreatedAt: fxAt}
		f.write(func(q store.Q) error { return q.InsertInvoice(f.ctx, inv) })
		if got, err := f.read().Invoice(f.ctx, fxAccount, account.Live, inv.ID); err != nil || !cmp.Equal(got, inv) {
			t.Errorf("Invoice after InsertInvoice (%v): %s", err, cmp.Diff(inv, got))
		}
		for _, dup := range []invoicing.Invoice{inv, func() invoicing.Invoice { d := orig; d.ID = "inv-2"; return d }()} {
			err := s.Write(f.ctx, func(q store.Q) error { return q.InsertInvoice(f.ctx, dup) })
			wantCode(t, "a second invoice of id "+dup.ID+" number "+dup.Number, err, apperr.Conflict, store.CodeConflict)
		}
	},
	"Invoice": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxAccount, account.Test, "inv-1", "R-1", fxAt, nil)
		if got, err := f.read().Invoice(f.ctx, fxAccount, account.Test, inv.ID); err != nil || !cmp.Equal(got, inv) {
			t.Errorf("Invoice = %+v, %v; want %+v", got, err, inv)
		}
		for _, q := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Test, inv.ID}, {fxAccount, account.Live, inv.ID}, {fxAccount, account.Test, "inv-x"}} {
			_, err := f.read().Invoice(f.ctx, q.acct, q.env, q.id)
			wantCode(t, q.acct+"/"+string(q.env)+"/"+q.id, err, apperr.NotFound, store.CodeInvoiceNotFound)
		}
	},
	"InvoiceByID": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxOther, account.Live, "inv-1", "R-1", fxAt, nil)
		if got, err := f.read().InvoiceByID(f.ctx, inv.ID); err != nil || !cmp.Equal(got, inv) {
			t.Errorf("InvoiceByID = %+v, %v; want %+v", got, err, inv)
		}
		_, err := f.read().InvoiceByID(f.ctx, "inv-x")
		wantCode(t, "an unknown invoice", err, apperr.NotFound, store.CodeInvoiceNotFound)
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
	"PutFile": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := f.invoice(fxAccount, account.Live, "inv-1", "R-1", fxAt, nil)
		first := invoicing.File{Format: "pdf", ContentType: "application/pdf", Body: []byte("%PDF first")}
		for _, put := range []invoicing.File{first, {Format: "pdf", ContentType: "application/pdf", Body: []byte("%PDF second")}} {
			var got invoicing.File
			f.write(func(q store.Q) (err error) { got, err = q.PutFile(f.ctx, inv.ID, put, fxAt); return err })
			if !cmp.Equal(got, first) { // the first writer wins
				t.Errorf("PutFile(%s) = %+v, want the first stored %+v", put.Body, got, first)
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
		f.write(func(q store.Q) error { _, err := q.PutFile(f.ctx, inv.ID, ubl, fxAt); return err })
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
				if _, err := q.PutFile(f.ctx, put.id, invoicing.File{Format: put.format, ContentType: "x", Body: []byte(put.format)}, fxAt); err != nil {
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

func invoiceCursor(inv invoicing.Invoice) list.Cursor {
	return list.Cursor{CreatedAt: inv.CreatedAt, ID: inv.ID}
}

// cancellationOf writes cancellation id (numbered number) of inv.
func cancellationOf(f *fixture, inv invoicing.Invoice, id, number string) invoicing.Invoice {
	f.t.Helper()
	c := inv
	c.ID, c.Number, c.Kind, c.RefersTo, c.GrossCents = id, number, invoicedoc.KindCancellation, &inv.ID, -inv.GrossCents
	f.write(func(q store.Q) error { return q.InsertInvoice(f.ctx, c) })
	return c
}
