package catalog

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/schema"
)

func TestFoldName(t *testing.T) {
	for in, want := range map[string]string{
		"München": "munchen", "Muenchen": "munchen", "MÜNCHEN": "munchen", "  münchen  ": "munchen",
		"Köln": "koln", "Koeln": "koln", "KÖLN": "koln", "Gießen": "giessen", "GIESSEN": "giessen",
		"Frankfurt (Main)": "frankfurt main", "Frankfurt/Main": "frankfurt main", "Düsseldorf": "dusseldorf",
		"Łódź": "lodz", "São Paulo": "sao paulo", "": "",
	} {
		if got := FoldName(in); got != want {
			t.Errorf("FoldName(%q) = %q, want %q", in, got, want)
		}
	}
}

func square(lon, lat, size float64) [][2]float64 {
	return [][2]float64{{lon, lat}, {lon + size, lat}, {lon + size, lat + size}, {lon, lat + size}, {lon, lat}}
}

func geom(rings ...[][2]float64) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "Polygon", "coordinates": rings})
	return b
}

func TestShapeContainsHolesAndBorders(t *testing.T) {
	s, err := ParseGeometry(geom(square(0, 0, 10), square(4, 4, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    Point
		want bool
	}{
		{Point{1, 1}, true}, {Point{5, 5}, false}, {Point{4, 5}, true} /* hole border */, {Point{10, 5}, true}, /* outer border */
		{Point{0, 0}, true}, {Point{10.0001, 5}, false}, {Point{-1, -1}, false}, {Point{3.9999, 5}, true},
	} {
		if got := s.Contains(c.p); got != c.want {
			t.Errorf("Contains(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	multi, _ := json.Marshal(map[string]any{"type": "MultiPolygon", "coordinates": [][][][2]float64{{square(0, 0, 1)}, {square(5, 5, 1)}}})
	ms, err := ParseGeometry(multi)
	if err != nil || !ms.Contains(Point{5.5, 5.5}) || ms.Contains(Point{3, 3}) || !ms.Intersects(Rect{0.5, 0.5, 2, 2}) || ms.Intersects(Rect{2, 2, 4, 4}) {
		t.Errorf("MultiPolygon: %v", err)
	}
	// A box inside the shape with no vertex of the shape inside the box, and a box crossing an edge.
	if !s.Intersects(Rect{1, 1, 2, 2}) || !s.Intersects(Rect{9, -1, 11, 1}) || s.Intersects(Rect{11, 11, 12, 12}) || s.Intersects(Rect{4.5, 4.5, 5.5, 5.5}) {
		t.Error("Intersects wrong")
	}
	for _, bad := range []string{`{"type":"Point","coordinates":[1,2]}`, `{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}`,
		`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}`, `{"type":"Polygon","coordinates":[[[0,0],[200,0],[1,1],[0,0]]]}`, `[]`} {
		if _, err := ParseGeometry(json.RawMessage(bad)); err == nil {
			t.Errorf("ParseGeometry(%s) accepted", bad)
		}
	}
}

func TestDefaultCatalog(t *testing.T) {
	f, err := Default("farebox")
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(f, "farebox", nil); err != nil {
		t.Fatalf("built-in catalog invalid: %v %+v", err, apperr.As(err).Details)
	}
	ix, err := NewIndex(f)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	cities := map[string][2]float64{"Berlin": {52.52, 13.405}, "Hamburg": {53.55, 10.0}, "München": {48.137, 11.575},
		"Köln": {50.94, 6.96}, "Frankfurt am Main": {50.11, 8.68}, "Stuttgart": {48.78, 9.18}, "Dresden": {51.05, 13.74}, "Leipzig": {51.34, 12.37}}
	for city, ll := range cities {
		areas := ix.ByCityName(city)
		if len(areas) != 1 {
			t.Fatalf("%s: %d areas", city, len(areas))
		}
		if got := ix.ByPoint(ll[0], ll[1]); len(got) != 1 || got[0].ID != areas[0].ID {
			t.Errorf("%s centre not in its area", city)
		}
		ps := ix.Products(areas, now, nil)
		types := map[string]bool{}
		for _, p := range ps {
			types[p.TicketType+"/"+p.CustomerType] = true
		}
		if len(ps) != 4 || !types["single/adult"] || !types["single/child"] || !types["day/adult"] || !types["month/adult"] {
			t.Errorf("%s sells %d products %v, want the four ticket types", city, len(ps), types)
		}
	}
	// A rural point in Germany finds the national products; a point abroad nothing.
	if got := ix.ByPoint(52.0, 10.0); len(got) != 1 || !got[0].National {
		t.Errorf("rural Germany: %v", got)
	}
	if got := ix.ByPoint(48.85, 2.35); len(got) != 0 {
		t.Errorf("Paris found %d areas", len(got))
	}
	other, _ := Default("acme")
	if err := Validate(other, "acme", nil); err != nil || !strings.HasPrefix(other.Areas[0].ID, "acme-area-") {
		t.Errorf("prefix rewrite: %v", err)
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	f, _ := Default("farebox")
	f.Areas[0].Geometry = json.RawMessage(`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1]]]}`)
	f.Areas[1].CityNames = nil
	f.Products[0].PriceInCents = -1
	f.Products[1].AreaID = "farebox-area-nope"
	f.Products[2].Currency = "USD"
	f.Products[3].DurationInMinutes = nil
	f.Products[4].ID = "bad"
	err := Validate(f, "farebox", nil)
	ae := apperr.As(err)
	if ae == nil || ae.Kind != apperr.Unprocessable {
		t.Fatalf("Validate = %v", err)
	}
	want := []string{"/areas/0/geometry", "/areas/1/city_names", "/products/0/price_in_cents", "/products/1/area_id",
		"/products/2/currency", "/products/3/duration_in_minutes", "/products/4/id"}
	got := map[string]bool{}
	for _, d := range ae.Details {
		got[d.Field] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("problem at %s not reported (got %v)", w, ae.Details)
		}
	}
	if len(ae.Details) != len(want) {
		t.Errorf("%d problems reported, want %d: %v", len(ae.Details), len(want), ae.Details)
	}
}

func TestSoldWindowAndRestricted(t *testing.T) {
	f, _ := Default("farebox")
	from := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range f.Products {
		if f.Products[i].TicketType == TicketDay {
			f.Products[i].SoldFrom = &from
		}
	}
	ix, _ := NewIndex(f)
	berlin := ix.ByCityName("berlin")
	before := ix.Products(berlin, from.Add(-time.Second), nil)
	after := ix.Products(berlin, from, func(string) bool { return true })
	if len(before) != 3 || len(after) != 5 {
		t.Errorf("before sale: %d products, after with grants: %d; want 3 and 5", len(before), len(after))
	}
}

// synthetic builds n square areas on a grid around Germany.
func synthetic(n int) *Index {
	f, _ := Default("farebox")
	nat := f.Areas[len(f.Areas)-1]
	f.Areas = f.Areas[:0]
	f.Products = f.Products[:0]
	side := 1
	for side*side < n {
		side++
	}
	step := 8.0 / float64(side)
	for i := 0; i < n; i++ {
		lon, lat := 6+float64(i%side)*step, 47+float64(i/side)*step
		f.Areas = append(f.Areas, Area{ID: fmt.Sprintf("farebox-area-%08d-0000-4000-8000-000000000000", i), Name: fmt.Sprintf("A%d", i),
			CityNames: []string{fmt.Sprintf("City %d", i)}, LocalZoneName: "Z", Geometry: geom(square(lon, lat, step))})
	}
	f.Areas = append(f.Areas, nat)
	ix, err := NewIndex(f)
	if err != nil {
		panic(err)
	}
	return ix
}

func TestSyntheticIndexMatchesBruteForce(t *testing.T) {
	ix := synthetic(2000)
	for i := 0; i < 500; i++ {
		lat, lon := 47+float64(i%97)*0.0823, 6+float64(i%89)*0.0899
		got := ix.ByPoint(lat, lon)
		var want []string
		for _, a := range ix.local {
			if a.Shape.Contains(Point{lon, lat}) {
				want = append(want, a.ID)
			}
		}
		if len(want) == 0 {
			continue
		}
		if len(got) != len(want) {
			t.Fatalf("(%v,%v): index found %d areas, brute force %d", lat, lon, len(got), len(want))
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{8, 10000} {
		ix := synthetic(n)
		b.Run(fmt.Sprintf("coordinates/%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				ix.ByPoint(50.5+float64(i%100)*0.001, 9.5)
			}
		})
		b.Run(fmt.Sprintf("bounding_box/%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				ix.ByBox(Rect{9.5, 50.5 + float64(i%100)*0.001, 9.6, 50.6})
			}
		})
		b.Run(fmt.Sprintf("city_name/%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				ix.ByCityName("City 7")
			}
		})
	}
}

// TestMonthlySchemasAreTheSchemaPackages keeps one source of truth: the
// built-in monthly product carries exactly the schemas package schema tests.
func TestMonthlySchemasAreTheSchemaPackages(t *testing.T) {
	f, _ := Default("farebox")
	n := 0
	for _, p := range f.Products {
		if p.TicketType != TicketMonth {
			continue
		}
		n++
		for _, c := range []struct {
			got  json.RawMessage
			want string
		}{{p.IdentificationMediumSchema, schema.MonthlyIdentificationMedium}, {p.TariffSettingsSchema, schema.MonthlyTariffSettings}} {
			var g, w any
			json.Unmarshal(c.got, &g)
			json.Unmarshal([]byte(c.want), &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: schema differs from package schema", p.LocalTicketName)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d monthly products, want 2 (standard and job ticket)", n)
	}
}

func TestBarcodeProfileValidation(t *testing.T) {
	for profile, field := range map[string]string{
		"":             "",
		BarcodeFarebox: "",
		BarcodeUIC:     "",
		BarcodeVDV:     "", // needs a product number: checked below
		"uic-918-3":    "barcode_profile",
		"FAREBOX":      "barcode_profile",
	} {
		for _, num := range []int{0, 1, 9999, 32000, -1, 32001} {
			f, _ := Default("farebox")
			f.Products[0].BarcodeProfile = profile
			f.Products[0].BarcodeProductNumber = num
			err := Validate(f, "farebox", nil)
			want := map[string]bool{}
			if field != "" {
				want["/products/0/"+field] = true
			}
			if num < 0 || num > 32000 || (profile == BarcodeVDV && num == 0) {
				want["/products/0/barcode_product_number"] = true
			}
			got := map[string]bool{}
			if ae := apperr.As(err); ae != nil {
				for _, d := range ae.Details {
					got[d.Field] = true
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Errorf("profile %q number %d: problems %v, want %v", profile, num, got, want)
			}
			for w := range want {
				if !got[w] {
					t.Errorf("profile %q number %d: %s not reported", profile, num, w)
				}
			}
		}
	}
	var p Product
	if p.Barcode() != BarcodeFarebox {
		t.Errorf("default profile %q", p.Barcode())
	}
}

func TestInspectionProfileValidation(t *testing.T) {
	for _, c := range []struct {
		inspection, barcode string
		bad                 bool
	}{
		{"", "", false}, {InspectionStatic, BarcodeUIC, false}, {InspectionDynamic, "", false},
		{InspectionDynamic, BarcodeFarebox, false}, {InspectionDynamic, BarcodeUIC, true},
		{"Dynamic", "", true}, {"rotating", "", true},
	} {
		f, _ := Default("farebox")
		f.Products[0].InspectionProfile, f.Products[0].BarcodeProfile = c.inspection, c.barcode
		err := Validate(f, "farebox", nil)
		var fields []string
		if ae := apperr.As(err); ae != nil {
			for _, d := range ae.Details {
				fields = append(fields, d.Field)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		want := []string(nil)
		if c.bad {
			want = []string{"/products/0/inspection_profile"}
		}
		if !reflect.DeepEqual(fields, want) {
			t.Errorf("inspection %q barcode %q: problems %v, want %v", c.inspection, c.barcode, fields, want)
		}
	}
	var p Product
	if p.Inspection() != InspectionStatic || p.Dynamic() {
		t.Errorf("default inspection profile %q", p.Inspection())
	}
	var nilProduct *Product
	if nilProduct.Dynamic() {
		t.Error("a nil product is dynamic")
	}
}
