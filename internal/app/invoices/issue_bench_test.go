package invoices_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/invoices"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/config/configtest"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// BenchmarkIssueInvoiceChain measures what the books' hash chain
// (docs/books.md) costs an invoice's issue (IssueInvoice: number, document,
// claim, audit entry, event, files job): "chained" is invoicing as it runs,
// "unchained" the same service whose transactions skip the chain's
// statements (its head and entries; the hashes are still computed), in
// the same run on the same database, alternating, each timed alone (the
// items are stored and assigned outside the timing).
//
//	go test ./internal/app/invoices -run '^$' -bench IssueInvoiceChain -benchtime 1000x -count 5
func BenchmarkIssueInvoiceChain(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			tb := setup(b, engine)
			tb.store.NewLedger(store.LedgerCommitted, nil) // prepares SQLite's hot statements, as serve does
			d := configtest.Defaults()
			unchained := invoices.New(unchainedDB{store.NewView[invoices.Queries](tb.store)}, tb.clock, "farebox", invoices.Options{
				Seller: d.Seller, Links: kit.NewLinks("http://farebox.test"), PaymentDays: d.PaymentDays, Books: tb.books,
				Events: func(ctx context.Context, q invoices.Queries, evs []event.Event) error {
					return tb.writeEvents(ctx, q.(unchainedQ).Queries, evs) // the store.Q below
				}, Notify: func() {}})
			cust, err := tb.inv.CreateCustomer(tb.ctx, idempotency.Claim{}, tb.live,
				invoicing.CustomerInput{AddressLines: []string{"Erika Mustermann", "Hauptstraße 1", "10115 Berlin"}}, true)
			if err != nil {
				b.Fatal(err)
			}
			reportChainCost(b, timeIssues(b, tb, cust.ID, [2]*invoices.Service{unchained, tb.inv}))
		})
	}
}

// timeIssues issues an invoice of a new item of customer with each of
// svcs per round, alternating which goes first, and returns the time each
// took in all (the item's assignment outside the timing).
func timeIssues(b *testing.B, tb *testBundle, customer string, svcs [2]*invoices.Service) [2]time.Duration {
	var took [2]time.Duration
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			v := (i + k) % 2 // alternate which goes first
			id := tb.itemOf(b, tb.live)
			if _, err := tb.update(tb.live, id, "customer_id", `"`+customer+`"`); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if _, err := svcs[v].IssueInvoice(tb.ctx, idempotency.Claim{}, tb.live, invoices.InvoiceRequest{ItemID: id, CustomerID: customer}); err != nil {
				b.Fatal(err)
			}
			took[v] += time.Since(t0)
		}
	}
	return took
}

// reportChainCost reports the mean time of an unchained and a chained
// issue and the chain's share.
func reportChainCost(b *testing.B, took [2]time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(took[0].Microseconds())/n, "µs/unchained")
	b.ReportMetric(float64(took[1].Microseconds())/n, "µs/chained")
	b.ReportMetric(100*(float64(took[1])/float64(took[0])-1), "%chain")
}

// unchainedDB is invoicing's store with the chain's statements left out.
type unchainedDB struct{ invoices.DB }

func (d unchainedDB) Write(ctx context.Context, fn func(q invoices.Queries) error) error {
	return d.DB.Write(ctx, func(q invoices.Queries) error { return fn(unchainedQ{q}) })
}

func (d unchainedDB) WriteClaimed(ctx context.Context, c idempotency.Claim, fn func(q invoices.Queries) error) error {
	return d.DB.WriteClaimed(ctx, c, func(q invoices.Queries) error { return fn(unchainedQ{q}) })
}

type unchainedQ struct{ invoices.Queries }

func (unchainedQ) LockChainHead(context.Context, string, account.Environment) (invoicing.ChainHead, error) {
	return invoicing.ChainHead{}, nil
}
func (unchainedQ) InsertChainEntry(context.Context, invoicing.ChainEntry, string) error { return nil }
