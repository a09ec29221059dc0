package app

import (
	"context"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"math"
	"strings"
	"sync/atomic"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
)

// catalogState is the loaded catalog index with the version it was read at.
type catalogState struct {
	ix      *catalog.Index
	version int64
	parts   eventParts // its products and areas as stored event parts
}

// catalogPtr holds the current catalog; readers never lock.
type catalogPtr = atomic.Pointer[catalogState]

// Catalog returns the current in-memory catalog index (never nil after
// LoadCatalog; an empty index before).
func (a *App) Catalog() *catalog.Index {
	if st := a.catalog.Load(); st != nil {
		return st.ix
	}
	ix, _ := catalog.NewIndex(&catalog.File{Version: catalog.FormatVersion})
	return ix
}

// LoadCatalog loads the catalog from the database, importing the built-in
// default first when the database has none (a fresh install).
func (a *App) LoadCatalog(ctx context.Context) error {
	v, err := a.store.Read().CatalogVersion(ctx)
	if err != nil {
		return err
	}
	if v == 0 {
		f, err := catalog.Default(string(a.IDs))
		if err != nil {
			return apperr.Wrap("app.LoadCatalog", err)
		}
		if err := a.ImportCatalog(ctx, f); err != nil {
			return err
		}
	}
	return a.RefreshCatalog(ctx)
}

// RefreshCatalog reloads the index when another instance (or the CLI)
// imported a new catalog version. Cheap when nothing changed.
func (a *App) RefreshCatalog(ctx context.Context) error {
	v, err := a.store.Read().CatalogVersion(ctx)
	if err != nil {
		return err
	}
	if cur := a.catalog.Load(); cur != nil && cur.version == v {
		return nil
	}
	f, v, err := a.store.Read().LoadCatalog(ctx)
	if err != nil {
		return err
	}
	ix, err := catalog.NewIndex(f)
	if err != nil {
		return apperr.Wrap("app.RefreshCatalog", err)
	}
	parts, err := a.catalogParts(ctx, ix)
	if err != nil {
		return err
	}
	a.catalog.Store(&catalogState{ix: ix, version: v, parts: parts})
	return nil
}

// ImportCatalog validates the whole file and then writes it in one
// transaction; an invalid file changes nothing and the error lists every
// problem with its JSON path.
func (a *App) ImportCatalog(ctx context.Context, f *catalog.File) error {
	existing, err := a.store.Read().ProductIDs(ctx)
	if err != nil {
		return err
	}
	if err := catalog.Validate(f, string(a.IDs), existing); err != nil {
		return err
	}
	if err := a.compileSchemas(f); err != nil {
		return err
	}
	if err := a.store.Write(ctx, func(q store.Q) error { return q.UpsertCatalog(ctx, f, a.clock.Now()) }); err != nil {
		return err
	}
	return a.RefreshCatalog(ctx)
}

// GrantProduct lets an account order a restricted product (the job ticket).
func (a *App) GrantProduct(ctx context.Context, accountID, productID string) error {
	p, ok := a.Catalog().Product(productID)
	if !ok {
		return apperr.NotFoundf("app.GrantProduct", CodeProductNotFound)
	}
	if !p.Restricted {
		return apperr.E("app.GrantProduct", apperr.Unprocessable, CodeProductNotRestricted, "the product is sold to every account; no grant needed")
	}
	return a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), func(q store.Q) error {
		if _, err := q.Account(ctx, accountID); err != nil {
			return err
		}
		return q.GrantProduct(ctx, accountID, productID, a.clock.Now())
	})
}

// granted returns the caller's restricted-product permission check.
func (a *App) granted(ctx context.Context, p account.Principal) (func(string) bool, error) {
	g, err := a.store.Read().Grants(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	return func(id string) bool { return g[id] }, nil
}

// SearchByCityName returns the products sold in the area(s) whose city
// names match name (case, accents, ß/ss and ü/ue folded). No match is an
// empty list.
func (a *App) SearchByCityName(ctx context.Context, p account.Principal, name string) ([]*catalog.Product, error) {
	if strings.TrimSpace(name) == "" {
		return nil, apperr.Param("catalog.search", "city_name", "city_name is required")
	}
	return a.search(ctx, p, a.Catalog().ByCityName(name))
}

// SearchByCoordinates returns the products of the area(s) containing the point.
func (a *App) SearchByCoordinates(ctx context.Context, p account.Principal, lat, lon float64) ([]*catalog.Product, error) {
	return a.search(ctx, p, a.Catalog().ByPoint(lat, lon))
}

// SearchByBoundingBox returns the products of the areas intersecting the box.
func (a *App) SearchByBoundingBox(ctx context.Context, p account.Principal, box Rect) ([]*catalog.Product, error) {
	if box.MinLat > box.MaxLat || box.MinLon > box.MaxLon {
		return nil, apperr.Param("catalog.search", "min_latitude", "the box's minimum must not exceed its maximum")
	}
	if math.Abs(box.MaxLat-box.MinLat) > 10 || math.Abs(box.MaxLon-box.MinLon) > 15 {
		return nil, apperr.Param("catalog.search", "max_latitude", "the box may span at most 10° of latitude and 15° of longitude")
	}
	return a.search(ctx, p, a.Catalog().ByBox(catalog.Rect(box)))
}

func (a *App) search(ctx context.Context, p account.Principal, areas []*catalog.AreaEntry) ([]*catalog.Product, error) {
	if len(areas) == 0 {
		return []*catalog.Product{}, nil
	}
	g, err := a.granted(ctx, p)
	if err != nil {
		return nil, err
	}
	return a.Catalog().Products(areas, a.clock.Now(), g), nil
}

// Product returns a product by id (no key needed: the SDKs fetch it).
func (a *App) Product(id string) (*catalog.Product, error) {
	p, ok := a.Catalog().Product(id)
	if !ok {
		return nil, apperr.NotFoundf("app.Product", CodeProductNotFound)
	}
	return p, nil
}

// Area returns an area by id.
func (a *App) Area(id string) (*catalog.AreaEntry, error) {
	ar, ok := a.Catalog().Area(id)
	if !ok {
		return nil, apperr.NotFoundf("app.Area", CodeAreaNotFound)
	}
	return ar, nil
}

// compileSchemas checks that every product's schemas compile as draft-04
// (and warms the cache activation uses).
func (a *App) compileSchemas(f *catalog.File) error {
	var probs []apperr.FieldError
	for i, p := range f.Products {
		if _, err := a.schemas.Get(p.IdentificationMediumSchema); err != nil {
			probs = append(probs, apperr.FieldError{Field: fmt.Sprintf("/products/%d/identification_medium_schema", i), Message: err.Error()})
		}
		if p.HasTariffSettings() {
			if _, err := a.schemas.Get(p.TariffSettingsSchema); err != nil {
				probs = append(probs, apperr.FieldError{Field: fmt.Sprintf("/products/%d/tariff_settings_schema", i), Message: err.Error()})
			}
		}
	}
	if len(probs) > 0 {
		return apperr.E("app.ImportCatalog", apperr.Unprocessable, CodeCatalogInvalid,
			fmt.Sprintf("catalog has %d invalid schema(s); nothing was imported", len(probs))).WithDetails(probs...)
	}
	return nil
}
