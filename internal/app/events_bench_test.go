package app_test

import (
	"testing"

	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/store/storetest"
)

// BenchmarkPlaceOrderEvents measures what the order.created event costs
// ordering (issue 17: at most 5 %): the same order (a single ticket and the
// monthly subscription) placed with the event ("events") and by an App
// whose PlaceOrder skips it ("baseline"), on both engines, in one run and
// on one database, so both see the same table sizes. Compare ns/op:
//
//	go test ./internal/app -run '^$' -bench PlaceOrderEvents -benchtime 2000x -count 3
func BenchmarkPlaceOrderEvents(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			tb := setup(b, engine)
			req := app.OrderRequest{ProductIDs: []string{tb.product(b, singleBerlin).ID, tb.product(b, monthly).ID}}
			for _, c := range []struct {
				name string
				a    *app.App
			}{{"baseline", app.WithoutOrderEvents(tb.app)}, {"events", tb.app}} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						if _, err := c.a.PlaceOrder(tb.ctx, tb.live, req); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
