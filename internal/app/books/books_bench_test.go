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

// BenchmarkCheckpointProofs measures what the Merkle tree costs at a
// chain of 20,000 entries: signing a checkpoint after one more entry
// (the tree hash is computed from every stored entry hash), an inclusion
// proof of the first record and a consistency proof from half the chain
// (each reads the entry hashes up to its tree size), against the
// baseline of reading the chain's entries alone, in the same run.
//
//	go test ./internal/app/books -run '^$' -bench CheckpointProofs -benchtime 20x
func BenchmarkCheckpointProofs(b *testing.B) {
	const n = 20000
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			tb := setup(b, engine)
			signer, err := books.FileSigner(b.TempDir()+"/"+books.KeyFile, true)
			if err != nil {
				b.Fatal(err)
			}
			var first string
			for batch := range n / 1000 {
				if err := tb.store.Write(tb.ctx, func(q store.Q) error {
					var recs []books.Record
					for i := range 1000 {
						recs = append(recs, books.ItemChange(tb.live, fmt.Sprintf("item-%d-%d", batch, i), invoicing.AuditAssignmentChanged, nil, start))
					}
					return tb.books.Append(tb.ctx, q, recs...)
				}); err != nil {
					b.Fatal(err)
				}
			}
			if err := tb.store.DB().QueryRowContext(tb.ctx, `SELECT record_id FROM books_chain WHERE seq = 1`).Scan(&first); err != nil {
				b.Fatal(err)
			}
			grow := func(i int) {
				if err := tb.store.Write(tb.ctx, func(q store.Q) error {
					return tb.books.Append(tb.ctx, q, books.ItemChange(tb.live, fmt.Sprintf("more-%d", i), invoicing.AuditAssignmentChanged, nil, start))
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("read entries (baseline)", func(b *testing.B) {
				for b.Loop() {
					got := 0
					for after := int64(0); ; {
						es, err := tb.store.Read().ChainEntries(tb.ctx, tb.live.AccountID, tb.live.Environment, after, 500)
						if err != nil {
							b.Fatal(err)
						}
						if len(es) == 0 {
							break
						}
						got, after = got+len(es), es[len(es)-1].Seq
					}
					if got < n {
						b.Fatalf("%d entries", got)
					}
				}
			})
			b.Run("sign", func(b *testing.B) {
				i := 0
				for b.Loop() {
					b.StopTimer()
					grow(i)
					i++
					b.StartTimer()
					if cps, err := tb.books.Checkpoint(tb.ctx, signer); err != nil || len(cps) != 1 {
						b.Fatalf("%+v %v", cps, err)
					}
				}
			})
			b.Run("inclusion proof", func(b *testing.B) {
				for b.Loop() {
					if _, err := tb.books.InclusionProof(tb.ctx, tb.live, books.InclusionRequest{Kind: "audit", RecordID: first, TreeSize: fmt.Sprint(n)}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("consistency proof", func(b *testing.B) {
				for b.Loop() {
					if _, err := tb.books.ConsistencyProof(tb.ctx, tb.live, books.ConsistencyRequest{First: fmt.Sprint(n / 2), Second: fmt.Sprint(n)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
