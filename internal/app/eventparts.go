package app

import (
	"github.com/farebox/farebox/internal/app/products"
)

// The recording side of the shared parts of event objects (docs/events.md,
// "Storage"): each product and area JSON of the loaded catalog is stored
// once (products.Service does so when it loads a catalog version:
// products.Parts), and an event's object refers to it; package events puts
// the parts back when events are read (events.Service.Expand).

// refer puts the placeholders of ps in place of the products and areas of
// an event object (an Order, Coupon or Ticket view) before it is
// marshalled (products.EmbeddedProduct). A product or area not among the
// parts (none loaded) stays as it is.
func refer(ps products.Parts, obj any) any {
	switch v := obj.(type) {
	case OrderJSON:
		cs := make([]CouponJSON, len(v.Coupons))
		for i, c := range v.Coupons {
			c.Product, c.Area = ps.ReferProduct(c.Product), ps.ReferArea(c.Area)
			cs[i] = c
		}
		v.Coupons = cs
		return v
	case CouponJSON:
		v.Product, v.Area = ps.ReferProduct(v.Product), ps.ReferArea(v.Area)
		return v
	case ticketJSON:
		v.Product, v.Area = ps.ReferProduct(v.Product), ps.ReferArea(v.Area)
		return v
	}
	return obj
}
