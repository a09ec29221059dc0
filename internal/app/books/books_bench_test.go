package books_test

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// BenchmarkVerifyBooks measures farebox books verify over 2,000 issued
// documents with a 40 KB stored PDF each (about the size of an invoice
// PDF): the number series and every file's SHA-256, read 200 files at a
// time. Reported per run and per file.
//
//	go test ./internal/app/books -run '^$' -bench VerifyBooks -benchtime 5x
func BenchmarkVerifyBooks(b *testing.B) {
	const n = 2000
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			tb := setup(b, engine)
			body := make([]byte, 40<<10)
			_, _ = rand.Read(body)
			err := tb.store.Write(tb.ctx, func(q store.Q) error {
				for i := range n {
					num, err := q.NextNumber(tb.ctx, "2026")
					if err != nil {
						return err
					}
					inv := invoicing.Invoice{ID: fmt.Sprintf("farebox-invoice-bench-%06d", i), AccountID: tb.live.AccountID,
						Environment: tb.live.Environment, Kind: invoicedoc.KindInvoice, Number: invoicing.Number("2026", num),
						Identifier: "bench", CreatedAt: start}
					if err := tb.books.Append(tb.ctx, q, books.Issued(inv), books.StoredFile(inv, invoicing.File{Format: "pdf", ContentType: "application/pdf", Body: body}, start)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				rep, err := tb.books.Verify(tb.ctx, books.VerifyOptions{})
				if err != nil || rep.Files != n || rep.Numbers != n || len(rep.Findings) != 0 {
					b.Fatalf("%+v %v", rep, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n, "µs/file")
		})
	}
}

// BenchmarkIssueChained measures what the chain adds to issuing an
// invoice: the write transactions invoicing runs for one invoice (its
// number, the document with a buyer and a split line, the audit entry of
// its item; then, in the files job, its PDF), once with the store calls
// as invoicing made them before the chain ("unchained") and once through
// books.Append ("chained"), alternating in the same run on the same
// database.
//
//	go test ./internal/app/books -run '^$' -bench IssueChained -benchtime 2000x -count 5
func BenchmarkIssueChained(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			tb := setup(b, engine)
			tb.store.NewLedger(store.LedgerCommitted, nil) // prepares SQLite's hot statements, as serve does
			pdf := make([]byte, 40<<10)
			_, _ = rand.Read(pdf)
			var took [2]time.Duration
			for i := 0; b.Loop(); i++ {
				for k := range 2 {
					v := (i + k) % 2 // alternate which goes first
					t0 := time.Now()
					issueOnce(b, tb, pdf, v == 1)
					took[v] += time.Since(t0)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(took[0].Microseconds())/n, "µs/unchained")
			b.ReportMetric(float64(took[1].Microseconds())/n, "µs/chained")
			b.ReportMetric(100*(float64(took[1])/float64(took[0])-1), "%chain")
		})
	}
}

func issueOnce(b *testing.B, tb *testBooks, pdf []byte, chained bool) {
	var inv invoicing.Invoice
	err := tb.store.Write(tb.ctx, func(q store.Q) error {
		var err error
		if inv, err = newInvoice(tb.ctx, q, tb, 380, true); err != nil {
			return err
		}
		item := inv.Document.Lines[0].BillableItemID
		detail := map[string]any{"invoice_id": inv.ID, "invoice_number": inv.Number, "customer_id": "cus_1"}
		if chained {
			return tb.books.Append(tb.ctx, q, books.Issued(inv), books.ItemChange(tb.live, item, invoicing.AuditInvoiced, detail, start))
		}
		if err := q.InsertInvoice(tb.ctx, inv); err != nil {
			return err
		}
		return q.InsertAudit(tb.ctx, invoicing.AuditEntry{ID: "audit-" + inv.ID, AccountID: tb.live.AccountID,
			Environment: tb.live.Environment, ObjectType: "billable_item", ObjectID: item, Action: invoicing.AuditInvoiced,
			Detail: detail, CreatedAt: start})
	})
	if err == nil {
		err = tb.store.Write(tb.ctx, func(q store.Q) error {
			f := invoicing.File{Format: "pdf", ContentType: "application/pdf", Body: pdf}
			if chained {
				return tb.books.Append(tb.ctx, q, books.StoredFile(inv, f, start))
			}
			_, err := q.InsertFile(tb.ctx, inv.ID, f, start)
			return err
		})
	}
	if err != nil {
		b.Fatal(err)
	}
}
