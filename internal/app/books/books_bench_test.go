package books_test

import (
	"crypto/rand"
	"fmt"
	"testing"

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
