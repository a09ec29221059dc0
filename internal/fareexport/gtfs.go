package fareexport

import (
	"encoding/csv"
	"io"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/farebox/farebox/internal/catalog"
)

// GTFS Fares v2 (docs/fares.md "GTFS Fares v2"): the files a journey
// planner adds to the GTFS feed whose stations they name.
//
//   - areas.txt: an area per exported catalog area (area_id is the
//     catalog's area id);
//   - stop_areas.txt: every station of the feed (a location_type 1 stop,
//     or a stop without a parent station; a station's platforms belong to
//     its areas by the reference's rule) inside an area's polygon, the
//     national area included;
//   - rider_categories.txt: adult (the default), child, and employee for
//     the job ticket;
//   - fare_media.txt: the one medium farebox sells on, a mobile app;
//   - fare_products.txt: a product per catalog product on sale at the
//     export's time (GTFS has no sales window), amount in euros;
//   - fare_leg_rules.txt: a leg from and to the same area may use each of
//     the area's products; the leg group is the area.
//
// Every file is written row by row through a csv.Writer, so memory does
// not grow with the catalog or the feed.

// GTFSFiles are the file names of a GTFS Fares v2 export, in writing order.
var GTFSFiles = []string{"areas.txt", "stop_areas.txt", "rider_categories.txt", "fare_media.txt", "fare_products.txt", "fare_leg_rules.txt"}

// MediumApp is the fare_media_id of the mobile app (fare_media_type 4).
const MediumApp = "farebox-app"

// Stop is a station of a GTFS feed: its stop_id there and its position.
type Stop struct {
	ID       string
	Lat, Lon float64
}

// Files receives the export's files one after the other: a *zip.Writer,
// or a directory (Dir). The writer Create returns is used until the next
// call.
type Files interface {
	Create(name string) (io.Writer, error)
}

// Dir writes the files into a directory (which must exist).
type Dir struct {
	Path string
	open *os.File
}

// Create closes the previous file and creates name in the directory.
func (d *Dir) Create(name string) (io.Writer, error) {
	if err := d.Close(); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(d.Path, name))
	if err != nil {
		return nil, err
	}
	d.open = f
	return f, nil
}

// Close closes the last file.
func (d *Dir) Close() error {
	if d.open == nil {
		return nil
	}
	err := d.open.Close()
	d.open = nil
	return err
}

// gtfs is one export in progress.
type gtfs struct {
	src   Source
	now   time.Time
	areas []*catalog.AreaEntry
	files Files
}

// WriteGTFS writes src's GTFS Fares v2 files to files, with stop_areas.txt
// over stops (a feed's stations), selling at now. An AreaID naming no area
// returns ErrNoArea before anything is written.
func WriteGTFS(files Files, src Source, now time.Time, stops iter.Seq[Stop]) error {
	areas, ok := src.Areas()
	if !ok {
		return ErrNoArea
	}
	g := &gtfs{src: src, now: now, areas: areas, files: files}
	steps := []func(*csv.Writer){g.areasTxt, g.stopAreas(stops), g.riders, g.media, g.products, g.legRules}
	for i, name := range GTFSFiles {
		w, err := files.Create(name)
		if err != nil {
			return err
		}
		cw := csv.NewWriter(w)
		steps[i](cw)
		if cw.Flush(); cw.Error() != nil {
			return cw.Error()
		}
	}
	return nil
}

func (g *gtfs) areasTxt(w *csv.Writer) {
	_ = w.Write([]string{"area_id", "area_name"})
	for _, a := range g.areas {
		_ = w.Write([]string{a.ID, a.Name})
	}
}

// stopAreas lists each station in every exported area containing it.
func (g *gtfs) stopAreas(stops iter.Seq[Stop]) func(*csv.Writer) {
	return func(w *csv.Writer) {
		_ = w.Write([]string{"area_id", "stop_id"})
		if stops == nil {
			return
		}
		exported := map[string]bool{}
		for _, a := range g.areas {
			exported[a.ID] = true
		}
		national := g.src.Catalog.National()
		for s := range stops {
			pt := catalog.Point{Lon: s.Lon, Lat: s.Lat}
			for _, a := range g.src.Catalog.ByPoint(s.Lat, s.Lon) {
				if !a.National && exported[a.ID] {
					_ = w.Write([]string{a.ID, s.ID})
				}
			}
			if national != nil && exported[national.ID] && national.Shape.Contains(pt) {
				_ = w.Write([]string{national.ID, s.ID})
			}
			if w.Error() != nil {
				return
			}
		}
	}
}

// onSale calls f with every exported product on sale at the export's time.
func (g *gtfs) onSale(f func(a *catalog.AreaEntry, p *catalog.Product)) {
	for _, a := range g.areas {
		for _, p := range a.Products {
			if p.OnSale(g.now) {
				f(a, p)
			}
		}
	}
}

func (g *gtfs) riders(w *csv.Writer) {
	used := map[string]bool{}
	g.onSale(func(_ *catalog.AreaEntry, p *catalog.Product) { used[RiderOf(p).ID] = true })
	_ = w.Write([]string{"rider_category_id", "rider_category_name", "is_default_fare_category"})
	for _, r := range Riders {
		if used[r.ID] {
			def := "0"
			if r.Default {
				def = "1"
			}
			_ = w.Write([]string{r.ID, r.Name, def})
		}
	}
}

func (g *gtfs) media(w *csv.Writer) {
	_ = w.Write([]string{"fare_media_id", "fare_media_name", "fare_media_type"})
	_ = w.Write([]string{MediumApp, "Handyticket (App)", "4"})
}

func (g *gtfs) products(w *csv.Writer) {
	_ = w.Write([]string{"fare_product_id", "fare_product_name", "rider_category_id", "fare_media_id", "amount", "currency"})
	g.onSale(func(_ *catalog.AreaEntry, p *catalog.Product) {
		_ = w.Write([]string{p.ID, p.LocalTicketName, RiderOf(p).ID, MediumApp, Amount(int64(p.PriceInCents)), p.Currency})
	})
}

func (g *gtfs) legRules(w *csv.Writer) {
	_ = w.Write([]string{"leg_group_id", "from_area_id", "to_area_id", "fare_product_id"})
	g.onSale(func(a *catalog.AreaEntry, p *catalog.Product) {
		_ = w.Write([]string{a.ID, a.ID, a.ID, p.ID})
	})
}
