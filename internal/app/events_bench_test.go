package app_test

import (
	"encoding/json"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// BenchmarkPlaceOrderEvents measures what the order.created event costs
// ordering (issue 17; issue 33: at most 3 points above the empty event's
// floor). Each iteration places the same order (a single ticket and the
// monthly subscription) three times on one database: without the event
// (the baseline), with it, and with an event whose object is "{}" and
// built from nothing (what the event's row costs whatever it shows),
// rotating which goes first. Interleaving at this grain keeps a shared,
// noisy machine from favouring any side. Two ways, each on a fresh
// database:
//   - order: the use case alone (PlaceOrder; app.PlaceOrderWithoutEvent,
//     app.PlaceOrderWithEmptyEvent);
//   - answer: what the order POST does, the use case and its answer's
//     bytes as the transport writes them (PlaceOrderResponse, whose answer
//     is the event's object with the parts and the restore secret put in;
//     the other two encode the view as the POST did before:
//     app.PlaceOrderResponseWithoutEvent, …WithEmptyEvent).
//
// Reported: the median of each (baseline-ns/order, events-ns/order), the
// overhead of the medians in percent (overhead-%) and that of the empty
// event (empty-event-%).
//
//	go test ./internal/app -run '^$' -bench 'PlaceOrderEvents$' -benchtime 2000x -count 3
func BenchmarkPlaceOrderEvents(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			b.Run("order", func(b *testing.B) {
				tb := setup(b, engine)
				req := tb.benchOrder(b)
				measureEvents(b, [3]func() error{
					func() error { _, err := app.PlaceOrderWithoutEvent(tb.ctx, tb.app, tb.live, req); return err },
					func() error { _, err := tb.app.PlaceOrder(tb.ctx, idempotency.Claim{}, tb.live, req); return err },
					func() error { _, err := app.PlaceOrderWithEmptyEvent(tb.ctx, tb.app, tb.live, req); return err },
				})
			})
			b.Run("answer", func(b *testing.B) {
				tb := setup(b, engine)
				req := tb.benchOrder(b)
				answer := func(v app.OrderJSON, err error) error {
					if err == nil {
						err = writeAnswer(v)
					}
					return err
				}
				measureEvents(b, [3]func() error{
					func() error { return answer(app.PlaceOrderResponseWithoutEvent(tb.ctx, tb.app, tb.live, req, 9)) },
					func() error { return answer(tb.app.PlaceOrderResponse(tb.ctx, idempotency.Claim{}, tb.live, req, 9)) },
					func() error { return answer(app.PlaceOrderResponseWithEmptyEvent(tb.ctx, tb.app, tb.live, req, 9)) },
				})
			})
		})
	}
}

// benchOrder prepares SQLite's hot statements as farebox serve does (the
// usage ledger; the event insert is one of them) and returns the order
// the benchmarks place.
func (tb *testBundle) benchOrder(b *testing.B) app.OrderRequest {
	tb.store.NewLedger(store.LedgerCommitted, nil)
	return app.OrderRequest{ProductIDs: []string{tb.product(b, singleBerlin).ID, tb.product(b, monthly).ID}}
}

// writeAnswer encodes v as httpapi's writeJSON does: its bytes when it
// comes encoded, else through json.Encoder without HTML escaping.
func writeAnswer(v app.OrderJSON) error {
	if e, ok := any(v).(interface{ Encoded() []byte }); ok && e.Encoded() != nil {
		_, err := io.Discard.Write(e.Encoded())
		return err
	}
	enc := json.NewEncoder(io.Discard)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// measureEvents runs place (the baseline, with the event, with the empty
// event) in rotation and reports their medians (BenchmarkPlaceOrderEvents).
func measureEvents(b *testing.B, place [3]func() error) {
	var took [3][]time.Duration
	i := 0
	for b.Loop() {
		for k := range 3 {
			side := (i + k) % 3
			began := time.Now()
			if err := place[side](); err != nil {
				b.Fatal(err)
			}
			took[side] = append(took[side], time.Since(began))
		}
		i++
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2])
	}
	base, ev, empty := median(took[0]), median(took[1]), median(took[2])
	b.ReportMetric(base, "baseline-ns/order")
	b.ReportMetric(ev, "events-ns/order")
	b.ReportMetric(100*(ev-base)/base, "overhead-%")
	b.ReportMetric(100*(empty-base)/base, "empty-event-%")
}

// BenchmarkPlaceOrderEventsParallel is the throughput view: 8 goroutines
// per CPU place orders of one account at once, without the event
// (baseline) and with it, as sub-benchmarks (run with -count to interleave
// them). On PostgreSQL the account's sequence row is held from the event
// insert to the commit, so this shows what that serialisation costs.
//
//	go test ./internal/app -run '^$' -bench PlaceOrderEventsParallel -benchtime 2000x -count 3
func BenchmarkPlaceOrderEventsParallel(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			tb := setup(b, engine)
			req := tb.benchOrder(b)
			for _, c := range []struct {
				name  string
				place func() error
			}{
				{"baseline", func() error { _, err := app.PlaceOrderWithoutEvent(tb.ctx, tb.app, tb.live, req); return err }},
				{"events", func() error { _, err := tb.app.PlaceOrder(tb.ctx, idempotency.Claim{}, tb.live, req); return err }},
			} {
				b.Run(c.name, func(b *testing.B) {
					b.SetParallelism(8)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := c.place(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				})
			}
		})
	}
}
