package books_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/config/configtest"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/ticketing"
)

var start = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// testBooks are the books over a fresh database with one account and a
// product its subscriptions are of.
type testBooks struct {
	ctx   context.Context
	books *books.Books
	store *store.Store
	opts  store.Options // the database's, for a second instance on it
	live  account.Principal
}

func setup(t testing.TB, engine store.Engine) *testBooks {
	t.Helper()
	clk := clocktest.NewFixed(start)
	var opts store.Options
	s := storetest.OpenWith(t, engine, func(o *store.Options) { o.Clock, opts = clk, *o })
	tb := &testBooks{ctx: context.Background(), store: s, opts: opts,
		books: books.New(store.NewView[books.Queries](s), clk, "farebox", configtest.Defaults().Seller, kit.NewLinks("https://farebox.test"), nil),
		live:  account.Principal{AccountID: "acc_partner", Environment: account.Live, KeyID: "key_live"}}
	for _, stmt := range []string{`INSERT INTO areas (id, position, data) VALUES ('area', 0, '{}')`,
		`INSERT INTO products (id, area_id, position, data) VALUES ('monthly', 'area', 0, '{}')`} {
		if _, err := s.DB().ExecContext(tb.ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Write(tb.ctx, func(q store.Q) error {
		return q.CreateAccount(tb.ctx, account.Account{ID: tb.live.AccountID, Name: "Partner GmbH", CreatedAt: start})
	}); err != nil {
		t.Fatal(err)
	}
	return tb
}

// subscription stores a subscription of the account to the monthly product.
func (tb *testBooks) subscription(t testing.TB, id string) ticketing.Subscription {
	t.Helper()
	s := ticketing.Subscription{ID: id, AccountID: tb.live.AccountID, Environment: tb.live.Environment, ProductID: "monthly", CreatedAt: start}
	if _, err := tb.store.DB().ExecContext(tb.ctx, `INSERT INTO subscriptions (id, account_id, environment, product_id, created_at)
		VALUES ($1, $2, $3, $4, $5)`, s.ID, s.AccountID, string(s.Environment), s.ProductID, start); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAppendAndRead: records appended in a change's transaction are in
// the books once it commits and absent when it fails; the audit log lists
// its entries newest first (by object too), and a receipt is shown, as a
// PDF too, to its owner only.
func TestAppendAndRead(t *testing.T) {
	storetest.EachEngineWith(t, setup, func(t *testing.T, tb *testBooks) {
		sub := tb.subscription(t, "farebox-subscription-1")
		end := time.Date(2026, 7, 31, 22, 0, 0, 0, time.UTC)
		boom := errors.New("the change fails")
		err := tb.store.Write(tb.ctx, func(q store.Q) error {
			if err := tb.books.Append(tb.ctx, q, books.ItemChange(tb.live, "item-0", invoicing.AuditInvoiced, nil, start),
				books.Cancellation(tb.live, sub, "Deutschlandticket", start, end, start)); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("failed change: %v", err)
		}
		if l, err := tb.books.AuditLog(tb.ctx, tb.live, books.AuditRequest{}); err != nil || len(l.Data) != 0 {
			t.Fatalf("a failed change left %+v %v", l, err)
		}
		if _, err := tb.books.CancellationReceipt(tb.ctx, tb.live, sub.ID); apperr.KindOf(err) != apperr.NotFound {
			t.Fatalf("a failed change left a receipt: %v", err)
		}

		err = tb.store.Write(tb.ctx, func(q store.Q) error {
			var recs []books.Record
			for i := range 3 {
				recs = append(recs, books.ItemChange(tb.live, fmt.Sprintf("item-%d", i%2), invoicing.AuditAssignmentChanged,
					map[string]any{"n": i}, start.Add(time.Duration(i)*time.Minute)))
			}
			recs = append(recs, books.Cancellation(tb.live, sub, "Deutschlandticket", start, end, start))
			return tb.books.Append(tb.ctx, q, recs...)
		})
		if err != nil {
			t.Fatal(err)
		}
		l, err := tb.books.AuditLog(tb.ctx, tb.live, books.AuditRequest{})
		if err != nil || len(l.Data) != 3 || l.Data[0].ObjectID != "item-0" || l.Data[0].Detail["n"] != 2.0 || l.Data[2].Detail["n"] != 0.0 ||
			l.Data[0].Actor != (books.AuditActorJSON{Type: "api_key", ID: "key_live"}) || l.Data[0].Object != "audit_entry" {
			t.Fatalf("audit log %+v %v", l, err)
		}
		one := "item-1"
		if l, err := tb.books.AuditLog(tb.ctx, tb.live, books.AuditRequest{ObjectID: &one}); err != nil || len(l.Data) != 1 || l.Data[0].ObjectID != one {
			t.Fatalf("item-1's entries %+v %v", l, err)
		}
		r, err := tb.books.CancellationReceipt(tb.ctx, tb.live, sub.ID)
		if err != nil || r.ProductName != "Deutschlandticket" || r.CancellationType != ticketing.CancellationOrdinary ||
			r.ReceiptPDFURL != "https://farebox.test/v9/ticketing/subscriptions/"+sub.ID+"/cancellation_receipt.pdf" ||
			r.ConfirmationText == "" {
			t.Fatalf("receipt %+v %v", r, err)
		}
		if in, err := tb.books.ReceiptOf(tb.ctx, tb.store.Read(), tb.live, sub.ID); err != nil || in == nil || *in != r {
			t.Fatalf("ReceiptOf %+v %v, want %+v", in, err, r)
		}
		if none, err := tb.books.ReceiptOf(tb.ctx, tb.store.Read(), tb.live, "farebox-subscription-2"); err != nil || none != nil {
			t.Fatalf("ReceiptOf an uncancelled subscription %+v %v", none, err)
		}
		pdf, name, err := tb.books.CancellationReceiptPDF(tb.ctx, tb.live, sub.ID)
		if err != nil || name != r.ID+".pdf" || string(pdf[:5]) != "%PDF-" {
			t.Fatalf("receipt PDF %q %.8q %v", name, pdf, err)
		}
		other := account.Principal{AccountID: "acc_other", Environment: account.Live}
		if _, err := tb.books.CancellationReceipt(tb.ctx, other, sub.ID); apperr.KindOf(err) != apperr.NotFound {
			t.Fatalf("another account reads the receipt: %v", err)
		}
	})
}

// TestVerify: books without documents are clean; a number taken without
// its document is a gap, and a stored file is checked against its hash.
func TestVerify(t *testing.T) {
	storetest.EachEngineWith(t, setup, func(t *testing.T, tb *testBooks) {
		if rep, err := tb.books.Verify(tb.ctx, books.VerifyOptions{}); err != nil || rep.Numbers != 0 || len(rep.Findings) != 0 {
			t.Fatalf("empty books %+v %v", rep, err)
		}
		err := tb.store.Write(tb.ctx, func(q store.Q) error {
			for i := range 3 {
				n, err := q.NextNumber(tb.ctx, "2026")
				if err != nil {
					return err
				}
				if i == 1 { // the second number is taken, its invoice never written
					continue
				}
				inv := invoicing.Invoice{ID: fmt.Sprintf("farebox-invoice-%d", i), AccountID: tb.live.AccountID, Environment: tb.live.Environment,
					Kind: invoicedoc.KindInvoice, Number: invoicing.Number("2026", n), Identifier: "x", CreatedAt: start}
				if err := tb.books.Append(tb.ctx, q, books.Issued(inv), books.StoredFile(inv, invoicing.File{Format: "pdf", ContentType: "application/pdf", Body: []byte("%PDF-1")}, start)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := tb.books.Verify(tb.ctx, books.VerifyOptions{})
		if err != nil || rep.Numbers != 2 || rep.Series != 1 || rep.Files != 2 || rep.Unhashed != 0 ||
			len(rep.Findings) != 1 || rep.Findings[0].Kind != "number_gap" {
			t.Fatalf("verify %+v %v", rep, err)
		}
	})
}
