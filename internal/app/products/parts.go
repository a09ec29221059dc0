package products

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
)

// Parts are the products and areas of one catalog version as the views
// show them, each stored once by its hash so that an event's stored object
// can refer to it instead of holding it (docs/events.md, "Storage"; the
// application's eventparts.go puts the references in and the bytes back).
// Parts holds, by product or area id, the hashes of its stored views (an
// area has two shapes: the coupon's, then the ticket's with geojson).
type Parts map[string][]string

// PartHashLen is the length of a part's hash (hex).
const PartHashLen = 32

// Parts returns the parts of the loaded catalog (nil before Load).
func (s *Service) Parts() Parts {
	if st := s.loaded.Load(); st != nil {
		return st.parts
	}
	return nil
}

// storeParts marshals the products and areas of ix as the views show
// them and stores them (outside any change's transaction, once per
// catalog version and instance).
func (s *Service) storeParts(ctx context.Context, ix *catalog.Index) (Parts, error) {
	out := Parts{}
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
		return nil
	}
	for _, p := range ix.File().Products {
		pr, _ := ix.Product(p.ID)
		if err := add(pr.ID, ProductView(pr)); err != nil {
			return nil, err
		}
	}
	for _, ar := range ix.File().Areas {
		if err := add(ar.ID, AreaView(&ar, false)); err != nil {
			return nil, err
		}
		if err := add(ar.ID, AreaView(&ar, true)); err != nil {
			return nil, err
		}
	}
	err := s.DB.Write(ctx, func(q Queries) error { return q.PutEventParts(ctx, all) })
	return out, err
}
