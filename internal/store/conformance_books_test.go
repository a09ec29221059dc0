package store_test

import (
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

func TestConformanceBooks(t *testing.T) { booksConformance.run(t) }

// booksConformance: books.go (the audit log, cancellation receipts, what
// farebox books verify reads) and owners.go (the owner of a record whose id
// is a credential).
var booksConformance = conformanceCases{
	"InsertAudit": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		e := auditEntry("audit-1", "item-1", fxAt)
		f.write(func(q store.Q) error { return q.InsertAudit(f.ctx, e) })
		p, err := f.read().AuditLog(f.ctx, invoicing.AuditFilter{Query: list.Query{AccountID: fxAccount, Environment: account.Live, Limit: 5}})
		if err != nil || len(p.Items) != 1 || !cmp.Equal(p.Items[0], e) {
			t.Errorf("AuditLog after InsertAudit = %+v, %v; want %+v", p.Items, err, e)
		}
		err = s.Write(f.ctx, func(q store.Q) error { return q.InsertAudit(f.ctx, e) })
		wantCode(t, "a second entry of the same id", err, apperr.Conflict, store.CodeConflict)
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
		f.write(func(q store.Q) error { return q.InsertReceipt(f.ctx, r) })
		if got, err := f.read().Receipt(f.ctx, fxAccount, account.Live, sub.ID); err != nil || !cmp.Equal(got, r) {
			t.Errorf("Receipt after InsertReceipt = %+v, %v; want %+v", got, err, r)
		}
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
		for _, q := range []struct {
			acct string
			env  account.Environment
			id   string
		}{{fxOther, account.Test, sub.ID}, {fxAccount, account.Live, sub.ID}, {fxAccount, account.Test, "sub-2"}} {
			_, err := f.read().Receipt(f.ctx, q.acct, q.env, q.id)
			wantCode(t, q.acct+"/"+string(q.env)+"/"+q.id, err, apperr.NotFound, store.CodeReceiptNotFound)
		}
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
				if _, err := q.PutFile(f.ctx, put[0], invoicing.File{Format: put[1], ContentType: "x", Body: []byte(put[0] + put[1])}, fxAt); err != nil {
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
