package events

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
// once in event_parts, keyed by its hash, and an event's stored object
// holds {"<part>":"<hash>"} in its place; listing puts the bytes back
// (Expand). The object a partner reads is byte for byte the one the change
// produced. The products service stores the parts of each catalog version
// (products.Parts) and whoever records events (internal/app) puts their
// references in place of the products and areas.

// partMarker begins a placeholder (products.PartMarker), followed by the
// part's hash of partHashLen characters and `"}`.
var partMarker = []byte(products.PartMarker)

const partHashLen = products.PartHashLen

// partCache holds part bodies by hash (they never change).
type partCache struct{ m sync.Map }

// Expand puts the parts back into stored event objects, reading the parts
// this instance has not seen yet in one query.
func (s *Service) Expand(ctx context.Context, objs [][]byte) error {
	if err := s.loadParts(ctx, objs); err != nil {
		return err
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
			body, ok := s.parts.m.Load(string(rest[i+len(partMarker) : end-2]))
			if !ok {
				return apperr.E("events.Expand", apperr.Internal, CodeEventPartMissing, "a stored event names a part that is not stored")
			}
			out = append(out, rest[:i]...)
			out = append(out, body.([]byte)...)
			rest = rest[end:]
		}
		objs[n] = append(out, rest...)
	}
	return nil
}

// loadParts reads into the cache the parts objs name that it lacks.
func (s *Service) loadParts(ctx context.Context, objs [][]byte) error {
	var missing []string
	seen := map[string]bool{}
	for _, o := range objs {
		for rest := o; ; {
			i := bytes.Index(rest, partMarker)
			if i < 0 || len(rest) < i+len(partMarker)+partHashLen+2 {
				break
			}
			h := string(rest[i+len(partMarker) : i+len(partMarker)+partHashLen])
			if _, ok := s.parts.m.Load(h); !ok && !seen[h] {
				seen[h] = true
				missing = append(missing, h)
			}
			rest = rest[i+len(partMarker):]
		}
	}
	if len(missing) == 0 {
		return nil
	}
	got, err := s.DB.Read().EventParts(ctx, missing)
	if err != nil {
		return err
	}
	for h, body := range got {
		s.parts.m.Store(h, body)
	}
	return nil
}
