// Package products is the catalog the instance sells (docs/catalog.md):
// loading it from the database (the built-in default on a fresh install),
// refreshing it when another instance or the CLI imported a new version,
// importing a catalog file, granting restricted products, the product
// search and the products' and areas' answer shapes. The application
// (ordering, activation, the coupon page) and the capabilities read the
// loaded catalog through Service.Catalog; it reaches the database only
// through Queries.
package products

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/schema"
)

// Queries are the store methods the catalog uses (store.Q implements
// them; the wiring passes store.NewView[Queries]).
type Queries interface {
	CatalogVersion(ctx context.Context) (int64, error)
	CatalogUpdatedAt(ctx context.Context) (int64, time.Time, error)
	LoadCatalog(ctx context.Context) (*catalog.File, int64, error)
	ProductIDs(ctx context.Context) (map[string]bool, error)
	UpsertCatalog(ctx context.Context, f *catalog.File, at time.Time) error
	Account(ctx context.Context, id string) (account.Account, error)
	GrantProduct(ctx context.Context, accountID, productID string, at time.Time) error
	Grants(ctx context.Context, accountID string) (map[string]bool, error)
	PutEventParts(ctx context.Context, parts map[string][]byte) error
}

// DB is the database as the catalog sees it (store.View).
type DB = kit.DB[Queries]

// Service is the instance's catalog.
type Service struct {
	kit.Base[DB]
	loaded  atomic.Pointer[state] // readers never lock
	schemas schema.Cache
}

// state is the loaded catalog index with the version it was read at.
type state struct {
	ix      *catalog.Index
	version int64
	updated time.Time // when that version was imported
	parts   Parts     // its products and areas as stored event parts
	answers PartAnswers
}

// New returns the catalog over db; c is the service clock (nil: the
// system clock), ids the id prefix of the default catalog's products
// ("": farebox). It holds no catalog until Load.
func New(db DB, c clock.Clock, ids ident.Prefix) *Service {
	return &Service{Base: kit.NewBase(db, c, ids)}
}

// Catalog returns the current in-memory catalog index (never nil after
// Load; an empty index before).
func (s *Service) Catalog() *catalog.Index {
	if st := s.loaded.Load(); st != nil {
		return st.ix
	}
	ix, _ := catalog.NewIndex(&catalog.File{Version: catalog.FormatVersion})
	return ix
}

// Loaded is the catalog an instance serves with its version and the time
// that version was imported (the fare exports' ETag and Last-Modified).
type Loaded struct {
	Catalog   *catalog.Index
	Version   int64
	UpdatedAt time.Time
}

// Loaded returns the current catalog with its version (0 and an empty
// index before Load).
func (s *Service) Loaded() Loaded {
	if st := s.loaded.Load(); st != nil {
		return Loaded{Catalog: st.ix, Version: st.version, UpdatedAt: st.updated}
	}
	return Loaded{Catalog: s.Catalog()}
}

// Schemas is the cache of the products' compiled schemas, warmed by
// Import (activation and the coupon page validate with it).
func (s *Service) Schemas() *schema.Cache { return &s.schemas }

// Load loads the catalog from the database, importing the built-in
// default first when the database has none (a fresh install).
func (s *Service) Load(ctx context.Context) error {
	v, err := s.DB.Read().CatalogVersion(ctx)
	if err != nil {
		return err
	}
	if v == 0 {
		f, err := catalog.Default(string(s.IDs))
		if err != nil {
			return apperr.Wrap("products.Load", err)
		}
		if err := s.Import(ctx, f); err != nil {
			return err
		}
	}
	return s.Refresh(ctx)
}

// Refresh reloads the index when another instance (or the CLI) imported
// a new catalog version. Cheap when nothing changed.
func (s *Service) Refresh(ctx context.Context) error {
	v, err := s.DB.Read().CatalogVersion(ctx)
	if err != nil {
		return err
	}
	if cur := s.loaded.Load(); cur != nil && cur.version == v {
		return nil
	}
	f, v, err := s.DB.Read().LoadCatalog(ctx)
	if err != nil {
		return err
	}
	ix, err := catalog.NewIndex(f)
	if err != nil {
		return apperr.Wrap("products.Refresh", err)
	}
	parts, answers, err := s.storeParts(ctx, ix)
	if err != nil {
		return err
	}
	uv, updated, err := s.DB.Read().CatalogUpdatedAt(ctx)
	if err != nil {
		return err
	}
	if uv != v {
		// Another import came in between: the next refresh loads it; until
		// then say "now", never a time older than what is served.
		updated = s.Clock.Now().UTC()
	}
	s.loaded.Store(&state{ix: ix, version: v, updated: updated, parts: parts, answers: answers})
	return nil
}

// Import validates the whole file and then writes it in one transaction;
// an invalid file changes nothing and the error lists every problem with
// its JSON path.
func (s *Service) Import(ctx context.Context, f *catalog.File) error {
	existing, err := s.DB.Read().ProductIDs(ctx)
	if err != nil {
		return err
	}
	if err := catalog.Validate(f, string(s.IDs), existing); err != nil {
		return err
	}
	if err := s.compileSchemas(f); err != nil {
		return err
	}
	if err := s.DB.Write(ctx, func(q Queries) error { return q.UpsertCatalog(ctx, f, s.Clock.Now()) }); err != nil {
		return err
	}
	return s.Refresh(ctx)
}

// Grant lets an account order a restricted product (the job ticket).
func (s *Service) Grant(ctx context.Context, claim idempotency.Claim, accountID, productID string) error {
	p, ok := s.Catalog().Product(productID)
	if !ok {
		return apperr.NotFoundf("products.Grant", CodeProductNotFound)
	}
	if !p.Restricted {
		return apperr.E("products.Grant", apperr.Unprocessable, CodeProductNotRestricted, "the product is sold to every account; no grant needed")
	}
	return s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		if _, err := q.Account(ctx, accountID); err != nil {
			return err
		}
		return q.GrantProduct(ctx, accountID, productID, s.Clock.Now())
	})
}

// Rect is the bounding box of a product search, in degrees.
type Rect struct{ MinLon, MinLat, MaxLon, MaxLat float64 }

// SearchByCityName returns the products sold in the area(s) whose city
// names match name (case, accents, ß/ss and ü/ue folded). No match is an
// empty list.
func (s *Service) SearchByCityName(ctx context.Context, p account.Principal, name string) ([]*catalog.Product, error) {
	if strings.TrimSpace(name) == "" {
		return nil, apperr.Param("catalog.search", "city_name", "city_name is required")
	}
	return s.search(ctx, p, s.Catalog().ByCityName(name))
}

// SearchByCoordinates returns the products of the area(s) containing the point.
func (s *Service) SearchByCoordinates(ctx context.Context, p account.Principal, lat, lon float64) ([]*catalog.Product, error) {
	return s.search(ctx, p, s.Catalog().ByPoint(lat, lon))
}

// SearchByBoundingBox returns the products of the areas intersecting the box.
func (s *Service) SearchByBoundingBox(ctx context.Context, p account.Principal, box Rect) ([]*catalog.Product, error) {
	if box.MinLat > box.MaxLat || box.MinLon > box.MaxLon {
		return nil, apperr.Param("catalog.search", "min_latitude", "the box's minimum must not exceed its maximum")
	}
	if math.Abs(box.MaxLat-box.MinLat) > 10 || math.Abs(box.MaxLon-box.MinLon) > 15 {
		return nil, apperr.Param("catalog.search", "max_latitude", "the box may span at most 10° of latitude and 15° of longitude")
	}
	return s.search(ctx, p, s.Catalog().ByBox(catalog.Rect(box)))
}

func (s *Service) search(ctx context.Context, p account.Principal, areas []*catalog.AreaEntry) ([]*catalog.Product, error) {
	if len(areas) == 0 {
		return []*catalog.Product{}, nil
	}
	g, err := s.DB.Read().Grants(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	return s.Catalog().Products(areas, s.Clock.Now(), func(id string) bool { return g[id] }), nil
}

// FirstProduct is the first product the caller can order, as a search
// lists it (the first local area's own products, its cheapest single
// ticket first, then the national ones; the national area alone when the
// catalog has no local one): the dashboard's example order. ok is false
// when nothing is on sale to the caller.
func (s *Service) FirstProduct(ctx context.Context, p account.Principal) (first *catalog.Product, ok bool, err error) {
	areas := s.Catalog().Local()
	if n := s.Catalog().National(); len(areas) == 0 && n != nil {
		areas = []*catalog.AreaEntry{n}
	}
	ps, err := s.search(ctx, p, areas)
	if err != nil || len(ps) == 0 {
		return nil, false, err
	}
	return ps[0], true, nil
}

// Product returns a product by id (no key needed: the SDKs fetch it).
func (s *Service) Product(id string) (*catalog.Product, error) {
	p, ok := s.Catalog().Product(id)
	if !ok {
		return nil, apperr.NotFoundf("products.Product", CodeProductNotFound)
	}
	return p, nil
}

// Area returns an area by id.
func (s *Service) Area(id string) (*catalog.AreaEntry, error) {
	ar, ok := s.Catalog().Area(id)
	if !ok {
		return nil, apperr.NotFoundf("products.Area", CodeAreaNotFound)
	}
	return ar, nil
}

// compileSchemas checks that every product's schemas compile as draft-04
// (and warms the cache activation uses).
func (s *Service) compileSchemas(f *catalog.File) error {
	var probs []apperr.FieldError
	for i, p := range f.Products {
		if _, err := s.schemas.Get(p.IdentificationMediumSchema); err != nil {
			probs = append(probs, apperr.FieldError{Field: fmt.Sprintf("/products/%d/identification_medium_schema", i), Message: err.Error()})
		}
		if p.HasTariffSettings() {
			if _, err := s.schemas.Get(p.TariffSettingsSchema); err != nil {
				probs = append(probs, apperr.FieldError{Field: fmt.Sprintf("/products/%d/tariff_settings_schema", i), Message: err.Error()})
			}
		}
	}
	if len(probs) > 0 {
		return apperr.E("products.Import", apperr.Unprocessable, catalog.CodeCatalogInvalid,
			fmt.Sprintf("catalog has %d invalid schema(s); nothing was imported", len(probs))).WithDetails(probs...)
	}
	return nil
}
