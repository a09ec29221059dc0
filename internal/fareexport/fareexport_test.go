package fareexport_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/departure"
	"github.com/farebox/farebox/internal/fareexport"
	"github.com/farebox/farebox/internal/testtool"
)

var updated = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

func defaultIndex(t testing.TB) *catalog.Index {
	t.Helper()
	f, err := catalog.Default("farebox")
	if err != nil {
		t.Fatal(err)
	}
	return index(t, f)
}

func index(t testing.TB, f *catalog.File) *catalog.Index {
	t.Helper()
	ix, err := catalog.NewIndex(f)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func source(ix *catalog.Index) fareexport.Source {
	return fareexport.Source{Catalog: ix, Version: 7, UpdatedAt: updated, Codespace: "farebox", Seller: "farebox Entwicklung GmbH"}
}

func netex(t testing.TB, src fareexport.Source) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := fareexport.WriteNeTEx(&b, src); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// delivery is the part of a NeTEx delivery the tests read.
type delivery struct {
	Timestamp string `xml:"PublicationTimestamp"`
	Frame     struct {
		Version string `xml:"version,attr"`
		Frames  struct {
			Operator string `xml:"ResourceFrame>organisations>Operator>Name"`
			Fare     struct {
				Zones []struct {
					ID      string `xml:"id,attr"`
					Name    string `xml:"Name"`
					Polygon string `xml:"Polygon>exterior>LinearRing>posList"`
					Members int    `xml:"-"`
				} `xml:"fareZones>FareZone"`
				Profiles []struct {
					ID       string `xml:"id,attr"`
					UserType string `xml:"UserType"`
				} `xml:"usageParameters>UserProfile"`
				Periods []struct {
					ID       string `xml:"id,attr"`
					Type     string `xml:"ValidityPeriodType"`
					End      string `xml:"UsageEnd"`
					Duration string `xml:"StandardDuration"`
				} `xml:"usageParameters>UsageValidityPeriod"`
				Products []struct {
					ID       string `xml:"id,attr"`
					From     string `xml:"ValidBetween>FromDate"`
					Name     string `xml:"Name"`
					Profile  ref    `xml:"validityParameterAssignments>GenericParameterAssignment>limitations>UserProfileRef"`
					Period   ref    `xml:"validityParameterAssignments>GenericParameterAssignment>limitations>UsageValidityPeriodRef"`
					Zone     ref    `xml:"validityParameterAssignments>GenericParameterAssignment>validityParameters>FareZoneRef"`
					Amount   string `xml:"prices>FareProductPrice>Amount"`
					Currency string `xml:"prices>FareProductPrice>Currency"`
					Type     string `xml:"ProductType"`
				} `xml:"fareProducts>PreassignedFareProduct"`
				Packages []struct {
					Channel string `xml:"distributionAssignments>DistributionAssignment>DistributionChannelType"`
					Product ref    `xml:"salesOfferPackageElements>SalesOfferPackageElement>PreassignedFareProductRef"`
				} `xml:"salesOfferPackages>SalesOfferPackage"`
			} `xml:"FareFrame"`
		} `xml:"frames"`
	} `xml:"dataObjects>CompositeFrame"`
}

type ref struct {
	Ref string `xml:"ref,attr"`
}

func decode(t testing.TB, b []byte) delivery {
	t.Helper()
	var d delivery
	if err := xml.Unmarshal(b, &d); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	return d
}

// TestNeTExDescribesTheCatalog: every area is a FareZone with its polygon,
// every product a PreassignedFareProduct with its zone, rider, validity
// and price; the Deutschlandticket runs for the calendar month at 49.00
// EUR and its job-ticket variant is the employees' at 46.55, sold through
// the employer.
func TestNeTExDescribesTheCatalog(t *testing.T) {
	ix := defaultIndex(t)
	d := decode(t, netex(t, source(ix)))
	if d.Timestamp != "2026-11-02T09:30:00Z" || d.Frame.Version != "7" || d.Frame.Frames.Operator != "farebox Entwicklung GmbH" {
		t.Errorf("header: %q version %q operator %q", d.Timestamp, d.Frame.Version, d.Frame.Frames.Operator)
	}
	fare := d.Frame.Frames.Fare
	areas, products := ix.Len()
	if len(fare.Zones) != areas || len(fare.Products) != products || len(fare.Packages) != products || len(fare.Periods) != products {
		t.Fatalf("%d zones, %d products, %d packages, %d periods; want %d areas, %d products", len(fare.Zones), len(fare.Products), len(fare.Packages), len(fare.Periods), areas, products)
	}
	berlin := fare.Zones[0]
	if berlin.Name != "Verkehrsverbund Berlin-Brandenburg (Berlin AB)" || !strings.HasPrefix(berlin.Polygon, "52.515 13.71533 ") {
		t.Errorf("Berlin zone: %q polygon %.40q (latitude first)", berlin.Name, berlin.Polygon)
	}
	var profiles []string
	for _, p := range fare.Profiles {
		profiles = append(profiles, p.ID+"="+p.UserType)
	}
	if want := []string{"farebox:UserProfile:adult=adult", "farebox:UserProfile:child=child", "farebox:UserProfile:employee=employee"}; !slices.Equal(profiles, want) {
		t.Errorf("profiles %v, want %v", profiles, want)
	}
	periods := map[string]string{}
	for _, p := range fare.Periods {
		periods[p.ID] = p.Type + " " + p.End + " " + p.Duration
	}
	byName := map[string]int{}
	for i, p := range fare.Products {
		byName[p.Name] = i
		if p.Period.Ref != strings.Replace(p.ID, "PreassignedFareProduct", "UsageValidityPeriod", 1) || periods[p.Period.Ref] == "" {
			t.Errorf("%s: validity %q not among the periods", p.Name, p.Period.Ref)
		}
		if fare.Packages[i].Product.Ref != p.ID {
			t.Errorf("package %d sells %q, want %q", i, fare.Packages[i].Product.Ref, p.ID)
		}
	}
	for _, c := range []struct{ name, amount, profile, period, typ, channel string }{
		{"Einzelfahrschein Berlin AB", "3.80", "adult", "singleTrip standardDuration PT120M", "timeLimitedSingleTrip", "mobileDevice"},
		{"Einzelfahrschein ermäßigt Berlin AB", "2.40", "child", "singleTrip standardDuration PT120M", "timeLimitedSingleTrip", "mobileDevice"},
		{"Tageskarte Berlin AB", "10.60", "adult", "dayPass endOfFareDay PT1440M", "dayPass", "mobileDevice"},
		{"Deutschlandticket", "49.00", "adult", "monthlyPass endOfCalendarPeriod P1M", "periodPass", "mobileDevice"},
		{"Deutschlandticket Job", "46.55", "employee", "monthlyPass endOfCalendarPeriod P1M", "periodPass", "other"},
	} {
		i, ok := byName[c.name]
		if !ok {
			t.Errorf("no product %q", c.name)
			continue
		}
		p := fare.Products[i]
		got := fmt.Sprint(p.Amount, " ", p.Currency, " ", strings.TrimPrefix(p.Profile.Ref, "farebox:UserProfile:"), " ", periods[p.Period.Ref], " ", p.Type, " ", fare.Packages[i].Channel)
		if want := fmt.Sprint(c.amount, " EUR ", c.profile, " ", c.period, " ", c.typ, " ", c.channel); got != want {
			t.Errorf("%s: %s, want %s", c.name, got, want)
		}
	}
	if z := fare.Products[byName["Deutschlandticket"]].Zone.Ref; z != "farebox:FareZone:"+ix.National().ID {
		t.Errorf("Deutschlandticket zone %q, want the national area", z)
	}
}

// TestNeTExIsTheSameBytesForTheSameCatalog: the export is a function of
// the catalog version (the ETag rests on it), and an area filter keeps
// that area and its products only; an unknown area writes nothing.
func TestNeTExIsTheSameBytesForTheSameCatalog(t *testing.T) {
	ix := defaultIndex(t)
	if a, b := netex(t, source(ix)), netex(t, source(ix)); !bytes.Equal(a, b) {
		t.Error("two exports of one catalog differ")
	}
	src := source(ix)
	src.AreaID = ix.National().ID
	fare := decode(t, netex(t, src)).Frame.Frames.Fare
	if len(fare.Zones) != 1 || len(fare.Products) != 2 || len(fare.Profiles) != 2 {
		t.Errorf("national only: %d zones, %d products, %d profiles; want 1, 2, 2", len(fare.Zones), len(fare.Products), len(fare.Profiles))
	}
	src.AreaID = "farebox-area-00000000-0000-4000-8000-000000000000"
	var b bytes.Buffer
	if err := fareexport.WriteNeTEx(&b, src); !errors.Is(err, fareexport.ErrNoArea) || b.Len() != 0 {
		t.Errorf("unknown area: %v, %d bytes", err, b.Len())
	}
}

// edgeCatalog has what the default catalog lacks: a MultiPolygon with a
// hole, a sales window, names that need escaping, a child day ticket.
func edgeCatalog(t testing.TB) *catalog.Index {
	f, err := catalog.Default("farebox")
	if err != nil {
		t.Fatal(err)
	}
	f.Areas[0].Name = `Tarif "A&B" <Kern>`
	f.Areas[0].Geometry = json.RawMessage(`{"type":"MultiPolygon","coordinates":[` +
		`[[[13.0,52.3],[13.8,52.3],[13.8,52.7],[13.0,52.7],[13.0,52.3]],[[13.3,52.4],[13.4,52.4],[13.4,52.5],[13.3,52.5],[13.3,52.4]]],` +
		`[[[14.0,52.0],[14.1,52.0],[14.1,52.1],[14.0,52.0]]]]}`)
	from, until := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Products[0].SoldFrom, f.Products[1].SoldUntil = &from, &until
	f.Products[0].LocalValidityDescription = "gilt 120 Minuten & in Bus < Bahn"
	f.Products[2].CustomerType = catalog.CustomerChild
	return index(t, f)
}

// TestNeTExValidatesAgainstTheSchema runs xmllint with the official NeTEx
// schema (testdata/netex/xsd) over every kind of export: the built-in
// catalog, one area, the edge cases, and a catalog of 200 areas.
func TestNeTExValidatesAgainstTheSchema(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Validator)
	dir := t.TempDir()
	ix := defaultIndex(t)
	one := source(ix)
	one.AreaID = ix.Local()[3].ID
	edge := edgeCatalog(t)
	d := decode(t, netex(t, source(edge)))
	if p := d.Frame.Frames.Fare.Products[0]; p.From != "2026-12-01T00:00:00Z" {
		t.Errorf("sales window: %q", p.From)
	}
	files := []string{
		testtool.WriteFile(t, dir, "default.xml", netex(t, source(ix))),
		testtool.WriteFile(t, dir, "one-area.xml", netex(t, one)),
		testtool.WriteFile(t, dir, "edge.xml", netex(t, source(edge))),
		testtool.WriteFile(t, dir, "synthetic-200.xml", netex(t, source(synthetic(t, 200)))),
	}
	if out, ok := testtool.NeTExLint(t, files...); !ok {
		t.Fatalf("xmllint:\n%s", out)
	}
}

// sampleStations are the stations of the repository's sample feed (near
// Berlin) as the departure index lists them, and every stop_id of the feed.
func sampleStations(t testing.TB) (iter.Seq[fareexport.Stop], map[string]bool) {
	f := testtool.GTFSFeed(t, "sample-gtfs-feed-0.13.0.zip")
	ix, err := departure.New([]departure.FeedInput{{ID: "sample", Feed: f}}, departure.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{}
	for _, id := range f.Stops.ID {
		all[id] = true
	}
	return func(yield func(fareexport.Stop) bool) {
		ix.FeedStations("sample", func(id string, lat, lon float64) bool { return yield(fareexport.Stop{ID: id, Lat: lat, Lon: lon}) })
	}, all
}

func gtfsZip(t testing.TB, src fareexport.Source, now time.Time, stops iter.Seq[fareexport.Stop]) map[string][]byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	if err := fareexport.WriteGTFS(zw, src, now, stops); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := testtool.GTFSFaresZip(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func rows(t testing.TB, files map[string][]byte, name string) []string {
	t.Helper()
	rs, err := testtool.GTFSFaresRows(files[name])
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		switch name {
		case "stop_areas.txt":
			out = append(out, r["stop_id"]+" "+r["area_id"])
		case "fare_products.txt":
			out = append(out, r["fare_product_name"]+" "+r["amount"]+" "+r["currency"]+" "+r["rider_category_id"])
		}
	}
	return out
}

// TestGTFSFollowsTheReference: the files for the sample feed pass the
// reference's rules, its stations sit in the areas containing them (Berlin
// AB and Germany for the city centre, Germany alone for the lake outside
// Berlin), and only products on sale at the export's time are listed.
func TestGTFSFollowsTheReference(t *testing.T) {
	stops, all := sampleStations(t)
	edge := edgeCatalog(t)
	now := time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	files := gtfsZip(t, source(edge), now, stops)
	for _, p := range testtool.CheckGTFSFares(files, all) {
		t.Error(p)
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for name := range files {
			if !yield(name) {
				return
			}
		}
	}); !slices.Equal(got, slices.Sorted(slices.Values(fareexport.GTFSFiles))) {
		t.Errorf("files %v", got)
	}
	ix := defaultIndex(t)
	files = gtfsZip(t, source(ix), now, stops)
	for _, p := range testtool.CheckGTFSFares(files, all) {
		t.Error(p)
	}
	berlin, national := ix.Local()[0].ID, ix.National().ID
	sa := rows(t, files, "stop_areas.txt")
	for _, want := range []string{"center " + berlin, "center " + national, "lake " + national, "museum " + berlin} {
		if !slices.Contains(sa, want) {
			t.Errorf("stop_areas lacks %q: %v", want, sa)
		}
	}
	if slices.Contains(sa, "lake "+berlin) {
		t.Error("the lake (52.0, 13.0) is outside Berlin AB")
	}
	fp := rows(t, files, "fare_products.txt")
	for _, want := range []string{"Deutschlandticket 49.00 EUR adult", "Deutschlandticket Job 46.55 EUR employee", "Einzelfahrschein ermäßigt Berlin AB 2.40 EUR child"} {
		if !slices.Contains(fp, want) {
			t.Errorf("fare_products lacks %q: %v", want, fp)
		}
	}
	_, products := ix.Len()
	if len(fp) != products {
		t.Errorf("%d products, want %d", len(fp), products)
	}
	// In the edge catalog the first product is sold from December, the
	// second until January: in November only the second is listed.
	fp = rows(t, gtfsZip(t, source(edge), now, stops), "fare_products.txt")
	if len(fp) != products-1 || slices.Contains(fp, "Einzelfahrschein Berlin AB 3.80 EUR adult") {
		t.Errorf("November: %d products %v; the product sold from December must be missing", len(fp), fp)
	}
}

// TestGTFSToADirectory writes the same files into a directory.
func TestGTFSToADirectory(t *testing.T) {
	stops, all := sampleStations(t)
	dir := t.TempDir()
	d := &fareexport.Dir{Path: dir}
	if err := fareexport.WriteGTFS(d, source(defaultIndex(t)), updated, stops); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range fareexport.GTFSFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	for _, p := range testtool.CheckGTFSFares(files, all) {
		t.Error(p)
	}
}

// synthetic is a catalog of n local areas (squares on a grid over
// Germany), each with a single adult, a single child and a day ticket,
// and the national area with its two products.
func synthetic(t testing.TB, n int) *catalog.Index {
	f, err := catalog.Default("farebox")
	if err != nil {
		t.Fatal(err)
	}
	nat := f.Areas[len(f.Areas)-1]
	natProducts := f.Products[len(f.Products)-2:]
	tmpl := f.Products[:3]
	f.Areas, f.Products = nil, nil
	side := 1
	for side*side < n {
		side++
	}
	step := 8.0 / float64(side)
	for i := range n {
		lon, lat := 6+float64(i%side)*step, 47+float64(i/side)*step
		id := fmt.Sprintf("farebox-area-%08d-0000-4000-8000-000000000000", i)
		f.Areas = append(f.Areas, catalog.Area{ID: id, Name: fmt.Sprintf("Tarifgebiet %d", i), CityNames: []string{fmt.Sprintf("Stadt %d", i)},
			LocalZoneName: "Kernzone", Geometry: json.RawMessage(fmt.Sprintf(`{"type":"Polygon","coordinates":[[[%[1]g,%[2]g],[%[3]g,%[2]g],[%[3]g,%[4]g],[%[1]g,%[4]g],[%[1]g,%[2]g]]]}`,
				lon, lat, lon+step, lat+step))})
		for j, p := range tmpl {
			p.ID = fmt.Sprintf("farebox-product-%08d-%04d-4000-8000-000000000000", i, j)
			p.AreaID = id
			p.LocalTicketName = fmt.Sprintf("%s %d", p.LocalTicketName, i)
			f.Products = append(f.Products, p)
		}
	}
	f.Areas = append(f.Areas, nat)
	f.Products = append(f.Products, natProducts...)
	return index(t, f)
}

// countingWriter counts what passes through it and keeps nothing.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

type discardFiles struct{ w *countingWriter }

func (d discardFiles) Create(string) (io.Writer, error) { return d.w, nil }

// gridStops are n stops spread over the synthetic catalog's grid.
func gridStops(n int) iter.Seq[fareexport.Stop] {
	return func(yield func(fareexport.Stop) bool) {
		for i := range n {
			if !yield(fareexport.Stop{ID: fmt.Sprintf("s%d", i), Lat: 47 + float64(i%997)*8/997, Lon: 6 + float64(i%991)*8/991}) {
				return
			}
		}
	}
}

// TestExportMemoryIsBounded exports a catalog of 10,000 areas and 30,002
// products (the catalog import has no upper bound; 10,000 areas is the
// size the catalog's search is measured at, docs/catalog.md) with 50,000
// stops: the heap an export leaves in use does not grow with what it
// wrote, and what it allocates on the way is a fraction of its output
// (the document is never held in memory).
func TestExportMemoryIsBounded(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Load)
	src := source(synthetic(t, 10000))
	for _, c := range []struct {
		name  string
		write func(*countingWriter) error
	}{
		{"netex", func(w *countingWriter) error { return fareexport.WriteNeTEx(w, src) }},
		{"gtfs", func(w *countingWriter) error {
			return fareexport.WriteGTFS(discardFiles{w}, src, updated, gridStops(50000))
		}},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := &countingWriter{}
		start := time.Now()
		if err := c.write(w); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d MB written in %v, %d MB allocated", c.name, w.n>>20, took, alloc>>20)
		if w.n < 10<<20 {
			t.Errorf("%s: only %d bytes written", c.name, w.n)
		}
		if alloc > uint64(w.n) {
			t.Errorf("%s: allocated %d bytes for %d written: the export holds what it writes", c.name, alloc, w.n)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 4<<20 {
			t.Errorf("%s: %d MB more heap in use after the export", c.name, grown>>20)
		}
	}
}

// BenchmarkExport: a catalog of 10,000 areas (30,002 products) as NeTEx,
// and as GTFS Fares v2 with 50,000 stops.
func BenchmarkExport(b *testing.B) {
	src := source(synthetic(b, 10000))
	b.Run("netex", func(b *testing.B) {
		w := &countingWriter{}
		b.ReportAllocs()
		for b.Loop() {
			if err := fareexport.WriteNeTEx(w, src); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(w.n)/float64(b.N)/(1<<20), "MB/export")
	})
	b.Run("gtfs", func(b *testing.B) {
		w := &countingWriter{}
		b.ReportAllocs()
		for b.Loop() {
			if err := fareexport.WriteGTFS(discardFiles{w}, src, updated, gridStops(50000)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(w.n)/float64(b.N)/(1<<20), "MB/export")
	})
}

// FuzzNeTExText: whatever an imported catalog's names hold (control
// characters, invalid UTF-8, markup), the delivery stays well-formed XML
// and says the name back (invalid parts as U+FFFD).
func FuzzNeTExText(f *testing.F) {
	for _, s := range []string{"Berlin AB", `"A&B" <c>`, "tab\there\nnl", "bad\xffutf8", "ctl\x01\x1f", "ünïcødé ß 🚆", "]]>"} {
		f.Add(s)
	}
	ix := defaultIndex(f)
	file := ix.File()
	f.Fuzz(func(t *testing.T, name string) {
		g := *file
		g.Areas = slices.Clone(file.Areas)
		g.Areas[0].Name = name
		d := decode(t, netex(t, source(index(t, &g))))
		want := strings.ToValidUTF8(name, "\uFFFD")
		want = strings.Map(func(r rune) rune {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
				return '\uFFFD'
			}
			return r
		}, want)
		if got := d.Frame.Frames.Fare.Zones[0].Name; got != want && strings.ReplaceAll(got, "\uFFFD", "") != strings.ReplaceAll(want, "\uFFFD", "") {
			t.Errorf("name %q came back as %q", name, got)
		}
	})
}
