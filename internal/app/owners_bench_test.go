package app_test

import (
	"context"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/store/storetest"
)

// BenchmarkCapabilityOwner is what the pipeline adds to the first keyless
// request naming a ticket (later ones hit the server's owner cache): one
// indexed point read, on each engine.
func BenchmarkCapabilityOwner(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(string(engine), func(b *testing.B) {
			e := apitest.New(b, engine, apitest.Options{})
			var p struct {
				Coupons []struct {
					ID string `json:"id"`
				} `json:"coupons"`
			}
			var search []map[string]any
			e.Must(200, apitest.Req{Method: "GET", Path: "/v2/products/search_by_city_name.json?city_name=Berlin", Key: e.LiveKey}).JSON(b, &search)
			e.Must(201, apitest.Req{Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey,
				Body: map[string]any{"product_ids": []any{search[0]["id"]}}}).JSON(b, &p)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, found, err := e.App.CapabilityOwner(ctx, app.CapabilityCoupon, p.Coupons[0].ID, ""); err != nil || !found {
					b.Fatal(found, err)
				}
			}
		})
	}
}
