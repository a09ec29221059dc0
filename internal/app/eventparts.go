package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
)

// Shared parts of event objects (docs/events.md, "Storage"). An Order,
// Coupon or Ticket shows its product and area in full (about 7 kB for an
// order of two coupons, most of it the area's polygon and the product's
// schemas), and these are the same in every event until the catalog
// changes. So each product and area JSON of the loaded catalog is stored
// once in event_parts, keyed by its hash, and an event's stored object
// holds {"<part>":"<hash>"} in its place; listing puts the bytes back.
// The object a partner reads is byte for byte the one the change produced.

// partMarker begins a placeholder. json.Marshal never writes a literal "<"
// (it escapes it as \u003c, also inside the raw JSON a partner sent as
// tariff settings or identification medium), so no marshalled object
// contains the marker by itself.
var partMarker = []byte(`{"<part>":"`)

const partHashLen = 32

// eventParts are the parts of one catalog version, by product or area id
// (an area has two shapes: the coupon's and the ticket's).
type eventParts map[string][]part

type part struct {
	hash string
	body []byte
}

// catalogParts marshals the products and areas of ix as the views show
// them and stores them (outside any change's transaction, once per
// catalog version and instance).
func (a *App) catalogParts(ctx context.Context, ix *catalog.Index) (eventParts, error) {
	out := eventParts{}
	all := map[string][]byte{}
	add := func(id string, v any) error {
		body, err := json.Marshal(v)
		if err != nil {
			return apperr.Wrap("app.catalogParts", err)
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])[:partHashLen]
		out[id] = append(out[id], part{hash: h, body: body})
		all[h] = body
		return nil
	}
	for _, p := range ix.File().Products {
		pr, _ := ix.Product(p.ID)
		if err := add(pr.ID, productView(pr)); err != nil {
			return nil, err
		}
	}
	for _, ar := range ix.File().Areas {
		if err := add(ar.ID, areaView(&ar, false)); err != nil {
			return nil, err
		}
		if err := add(ar.ID, areaView(&ar, true)); err != nil {
			return nil, err
		}
	}
	err := a.store.Write(ctx, func(q store.Q) error { return q.PutEventParts(ctx, all) })
	return out, err
}

// compactParts replaces the catalog objects in raw (each right after a
// "product": or "area": key, recognised by its id) by placeholders.
func (ps eventParts) compact(raw []byte) []byte {
	if len(ps) == 0 {
		return raw
	}
	var out []byte
	rest := raw
	for {
		i, key := nextPartKey(rest)
		if i < 0 {
			break
		}
		start := i + len(key) - len(`{"id":"`)
		idStart := i + len(key)
		idEnd := bytes.IndexByte(rest[idStart:], '"')
		if idEnd < 0 {
			break
		}
		replaced := false
		for _, p := range ps[string(rest[idStart:idStart+idEnd])] {
			if bytes.HasPrefix(rest[start:], p.body) {
				out = append(out, rest[:start]...)
				out = append(out, partMarker...)
				out = append(out, p.hash...)
				out = append(out, `"}`...)
				rest = rest[start+len(p.body):]
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, rest[:idStart]...)
			rest = rest[idStart:]
		}
	}
	if out == nil {
		return raw
	}
	return append(out, rest...)
}

var partKeys = [][]byte{[]byte(`"product":{"id":"`), []byte(`"area":{"id":"`)}

// nextPartKey is the first product or area key in b and its text.
func nextPartKey(b []byte) (int, []byte) {
	best, key := -1, []byte(nil)
	for _, k := range partKeys {
		if i := bytes.Index(b, k); i >= 0 && (best < 0 || i < best) {
			best, key = i, k
		}
	}
	return best, key
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
