package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceCatalog(t *testing.T) { catalogConformance.run(t) }

// catalogConformance: catalog.go (the stored catalog and restricted
// products' grants).
var catalogConformance = conformanceCases{
	"CatalogVersion": func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		if v, err := s.Read().CatalogVersion(ctx); err != nil || v != 0 {
			t.Errorf("CatalogVersion before any import = %d, %v; want 0", v, err)
		}
		f := newFixture(t, s) // imports fxCatalog
		f.write(func(q store.Q) error { return q.UpsertCatalog(f.ctx, fxCatalog(), fxAt) })
		if v, err := f.read().CatalogVersion(f.ctx); err != nil || v != 2 {
			t.Errorf("CatalogVersion after two imports = %d, %v; want 2", v, err)
		}
	},
	"CatalogUpdatedAt": func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		if v, at, err := s.Read().CatalogUpdatedAt(ctx); err != nil || v != 0 || !at.IsZero() {
			t.Errorf("CatalogUpdatedAt before any import = %d, %v, %v; want 0 and the zero time", v, at, err)
		}
		f := newFixture(t, s) // imports fxCatalog at fxAt
		if v, at, err := f.read().CatalogUpdatedAt(f.ctx); err != nil || v != 1 || !at.Equal(fxAt) || at.Location() != time.UTC {
			t.Errorf("CatalogUpdatedAt after the import = %d, %v, %v; want 1 at %v UTC", v, at, err, fxAt)
		}
		later := fxAt.Add(36 * time.Hour).In(time.FixedZone("CET", 3600))
		f.write(func(q store.Q) error { return q.UpsertCatalog(f.ctx, fxCatalog(), later) })
		if v, at, err := f.read().CatalogUpdatedAt(f.ctx); err != nil || v != 2 || !at.Equal(later) || at.Location() != time.UTC {
			t.Errorf("CatalogUpdatedAt after a second import = %d, %v, %v; want 2 at %v in UTC", v, at, err, later)
		}
	},
	"LoadCatalog": func(t *testing.T, s *store.Store) {
		if file, v, err := s.Read().LoadCatalog(t.Context()); err != nil || v != 0 || len(file.Areas) != 0 || len(file.Products) != 0 {
			t.Errorf("LoadCatalog before any import = %+v, %d, %v", file, v, err)
		}
		f := newFixture(t, s)
		file, v, err := f.read().LoadCatalog(f.ctx)
		if d := cmp.Diff(fxCatalog(), file); err != nil || v != 1 || d != "" {
			t.Errorf("LoadCatalog version %d (%v; -want +got):\n%s", v, err, d)
		}
	},
	"UpsertCatalog": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		next := fxCatalog()
		next.Areas[0].Name = "Renamed"
		next.Products = []catalog.Product{fxCatalog().Products[0]}
		next.Products[0].ID = "product-2"
		f.write(func(q store.Q) error { return q.UpsertCatalog(f.ctx, next, fxAt) })
		// Changed records replaced, new ones added after, records not in the file kept (orders refer to them).
		file, v, err := f.read().LoadCatalog(f.ctx)
		want := fxCatalog()
		want.Areas[0].Name = "Renamed"
		want.Products = append(want.Products, next.Products[0])
		if d := cmp.Diff(want, file); err != nil || v != 2 || d != "" {
			t.Errorf("catalog after UpsertCatalog, version %d (%v; -want +got):\n%s", v, err, d)
		}
	},
	"ProductIDs": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			return q.UpsertCatalog(f.ctx, &catalog.File{Version: catalog.FormatVersion, Products: []catalog.Product{{ID: "product-2", AreaID: fxArea}}}, fxAt)
		})
		if got, err := f.read().ProductIDs(f.ctx); err != nil || !cmp.Equal(got, map[string]bool{fxProduct: true, "product-2": true}) {
			t.Errorf("ProductIDs = %v, %v", got, err)
		}
	},
	"ProductOfTicket": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		tk := f.ticket(f.order(fxAccount, account.Live, "order-1", fxAt, 1).Coupons[0], "ticket-1", fxAt, nil)
		if p, ok, err := f.read().ProductOfTicket(f.ctx, tk.ID); err != nil || !ok || !cmp.Equal(p, fxCatalog().Products[0]) {
			t.Errorf("ProductOfTicket = %+v, %v, %v", p, ok, err)
		}
		if p, ok, err := f.read().ProductOfTicket(f.ctx, "ticket-x"); err != nil || ok {
			t.Errorf("ProductOfTicket of an unknown ticket = %+v, %v, %v; want none", p, ok, err)
		}
	},
	"GrantProduct": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		for range 2 { // granting twice is no error
			f.write(func(q store.Q) error { return q.GrantProduct(f.ctx, fxAccount, fxProduct, fxAt) })
		}
		if got, err := f.read().Grants(f.ctx, fxAccount); err != nil || !cmp.Equal(got, map[string]bool{fxProduct: true}) {
			t.Errorf("Grants after GrantProduct = %v, %v", got, err)
		}
		if err := s.Write(f.ctx, func(q store.Q) error { return q.GrantProduct(f.ctx, fxAccount, "product-x", fxAt) }); err == nil {
			t.Error("a grant of an unknown product was written")
		}
	},
	"RevokeProduct": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			if err := q.GrantProduct(f.ctx, fxAccount, fxProduct, fxAt); err != nil {
				return err
			}
			return q.GrantProduct(f.ctx, fxOther, fxProduct, fxAt)
		})
		for i, want := range []int64{1, 0} {
			var n int64
			f.write(func(q store.Q) (err error) { n, err = q.RevokeProduct(f.ctx, fxAccount, fxProduct); return err })
			if n != want {
				t.Errorf("RevokeProduct #%d = %d, want %d", i+1, n, want)
			}
		}
		if got, err := f.read().Grants(f.ctx, fxOther); err != nil || len(got) != 1 {
			t.Errorf("another account's grant: %v, %v", got, err)
		}
	},
	"Grants": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if got, err := f.read().Grants(f.ctx, fxAccount); err != nil || len(got) != 0 {
			t.Errorf("Grants of none = %v, %v", got, err)
		}
		f.write(func(q store.Q) error { return q.GrantProduct(f.ctx, fxOther, fxProduct, fxAt) })
		for acct, want := range map[string]map[string]bool{fxAccount: {}, fxOther: {fxProduct: true}} {
			if got, err := f.read().Grants(f.ctx, acct); err != nil || !cmp.Equal(got, want) {
				t.Errorf("Grants(%s) = %v, %v; want %v", acct, got, err, want)
			}
		}
	},
}
