package app

import (
	"context"

	"github.com/farebox/farebox/internal/app/events"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
)

// The recording side of the shared parts of event objects (docs/events.md,
// "Storage"; package events keeps the placeholders and puts the parts back
// when events are read): each product and area JSON of the loaded catalog
// is stored once, and an event's object refers to it.

// eventParts are the parts of one catalog version (events.Parts).
type eventParts = events.Parts

// catalogParts marshals the products and areas of ix as the views show
// them and stores them (outside any change's transaction, once per
// catalog version and instance).
func (a *App) catalogParts(ctx context.Context, ix *catalog.Index) (eventParts, error) {
	var srcs []events.PartSource
	for _, p := range ix.File().Products {
		pr, _ := ix.Product(p.ID)
		srcs = append(srcs, events.PartSource{ID: pr.ID, View: productView(pr)})
	}
	for _, ar := range ix.File().Areas {
		srcs = append(srcs, events.PartSource{ID: ar.ID, View: areaView(&ar, false)}, events.PartSource{ID: ar.ID, View: areaView(&ar, true)})
	}
	out, all, err := events.NewParts(srcs)
	if err != nil {
		return nil, err
	}
	err = a.store.Write(ctx, func(q store.Q) error { return q.PutEventParts(ctx, all) })
	return out, err
}

// refer puts the placeholders of ps in place of the products and areas of
// an event object (an Order, Coupon or Ticket view) before it is
// marshalled. Marshalling them (their schemas and polygons are most of an
// order's JSON) and finding them again in the bytes was most of the CPU an
// event cost (docs/events.md, "Cost"). A product or area not among the
// parts (none loaded) stays as it is.
func refer(ps eventParts, obj any) any {
	switch v := obj.(type) {
	case OrderJSON:
		cs := make([]CouponJSON, len(v.Coupons))
		for i, c := range v.Coupons {
			c.Product, c.Area = ref(ps, c.Product), ref(ps, c.Area)
			cs[i] = c
		}
		v.Coupons = cs
		return v
	case CouponJSON:
		v.Product, v.Area = ref(ps, v.Product), ref(ps, v.Area)
		return v
	case ticketJSON:
		v.Product, v.Area = ref(ps, v.Product), ref(ps, v.Area)
		return v
	}
	return obj
}

// ref is the placeholder of a product or area view (an area has two
// shapes: the coupon's, then the ticket's with geojson), or v itself.
func ref(ps eventParts, v any) any {
	switch o := v.(type) {
	case productJSON:
		if r, ok := ps.Ref(o.ID, 0); ok {
			return r
		}
	case areaJSON:
		shape := 0
		if o.GeoJSON != nil {
			shape = 1
		}
		if r, ok := ps.Ref(o.ID, shape); ok {
			return r
		}
	}
	return v
}
