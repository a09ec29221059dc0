package products

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
)

// Parts are the products and areas of one catalog version as the views
// show them, each stored once by its hash so that an event's stored object
// can refer to it instead of holding it (docs/events.md, "Storage"; the
// application's eventparts.go puts the references in with ReferProduct
// and ReferArea, and the bytes back when it lists events). By product or
// area id, the hashes of its stored views (an area has two shapes: the
// coupon's, then the ticket's with geojson).
type Parts map[string][]string

// PartHashLen is the length of a part's hash (hex).
const PartHashLen = 32

// PartMarker begins the placeholder of a part in an event's stored object:
// {"<part>":"<hash>"}. json.Marshal never writes a literal "<" (it escapes
// it as \u003c, also inside the raw JSON a partner sent as tariff settings
// or identification medium), so no marshalled object contains the marker
// by itself.
const PartMarker = `{"<part>":"`

// EmbeddedProduct is the product inside another object's view (a
// coupon's, a ticket's): a ProductJSON, or, once Parts.ReferProduct made it
// one, the reference to its stored part, so that an event's object never
// marshals the catalog object it shows (its schemas and polygon are most
// of an order's JSON; marshalling them and finding them again in the bytes
// was most of the CPU an event cost: docs/events.md, "Cost"). Only this
// package's two types implement it. An interface rather than a struct with
// a MarshalJSON: the view marshals as the plain struct it is, where a
// Marshaler's output would be compacted a second time.
type EmbeddedProduct interface{ embeddedProduct() }

// EmbeddedArea is the area inside another object's view: an AreaJSON, or
// the reference to its stored part (Parts.ReferArea; see EmbeddedProduct).
type EmbeddedArea interface{ embeddedArea() }

func (ProductJSON) embeddedProduct() {}
func (AreaJSON) embeddedArea()       {}

// partRef is the reference to a stored part: the part's hash.
type partRef string

func (partRef) embeddedProduct() {}
func (partRef) embeddedArea()    {}

// MarshalJSON writes the reference under partKey.
func (r partRef) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(partKey)+len(r)+2)
	b = append(b, partKey...)
	b = append(b, r...)
	return append(b, `"}`...), nil
}

// partKey is what a reference marshals under. json.Marshal escapes the "<"
// of PartMarker in a Marshaler's output too, so a reference marshals under
// a key no one else can write (random per process, never stored or shown),
// which WithMarkers then turns into PartMarker.
var partKey = func() []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("products: no randomness for the event part key: " + err.Error())
	}
	return []byte(`{"` + hex.EncodeToString(b) + `":"`)
}()

// WithMarkers turns the references of a marshalled object into
// placeholders (PartMarker).
func WithMarkers(raw []byte) []byte {
	if !bytes.Contains(raw, partKey) {
		return raw
	}
	return bytes.ReplaceAll(raw, partKey, []byte(PartMarker))
}

// ReferProduct is p as the reference to its stored part, or p itself when
// ps holds none (no catalog loaded).
func (ps Parts) ReferProduct(p EmbeddedProduct) EmbeddedProduct {
	if v, ok := p.(ProductJSON); ok {
		if h := ps[v.ID]; len(h) > 0 {
			return partRef(h[0])
		}
	}
	return p
}

// ReferArea is a as the reference to its stored part (the coupon's shape,
// or the ticket's with geojson), or a itself when ps holds none.
func (ps Parts) ReferArea(a EmbeddedArea) EmbeddedArea {
	if v, ok := a.(AreaJSON); ok {
		shape := 0
		if v.GeoJSON != nil {
			shape = 1
		}
		if h := ps[v.ID]; len(h) > shape {
			return partRef(h[shape])
		}
	}
	return a
}

// Parts returns the parts of the loaded catalog (nil before Load).
func (s *Service) Parts() Parts {
	if st := s.loaded.Load(); st != nil {
		return st.parts
	}
	return nil
}

// PartAnswers are the parts by hash as an answer shows them: encoded
// as the transport encodes an answer (HTML characters not escaped), where
// a stored part is json.Marshal's bytes. The order POST's answer is its
// order.created object with these in place of the references
// (app.PlaceOrderResponse).
type PartAnswers map[string][]byte

// Answers returns the parts of the loaded catalog as answers show them
// (nil before Load).
func (s *Service) Answers() PartAnswers {
	if st := s.loaded.Load(); st != nil {
		return st.answers
	}
	return nil
}

// storeParts marshals the products and areas of ix as the views show
// them and stores them (outside any change's transaction, once per
// catalog version and instance); it returns them also as answers show
// them.
func (s *Service) storeParts(ctx context.Context, ix *catalog.Index) (Parts, PartAnswers, error) {
	out, answers := Parts{}, PartAnswers{}
	all := map[string][]byte{}
	add := func(id string, v any) error {
		body, err := json.Marshal(v)
		if err != nil {
			return apperr.Wrap("products.storeParts", err)
		}
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])[:PartHashLen]
		out[id] = append(out[id], h)
		all[h] = body
		var answer bytes.Buffer
		enc := json.NewEncoder(&answer)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return apperr.Wrap("products.storeParts", err)
		}
		answers[h] = bytes.TrimSuffix(answer.Bytes(), []byte("\n"))
		return nil
	}
	for _, p := range ix.File().Products {
		pr, _ := ix.Product(p.ID)
		if err := add(pr.ID, ProductView(pr)); err != nil {
			return nil, nil, err
		}
	}
	for _, ar := range ix.File().Areas {
		if err := add(ar.ID, AreaView(&ar, false)); err != nil {
			return nil, nil, err
		}
		if err := add(ar.ID, AreaView(&ar, true)); err != nil {
			return nil, nil, err
		}
	}
	err := s.DB.Write(ctx, func(q Queries) error { return q.PutEventParts(ctx, all) })
	return out, answers, err
}

// AppendEmbedded appends v (a product or area of a view, or the
// reference Parts.ReferProduct or ReferArea made of it) as json.Marshal
// writes it inside an event's object after WithMarkers: a reference as
// its placeholder, without marshalling under the process's key first.
func AppendEmbedded(b []byte, v any) ([]byte, error) {
	if r, ok := v.(partRef); ok {
		b = append(b, PartMarker...)
		b = append(b, r...)
		return append(b, `"}`...), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, apperr.Wrap("products.AppendEmbedded", err)
	}
	return append(b, WithMarkers(raw)...), nil
}
