package fares_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/fares"
	"github.com/farebox/farebox/internal/app/products"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/testtool"
)

var imported = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

// service is the fares over the built-in catalog whose first product is
// sold until until, and one feed "f" of version feedVersion.
func service(t *testing.T, until time.Time, feedVersion *int64) (*fares.Service, *clocktest.Fixed) {
	f, err := catalog.Default("farebox")
	if err != nil {
		t.Fatal(err)
	}
	f.Products[0].SoldUntil = &until
	ix, err := catalog.NewIndex(f)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.NewFixed(imported.Add(time.Hour))
	stations := func(id string) (fares.Feed, error) {
		if id != "f" {
			return fares.Feed{}, apperr.NotFoundf("test", "feed_not_found")
		}
		return fares.Feed{Version: *feedVersion, UpdatedAt: imported.Add(-time.Hour), Each: func(yield func(string, float64, float64) bool) {
			yield("center", 52.5, 13.5)
		}}, nil
	}
	loaded := func() products.Loaded { return products.Loaded{Catalog: ix, Version: 4, UpdatedAt: imported} }
	return fares.New(loaded, stations, "farebox", "Test GmbH", clk), clk
}

// TestGTFSTagFollowsWhatIsOnSale: the GTFS export's ETag changes when a
// product's sales window closes and when the feed is reimported, and
// Last-Modified is then the window's end; the NeTEx export's does not
// change with the clock (its body does not).
func TestGTFSTagFollowsWhatIsOnSale(t *testing.T) {
	feedVersion := int64(1)
	until := imported.Add(2 * time.Hour)
	s, clk := service(t, until, &feedVersion)
	prep := func(format, feed string) fares.Export {
		ex, err := s.Prepare(fares.Request{Format: format, FeedID: feed})
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	gtfs, netex := prep(fares.FormatGTFS, "f"), prep(fares.FormatNeTEx, "")
	if !gtfs.LastModified.Equal(imported) || !netex.LastModified.Equal(imported) {
		t.Errorf("Last-Modified %v, %v; want the import %v", gtfs.LastModified, netex.LastModified, imported)
	}
	if again := prep(fares.FormatGTFS, "f"); again.ETag != gtfs.ETag {
		t.Error("the same state gave another ETag")
	}
	clk.Advance(2 * time.Hour) // the first product's sales end
	closed := prep(fares.FormatGTFS, "f")
	if closed.ETag == gtfs.ETag || !closed.LastModified.Equal(until) {
		t.Errorf("after the window closed: ETag %s (was %s), Last-Modified %v want %v", closed.ETag, gtfs.ETag, closed.LastModified, until)
	}
	if n := prep(fares.FormatNeTEx, ""); n.ETag != netex.ETag {
		t.Error("the NeTEx ETag changed with the clock")
	}
	feedVersion = 2
	if re := prep(fares.FormatGTFS, "f"); re.ETag == closed.ETag {
		t.Error("a reimported feed kept the ETag")
	}
	var b bytes.Buffer
	if err := closed.Write(&b); err != nil {
		t.Fatal(err)
	}
	files, err := testtool.GTFSFaresZip(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range testtool.CheckGTFSFares(files, map[string]bool{"center": true}) {
		t.Error(p)
	}
	if http.DetectContentType(b.Bytes()) != "application/zip" || closed.ContentType != "application/zip" || netex.ContentType != "application/xml; charset=utf-8" {
		t.Errorf("content types %q %q", closed.ContentType, netex.ContentType)
	}
}

// TestPrepareRefuses: an unknown feed is the stations' error, an unknown
// area a 400 naming area_id, a bad request a 400 before anything is read.
func TestPrepareRefuses(t *testing.T) {
	v := int64(1)
	s, _ := service(t, imported.Add(time.Hour), &v)
	for _, c := range []struct {
		req        fares.Request
		kind       apperr.Kind
		code, want string
	}{
		{fares.Request{Format: fares.FormatGTFS, FeedID: "nope"}, apperr.NotFound, "feed_not_found", ""},
		{fares.Request{Format: fares.FormatNeTEx, AreaID: "farebox-area-x"}, apperr.Invalid, apperr.CodeInvalidParameter, "area_id"},
		{fares.Request{Format: "pdf"}, apperr.Invalid, apperr.CodeInvalidParameter, "format"},
	} {
		_, err := s.Prepare(c.req)
		e := testtool.WantErr(t, err, c.kind, c.code)
		if c.want != "" {
			testtool.WantFields(t, e, c.want)
		}
	}
	noFeeds := fares.New(func() products.Loaded { return products.Loaded{Catalog: mustDefault(t)} }, nil, "", "", nil)
	_, err := noFeeds.Prepare(fares.Request{Format: fares.FormatGTFS, FeedID: "f"})
	testtool.WantFields(t, testtool.WantErr(t, err, apperr.Invalid, apperr.CodeInvalidParameter), "feed_id")
}

func mustDefault(t *testing.T) *catalog.Index {
	f := testtool.Must(catalog.Default("farebox"))(t)
	return testtool.Must(catalog.NewIndex(f))(t)
}
