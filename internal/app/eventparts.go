package app

import (
	"bytes"
	"context"
	"sync"

	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/apperr"
)

// Shared parts of event objects (docs/events.md, "Storage"). An Order,
// Coupon or Ticket shows its product and area in full (about 7 kB for an
// order of two coupons, most of it the area's polygon and the product's
// schemas), and these are the same in every event until the catalog
// changes. So each product and area JSON of the loaded catalog is stored
// once in event_parts, keyed by its hash (products.Service does so when it
// loads a catalog version: products.Parts), and an event's stored object
// holds {"<part>":"<hash>"} in its place (products.PartMarker); listing
// puts the bytes back.
// The object a partner reads is byte for byte the one the change produced.

var partMarker = []byte(products.PartMarker)

const partHashLen = products.PartHashLen

// refer puts the placeholders of ps in place of the products and areas of
// an event object (an Order, Coupon or Ticket view) before it is
// marshalled (products.Embedded). A product or area not among the parts
// (none loaded) stays as it is.
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

// partCache holds part bodies by hash (they never change).
type partCache struct{ m sync.Map }

// expand puts the parts back into stored event objects.
func (a *App) expandParts(ctx context.Context, objs [][]byte) error {
	var missing []string
	seen := map[string]bool{}
	for _, o := range objs {
		for rest := o; ; {
			i := bytes.Index(rest, partMarker)
			if i < 0 || len(rest) < i+len(partMarker)+partHashLen+2 {
				break
			}
			h := string(rest[i+len(partMarker) : i+len(partMarker)+partHashLen])
			if _, ok := a.parts.m.Load(h); !ok && !seen[h] {
				seen[h] = true
				missing = append(missing, h)
			}
			rest = rest[i+len(partMarker):]
		}
	}
	if len(missing) > 0 {
		got, err := a.store.Read().EventParts(ctx, missing)
		if err != nil {
			return err
		}
		for h, body := range got {
			a.parts.m.Store(h, body)
		}
	}
	for n, o := range objs {
		if !bytes.Contains(o, partMarker) {
			continue
		}
		var out []byte
		rest := o
		for {
			i := bytes.Index(rest, partMarker)
			if i < 0 {
				break
			}
			end := i + len(partMarker) + partHashLen + 2
			if end > len(rest) {
				break
			}
			body, ok := a.parts.m.Load(string(rest[i+len(partMarker) : end-2]))
			if !ok {
				return apperr.E("app.expandParts", apperr.Internal, CodeEventPartMissing, "a stored event names a part that is not stored")
			}
			out = append(out, rest[:i]...)
			out = append(out, body.([]byte)...)
			rest = rest[end:]
		}
		objs[n] = append(out, rest...)
	}
	return nil
}
