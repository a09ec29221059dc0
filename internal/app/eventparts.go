package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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
// holds {"<part>":"<hash>"} in its place; listing puts the bytes back.
// The object a partner reads is byte for byte the one the change produced.

// partMarker begins a placeholder. json.Marshal never writes a literal "<"
// (it escapes it as \u003c, also inside the raw JSON a partner sent as
// tariff settings or identification medium), so no marshalled object
// contains the marker by itself.
var partMarker = []byte(`{"<part>":"`)

const partHashLen = products.PartHashLen

// eventParts are the stored parts of the loaded catalog (products.Parts).
type eventParts products.Parts

// partRef is a shared part in an event's stored object, so the catalog
// object it stands for is never marshalled for an event. json.Marshal
// escapes the "<" of partMarker in a Marshaler's output too, so a partRef
// marshals under a key no one else can write, partKey (random per
// process, never stored or shown), which withMarkers then turns into
// partMarker.
type partRef string

var partKey = func() []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("app: no randomness for the event part key: " + err.Error())
	}
	return []byte(`{"` + hex.EncodeToString(b) + `":"`)
}()

func (r partRef) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(partKey)+len(r)+2)
	b = append(b, partKey...)
	b = append(b, r...)
	return append(b, `"}`...), nil
}

// withMarkers turns the partRefs of a marshalled event object into
// placeholders.
func withMarkers(raw []byte) []byte {
	if !bytes.Contains(raw, partKey) {
		return raw
	}
	return bytes.ReplaceAll(raw, partKey, partMarker)
}

// refer puts the placeholders of ps in place of the products and areas of
// an event object (an Order, Coupon or Ticket view) before it is
// marshalled. Marshalling them (their schemas and polygons are most of an
// order's JSON) and finding them again in the bytes was most of the CPU an
// event cost (docs/events.md, "Cost"). A product or area not among the
// parts (none loaded) stays as it is.
func (ps eventParts) refer(obj any) any {
	switch v := obj.(type) {
	case OrderJSON:
		cs := make([]CouponJSON, len(v.Coupons))
		for i, c := range v.Coupons {
			c.Product, c.Area = ps.ref(c.Product), ps.ref(c.Area)
			cs[i] = c
		}
		v.Coupons = cs
		return v
	case CouponJSON:
		v.Product, v.Area = ps.ref(v.Product), ps.ref(v.Area)
		return v
	case ticketJSON:
		v.Product, v.Area = ps.ref(v.Product), ps.ref(v.Area)
		return v
	}
	return obj
}

// ref is the placeholder of a product or area view (an area has two
// shapes: the coupon's, then the ticket's with geojson), or v itself.
func (ps eventParts) ref(v any) any {
	switch o := v.(type) {
	case products.ProductJSON:
		if p := ps[o.ID]; len(p) > 0 {
			return partRef(p[0])
		}
	case products.AreaJSON:
		shape := 0
		if o.GeoJSON != nil {
			shape = 1
		}
		if p := ps[o.ID]; len(p) > shape {
			return partRef(p[shape])
		}
	}
	return v
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
