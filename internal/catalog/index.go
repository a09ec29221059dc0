package catalog

import (
	"fmt"
	"sort"
	"time"
)

// Index is an immutable, searchable catalog. Build a new one to change it.
type Index struct {
	areas    []*AreaEntry
	byID     map[string]*AreaEntry
	products map[string]*Product
	byName   map[string][]*AreaEntry
	tree     rtree // local areas only
	local    []*AreaEntry
	national *AreaEntry
}

// AreaEntry is an area with its parsed shape and its own products.
type AreaEntry struct {
	Area
	Shape    *Shape
	Products []*Product
}

// NewIndex builds an index over a validated catalog.
func NewIndex(f *File) (*Index, error) {
	ix := &Index{byID: map[string]*AreaEntry{}, products: map[string]*Product{}, byName: map[string][]*AreaEntry{}}
	var boxes []Rect
	for i := range f.Areas {
		a := f.Areas[i]
		shape, err := ParseGeometry(a.Geometry)
		if err != nil {
			return nil, fmt.Errorf("catalog: area %s: %w", a.ID, err)
		}
		e := &AreaEntry{Area: a, Shape: shape}
		ix.areas = append(ix.areas, e)
		ix.byID[a.ID] = e
		if a.National {
			ix.national = e
			continue
		}
		ix.local = append(ix.local, e)
		boxes = append(boxes, shape.Box)
		seen := map[string]bool{}
		for _, c := range a.CityNames {
			if k := FoldName(c); !seen[k] {
				seen[k] = true
				ix.byName[k] = append(ix.byName[k], e)
			}
		}
	}
	ix.tree = buildRTree(boxes)
	for i := range f.Products {
		p := f.Products[i]
		e := ix.byID[p.AreaID]
		if e == nil {
			return nil, fmt.Errorf("catalog: product %s: unknown area %s", p.ID, p.AreaID)
		}
		ix.products[p.ID] = &p
		e.Products = append(e.Products, &p)
	}
	for _, e := range ix.areas {
		sort.SliceStable(e.Products, func(i, j int) bool { return productLess(e.Products[i], e.Products[j]) })
	}
	return ix, nil
}

func typeRank(p *Product) int {
	r := map[string]int{TicketSingle: 0, TicketDay: 2, TicketMonth: 4}[p.TicketType]
	if p.CustomerType == CustomerChild {
		r++
	}
	return r
}

func productLess(a, b *Product) bool {
	if ra, rb := typeRank(a), typeRank(b); ra != rb {
		return ra < rb
	}
	if a.Restricted != b.Restricted {
		return !a.Restricted
	}
	if a.PriceInCents != b.PriceInCents {
		return a.PriceInCents < b.PriceInCents
	}
	return a.ID < b.ID
}

// Product returns a product by id.
func (ix *Index) Product(id string) (*Product, bool) { p, ok := ix.products[id]; return p, ok }

// Area returns an area by id.
func (ix *Index) Area(id string) (*AreaEntry, bool) { a, ok := ix.byID[id]; return a, ok }

// File returns the catalog as a file (for export).
func (ix *Index) File() *File {
	f := &File{Version: FormatVersion, Areas: []Area{}, Products: []Product{}}
	for _, e := range ix.areas {
		f.Areas = append(f.Areas, e.Area)
		for _, p := range e.Products {
			f.Products = append(f.Products, *p)
		}
	}
	return f
}

// Len returns the number of areas and products.
func (ix *Index) Len() (areas, products int) { return len(ix.areas), len(ix.products) }

// ByCityName returns the local areas one of whose city names folds to the same as name.
func (ix *Index) ByCityName(name string) []*AreaEntry {
	return ix.byName[FoldName(name)]
}

// ByPoint returns the local areas containing the point (a point on a shared
// border is in both). A point in no local area but inside the national area
// yields the national area, whose products are sold everywhere.
func (ix *Index) ByPoint(lat, lon float64) []*AreaEntry {
	p := Point{Lon: lon, Lat: lat}
	return ix.matching(Rect{lon, lat, lon, lat}, func(a *AreaEntry) bool { return a.Shape.Contains(p) })
}

// ByBox returns the local areas intersecting the box (a map selection).
func (ix *Index) ByBox(r Rect) []*AreaEntry {
	return ix.matching(r, func(a *AreaEntry) bool { return a.Shape.Intersects(r) })
}

// matching returns, sorted, the local areas whose bounds meet r and that hit
// accepts; with none, the national area if hit accepts it.
func (ix *Index) matching(r Rect, hit func(*AreaEntry) bool) []*AreaEntry {
	var out []*AreaEntry
	ix.tree.search(r, func(i int) {
		if hit(ix.local[i]) {
			out = append(out, ix.local[i])
		}
	})
	if len(out) == 0 && ix.national != nil && hit(ix.national) {
		out = append(out, ix.national)
	}
	sortAreas(out)
	return out
}

func sortAreas(a []*AreaEntry) {
	sort.Slice(a, func(i, j int) bool {
		if a[i].Name != a[j].Name {
			return a[i].Name < a[j].Name
		}
		return a[i].ID < a[j].ID
	})
}

// Products lists what the areas sell at now to a caller: each area's own
// products followed by the national products, each product once. granted
// tells whether the caller may see a restricted product.
func (ix *Index) Products(areas []*AreaEntry, now time.Time, granted func(productID string) bool) []*Product {
	out := []*Product{}
	seen := map[string]bool{}
	add := func(ps []*Product) {
		for _, p := range ps {
			if seen[p.ID] || !p.OnSale(now) || (p.Restricted && (granted == nil || !granted(p.ID))) {
				continue
			}
			seen[p.ID] = true
			out = append(out, p)
		}
	}
	for _, a := range areas {
		add(a.Products)
		if !a.National && ix.national != nil {
			add(ix.national.Products)
		}
	}
	return out
}

// Local returns the local areas (all but the national one), in the
// catalog's order.
func (ix *Index) Local() []*AreaEntry { return ix.local }

// National returns the national area, if the catalog has one.
func (ix *Index) National() *AreaEntry { return ix.national }
