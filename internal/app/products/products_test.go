package products_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

var now = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// newService is a catalog over s, not yet loaded.
func newService(s *store.Store) *products.Service {
	return products.New(store.NewView[products.Queries](s), clocktest.NewFixed(now), "farebox")
}

// TestLoadImportRefresh drives the catalog's life on both engines: before
// Load the index is empty; Load imports the built-in default into an
// empty database and stores each product's and area's views as event
// parts; a second instance loads the same catalog without importing; a
// file one instance imports reaches the other on its next Refresh (and a
// Refresh with nothing new keeps the index); an invalid file imports
// nothing and names every problem's path.
func TestLoadImportRefresh(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		one, other := newService(s), newService(s)
		if areas, ps := one.Catalog().Len(); areas+ps != 0 || one.Parts() != nil {
			t.Fatalf("before Load: %d areas, %d products, parts %v", areas, ps, one.Parts())
		}
		if err := one.Load(ctx); err != nil {
			t.Fatal(err)
		}
		ix := one.Catalog()
		areas, ps := ix.Len()
		if areas == 0 || ps == 0 {
			t.Fatalf("default catalog: %d areas, %d products", areas, ps)
		}
		v, err := s.Read().CatalogVersion(ctx)
		if err != nil || v == 0 {
			t.Fatalf("stored version %d, %v", v, err)
		}

		// Each product's view is stored once as a part, each area's twice
		// (the coupon's shape and the ticket's with geojson).
		parts := one.Parts()
		var hashes []string
		f := ix.File()
		for _, p := range f.Products {
			if len(parts[p.ID]) != 1 {
				t.Fatalf("product %s has parts %v", p.ID, parts[p.ID])
			}
			hashes = append(hashes, parts[p.ID]...)
		}
		for _, a := range f.Areas {
			if len(parts[a.ID]) != 2 || parts[a.ID][0] == parts[a.ID][1] {
				t.Fatalf("area %s has parts %v", a.ID, parts[a.ID])
			}
			hashes = append(hashes, parts[a.ID]...)
		}
		stored, err := s.Read().EventParts(ctx, hashes)
		if err != nil || len(stored) != len(hashes) {
			t.Fatalf("stored %d of %d parts: %v", len(stored), len(hashes), err)
		}
		pr, _ := ix.Product(f.Products[0].ID)
		if want, _ := json.Marshal(products.ProductView(pr)); string(stored[parts[pr.ID][0]]) != string(want) {
			t.Errorf("stored part of %s:\n got %s\nwant %s", pr.ID, stored[parts[pr.ID][0]], want)
		}

		// Inside another view, a product or area marshals as its view, or,
		// referred, as the placeholder of its part (the ticket's area shape
		// with geojson is the second).
		type inside struct {
			P products.EmbeddedProduct `json:"p"`
			A products.EmbeddedArea    `json:"a"`
		}
		ar, _ := ix.Area(pr.AreaID)
		in := inside{P: products.ProductView(pr), A: products.AreaView(&ar.Area, true)}
		direct, _ := json.Marshal(struct {
			P products.ProductJSON `json:"p"`
			A products.AreaJSON    `json:"a"`
		}{products.ProductView(pr), products.AreaView(&ar.Area, true)})
		if got, _ := json.Marshal(in); string(got) != string(direct) {
			t.Errorf("embedded views:\n got %s\nwant %s", got, direct)
		}
		referred := inside{P: parts.ReferProduct(in.P), A: parts.ReferArea(in.A)}
		raw, _ := json.Marshal(referred)
		want := `{"p":` + products.PartMarker + parts[pr.ID][0] + `"},"a":` + products.PartMarker + parts[ar.ID][1] + `"}}`
		if got := string(products.WithMarkers(raw)); got != want {
			t.Errorf("referred views:\n got %s\nwant %s", got, want)
		}
		if p, ok := products.Parts(nil).ReferProduct(in.P).(products.ProductJSON); !ok || p.ID != pr.ID {
			t.Errorf("without parts the product became %v", p)
		}

		if err := other.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if w, err := s.Read().CatalogVersion(ctx); err != nil || w != v {
			t.Fatalf("a second instance's Load changed the version %d → %d (%v)", v, w, err)
		}
		if err := one.Refresh(ctx); err != nil || one.Catalog() != ix {
			t.Fatalf("a Refresh with nothing new replaced the index (%v)", err)
		}

		// Another instance imports a renamed product: this one sees it on Refresh.
		f.Products[0].LocalTicketName = "Einzelfahrt Ω 東京"
		if err := other.Import(ctx, f); err != nil {
			t.Fatal(err)
		}
		if p, _ := other.Product(f.Products[0].ID); p.LocalTicketName != "Einzelfahrt Ω 東京" {
			t.Errorf("the importing instance still has %q", p.LocalTicketName)
		}
		if p, _ := one.Product(f.Products[0].ID); p.LocalTicketName == "Einzelfahrt Ω 東京" {
			t.Fatal("the other instance changed before its Refresh")
		}
		if err := one.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if p, _ := one.Product(f.Products[0].ID); p.LocalTicketName != "Einzelfahrt Ω 東京" {
			t.Errorf("after Refresh: %q", p.LocalTicketName)
		}
		if one.Parts()[f.Products[0].ID][0] == parts[f.Products[0].ID][0] {
			t.Error("the renamed product kept its part")
		}

		// A schema that does not compile: nothing is imported.
		bad := one.Catalog().File()
		bad.Products[1].IdentificationMediumSchema = json.RawMessage(`{"type": 12}`)
		bad.Products[0].LocalTicketName = "never stored"
		err = one.Import(ctx, bad)
		if e := apperr.As(err); e == nil || e.Code != catalog.CodeCatalogInvalid || len(e.Details) != 1 ||
			e.Details[0].Field != "/products/1/identification_medium_schema" {
			t.Fatalf("invalid schema: %v", err)
		}
		if w, _ := s.Read().CatalogVersion(ctx); w == v {
			t.Fatal("the valid import did not change the version")
		} else if err := other.Refresh(ctx); err != nil {
			t.Fatal(err)
		} else if p, _ := other.Product(f.Products[0].ID); p.LocalTicketName == "never stored" {
			t.Error("an invalid file was imported")
		}
	})
}

// TestSearchAndGrants: every search finds a restricted product only for the
// accounts granted it; city names are folded; the searches' parameters and
// grants of what cannot be granted are refused; products and areas are
// found by id.
func TestSearchAndGrants(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, id := range []string{"acc_1", "acc_2"} {
			if err := s.Write(ctx, func(q store.Q) error {
				return q.CreateAccount(ctx, account.Account{ID: id, Name: "Ω 東京 عربى", CreatedAt: now})
			}); err != nil {
				t.Fatal(err)
			}
		}
		svc := newService(s)
		if err := svc.Load(ctx); err != nil {
			t.Fatal(err)
		}
		var job, single string
		for _, p := range svc.Catalog().File().Products {
			switch {
			case p.Restricted:
				job = p.ID
			case !p.IsSubscription && p.TicketType == catalog.TicketSingle && single == "":
				single = p.ID
			}
		}
		granted := account.Principal{AccountID: "acc_1", Environment: account.Live}
		other := account.Principal{AccountID: "acc_2", Environment: account.Live}
		searches := map[string]func(p account.Principal) ([]*catalog.Product, error){
			"city name": func(p account.Principal) ([]*catalog.Product, error) { return svc.SearchByCityName(ctx, p, "BERLIN") },
			"coordinates": func(p account.Principal) ([]*catalog.Product, error) {
				return svc.SearchByCoordinates(ctx, p, 52.5096, 13.3760)
			},
			"bounding box": func(p account.Principal) ([]*catalog.Product, error) {
				return svc.SearchByBoundingBox(ctx, p, products.Rect{MinLat: 52.4, MinLon: 13.2, MaxLat: 52.6, MaxLon: 13.5})
			},
		}
		found := func(name string, p account.Principal) map[string]bool {
			t.Helper()
			ps, err := searches[name](p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out := map[string]bool{}
			for _, pr := range ps {
				out[pr.ID] = true
			}
			return out
		}
		for name := range searches {
			if f := found(name, granted); f[job] || len(f) == 0 {
				t.Errorf("%s without a grant: %v", name, f)
			}
		}
		if err := svc.Grant(ctx, idempotency.Claim{}, granted.AccountID, job); err != nil {
			t.Fatal(err)
		}
		for name := range searches {
			if f := found(name, granted); !f[job] {
				t.Errorf("%s with a grant: %v", name, f)
			}
			if f := found(name, other); f[job] {
				t.Errorf("%s by another account: %v", name, f)
			}
		}
		if g, err := s.Read().Grants(ctx, granted.AccountID); err != nil || !g[job] || len(g) != 1 {
			t.Errorf("stored grants %v, %v", g, err)
		}
		// The dashboard's example order: the first local area's cheapest
		// single ticket, never a restricted product of another account.
		for _, pr := range []account.Principal{granted, other} {
			first, ok, err := svc.FirstProduct(ctx, pr)
			if err != nil || !ok || first.Restricted || first.TicketType != catalog.TicketSingle || first.ID != svc.Catalog().Local()[0].Products[0].ID {
				t.Errorf("FirstProduct(%s) = %+v, %v, %v", pr.AccountID, first, ok, err)
			}
		}
		if ps, err := svc.SearchByCoordinates(ctx, granted, 48.8566, 2.3522); err != nil || ps == nil || len(ps) != 0 {
			t.Errorf("Paris: %v, %v", ps, err)
		}

		for _, c := range []struct {
			name, code string
			kind       apperr.Kind
			err        error
		}{
			{"empty city name", apperr.CodeInvalidParameter, apperr.Invalid, func() error { _, err := svc.SearchByCityName(ctx, granted, " "); return err }()},
			{"inverted box", apperr.CodeInvalidParameter, apperr.Invalid, func() error {
				_, err := svc.SearchByBoundingBox(ctx, granted, products.Rect{MinLat: 52, MinLon: 13, MaxLat: 51, MaxLon: 14})
				return err
			}()},
			{"box too large", apperr.CodeInvalidParameter, apperr.Invalid, func() error {
				_, err := svc.SearchByBoundingBox(ctx, granted, products.Rect{MinLat: 40, MinLon: 0, MaxLat: 55, MaxLon: 10})
				return err
			}()},
			{"grant of an unknown product", products.CodeProductNotFound, apperr.NotFound, svc.Grant(ctx, idempotency.Claim{}, granted.AccountID, "farebox-product-nope")},
			{"grant of a product sold to all", products.CodeProductNotRestricted, apperr.Unprocessable, svc.Grant(ctx, idempotency.Claim{}, granted.AccountID, single)},
			{"grant to an unknown account", "", apperr.NotFound, svc.Grant(ctx, idempotency.Claim{}, "acc_nope", job)},
			{"unknown product", products.CodeProductNotFound, apperr.NotFound, func() error { _, err := svc.Product("nope"); return err }()},
			{"unknown area", products.CodeAreaNotFound, apperr.NotFound, func() error { _, err := svc.Area("nope"); return err }()},
		} {
			if e := apperr.As(c.err); e == nil || apperr.KindOf(c.err) != c.kind || (c.code != "" && e.Code != c.code) {
				t.Errorf("%s: %v", c.name, c.err)
			}
		}
		pr, err := svc.Product(job)
		if err != nil || pr.ID != job {
			t.Fatalf("Product = %v, %v", pr, err)
		}
		if a, err := svc.Area(pr.AreaID); err != nil || a.ID != pr.AreaID {
			t.Errorf("Area = %v, %v", a, err)
		}
	})
}
