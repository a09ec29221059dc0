package events

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

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
// produced. Whoever records events (internal/app) builds the Parts of its
// catalog with NewParts and puts Refs in place of the parts.

// partMarker begins a placeholder. json.Marshal never writes a literal "<"
// (it escapes it as \u003c, also inside the raw JSON a partner sent as
// tariff settings or identification medium), so no marshalled object
// contains the marker by itself.
var partMarker = []byte(`{"<part>":"`)

const partHashLen = 32

// Parts are the hashes of the parts of one catalog version, by product or
// area id (an area has two shapes: the coupon's and the ticket's).
type Parts map[string][]string

// PartSource is one object to store as a part: the product or area id and
// its view as event objects show it. Several sources of one id are its
// shapes, in order.
type PartSource struct {
	ID   string
	View any
}

// NewParts marshals the sources and returns them as Parts with the bodies
// by hash that the caller stores (store.Q.PutEventParts), outside any
// change's transaction, once per catalog version and instance.
func NewParts(srcs []PartSource) (Parts, map[string][]byte, error) {
	out := Parts{}
	all := map[string][]byte{}
	for _, s := range srcs {
		body, err := json.Marshal(s.View)
		if err != nil {
			return nil, nil, apperr.Wrap("events.NewParts", err)
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])[:partHashLen]
		out[s.ID] = append(out[s.ID], h)
		all[h] = body
	}
	return out, all, nil
}

// Ref is the placeholder of shape n (0: the first) of part id, false when
// there is none (no catalog loaded, or an object not among the parts).
func (ps Parts) Ref(id string, n int) (Ref, bool) {
	if p := ps[id]; len(p) > n {
		return Ref(p[n]), true
	}
	return "", false
}

// Ref is a shared part in an event's stored object, so the catalog
// object it stands for is never marshalled for an event. json.Marshal
// escapes the "<" of partMarker in a Marshaler's output too, so a Ref
// marshals under a key no one else can write, partKey (random per
// process, never stored or shown), which WithMarkers then turns into
// partMarker.
type Ref string

var partKey = func() []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("events: no randomness for the event part key: " + err.Error())
	}
	return []byte(`{"` + hex.EncodeToString(b) + `":"`)
}()

// MarshalJSON writes the placeholder under this process's partKey.
func (r Ref) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(partKey)+len(r)+2)
	b = append(b, partKey...)
	b = append(b, r...)
	return append(b, `"}`...), nil
}

// WithMarkers turns the Refs of a marshalled event object into
// placeholders: what is stored.
func WithMarkers(raw []byte) []byte {
	if !bytes.Contains(raw, partKey) {
		return raw
	}
	return bytes.ReplaceAll(raw, partKey, partMarker)
}

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
