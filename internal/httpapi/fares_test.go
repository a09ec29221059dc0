package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

// TestFaresNeTExIsPublicAndCacheable: without a key a planner gets the
// catalog as NeTEx with an ETag and Last-Modified of the catalog version;
// sending either back answers 304 without a body; an import changes both,
// and the old ETag then gets the new delivery.
func TestFaresNeTExIsPublicAndCacheable(t *testing.T) {
	apitest.ForEachEngine(t, apitest.Options{}, func(t *testing.T, e *apitest.Env) {
		r := e.Must(http.StatusOK, apitest.Req{Method: "GET", Path: "/v1/fares/netex.xml"})
		tag, modified := r.Header.Get("ETag"), r.Header.Get("Last-Modified")
		if !strings.HasPrefix(tag, `"`) || len(tag) != 34 || modified == "" || r.Header.Get("Cache-Control") != "public, max-age=300" {
			t.Fatalf("headers: ETag %q Last-Modified %q Cache-Control %q", tag, modified, r.Header.Get("Cache-Control"))
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/xml; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		testtool.Contains(t, string(r.Body), `<PublicationDelivery xmlns="http://www.netex.org.uk/netex"`, "<Name>Deutschlandticket Job</Name>",
			"<Amount>49.00</Amount>", "<Amount>46.55</Amount>", "<UserType>employee</UserType>", "<UsageEnd>endOfCalendarPeriod</UsageEnd>")
		for _, h := range []map[string]string{{"If-None-Match": tag}, {"If-None-Match": `"other", W/` + tag}, {"If-Modified-Since": modified}} {
			nm := e.Must(http.StatusNotModified, apitest.Req{Method: "GET", Path: "/v1/fares/netex.xml", Header: h})
			if len(nm.Body) != 0 || nm.Header.Get("ETag") != tag {
				t.Errorf("%v: 304 with %d bytes, ETag %q", h, len(nm.Body), nm.Header.Get("ETag"))
			}
		}
		e.Must(http.StatusOK, apitest.Req{Method: "GET", Path: "/v1/fares/netex.xml", Header: map[string]string{"If-None-Match": `"stale"`}})

		// An import (the Deutschlandticket at 58 euros) is a new version.
		f := e.Products.Catalog().File()
		for i := range f.Products {
			if f.Products[i].LocalTicketName == "Deutschlandticket" {
				f.Products[i].PriceInCents = 5800
			}
		}
		e.Clock.Advance(time.Hour)
		if err := e.Products.Import(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		r2 := e.Must(http.StatusOK, apitest.Req{Method: "GET", Path: "/v1/fares/netex.xml", Header: map[string]string{"If-None-Match": tag}})
		if r2.Header.Get("ETag") == tag || r2.Header.Get("Last-Modified") == modified {
			t.Errorf("after an import: ETag %q, Last-Modified %q unchanged", tag, modified)
		}
		testtool.Contains(t, string(r2.Body), "<Amount>58.00</Amount>")

		// One area: its zone and products only.
		nat := e.Products.Catalog().National().ID
		one := e.Must(http.StatusOK, apitest.Req{Method: "GET", Path: "/v1/fares/netex.xml?area_id=" + nat})
		if n := strings.Count(string(one.Body), "<FareZone "); n != 1 || one.Header.Get("ETag") == r2.Header.Get("ETag") {
			t.Errorf("area_id: %d zones, ETag %q", n, one.Header.Get("ETag"))
		}
	})
}

// TestFaresGTFSForAFeed: the GTFS Fares v2 zip for the loaded sample feed
// (near Berlin) passes the reference's rules with its stations in Berlin
// AB and Germany; its ETag answers 304.
func TestFaresGTFSForAFeed(t *testing.T) {
	apitest.ForEachEngine(t, transitOptions(t, apitest.DefaultNow, feedSpec{"sample", "sample-gtfs-feed-0.13.0.zip", ""}), func(t *testing.T, e *apitest.Env) {
		r := e.Must(http.StatusOK, apitest.Req{Method: "GET", Path: "/v1/fares/gtfs-fares-v2.zip?feed_id=sample"})
		if r.Header.Get("Content-Type") != "application/zip" || r.Header.Get("Content-Disposition") != `attachment; filename="fares-gtfs-sample.zip"` {
			t.Errorf("headers %v", r.Header)
		}
		files, err := testtool.GTFSFaresZip(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		feed := testtool.GTFSFeed(t, "sample-gtfs-feed-0.13.0.zip")
		stops := map[string]bool{}
		for _, id := range feed.Stops.ID {
			stops[id] = true
		}
		for _, p := range testtool.CheckGTFSFares(files, stops) {
			t.Error(p)
		}
		berlin := e.Products.Catalog().Local()[0].ID
		testtool.Contains(t, string(files["stop_areas.txt"]), berlin+",center\n", berlin+",museum\n")
		testtool.Contains(t, string(files["fare_products.txt"]), "Deutschlandticket Job,employee,farebox-app,46.55,EUR")
		e.Must(http.StatusNotModified, apitest.Req{Method: "GET", Path: "/v1/fares/gtfs-fares-v2.zip?feed_id=sample",
			Header: map[string]string{"If-None-Match": r.Header.Get("ETag")}})
		e.Must(http.StatusNotFound, apitest.Req{Method: "GET", Path: "/v1/fares/gtfs-fares-v2.zip?feed_id=nope"})
	})
}

// TestFaresBadInput: every bad parameter is a 400 naming it, without a
// key; an instance without GTFS feeds says so for feed_id.
func TestFaresBadInput(t *testing.T) {
	e := apitest.New(t, store.SQLite, apitest.Options{})
	long := strings.Repeat("a", 129)
	for _, c := range []struct{ path, field string }{
		{"/v1/fares/netex.xml?area_id=farebox-area-00000000-0000-4000-8000-000000000000", "area_id"},
		{"/v1/fares/netex.xml?area_id=" + long, "area_id"},
		{"/v1/fares/netex.xml?area_id=a&area_id=b", "area_id"},
		{"/v1/fares/netex.xml?feed_id=sample", "feed_id"},
		{"/v1/fares/netex.xml?format=gtfs", "format"},
		{"/v1/fares/netex.xml?area_id=%zz", "query"},
		{"/v1/fares/netex.xml?area_id=%01", "area_id"},
		{"/v1/fares/gtfs-fares-v2.zip", "feed_id"},
		{"/v1/fares/gtfs-fares-v2.zip?feed_id=" + long, "feed_id"},
		{"/v1/fares/gtfs-fares-v2.zip?feed_id=sample", "feed_id"}, // no transit on this server
	} {
		wantInvalidParameter(t, e, "", c.path, c.field)
	}
}

// TestFaresAreLimitedPerClient: the fare routes are keyless, so the
// per-client limit of keyless routes applies.
func TestFaresAreLimitedPerClient(t *testing.T) {
	e := apitest.New(t, store.SQLite, apitest.Options{Configure: func(d *httpapi.Deps) {
		d.Keyless = &httpapi.KeylessLimits{PerClient: httpapi.Limit{Rate: 0.001, Burst: 2}}
	}})
	for range 2 {
		e.Must(http.StatusOK, apitest.Req{Method: "GET", Path: "/v1/fares/netex.xml"})
	}
	r := e.Must(http.StatusTooManyRequests, apitest.Req{Method: "GET", Path: "/v1/fares/gtfs-fares-v2.zip?feed_id=x"})
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
}

// FuzzFaresRequest: whatever the query string, reading it either gives a
// request the use case accepts or a 400 naming a parameter; it never
// panics.
func FuzzFaresRequest(f *testing.F) {
	for _, s := range []string{"", "area_id=farebox-area-1", "feed_id=vbb&area_id=x", "area_id=a&area_id=b", "x=1", "%zz", "feed_id=%00", "area_id=" + strings.Repeat("é", 80), ";&=&"} {
		f.Add("netex", s)
		f.Add("gtfs-fares-v2", s)
	}
	f.Fuzz(func(t *testing.T, format, query string) {
		req, err := httpapi.FaresRequest(format, query)
		if err == nil {
			if req.Check() != nil || len(req.AreaID) > 128 || len(req.FeedID) > 128 {
				t.Fatalf("accepted %q as %+v", query, req)
			}
			return
		}
		var ae *apperr.Error
		if !asAppErr(err, &ae) || ae.Kind != apperr.Invalid || len(ae.Details) != 1 || ae.Details[0].Field == "" {
			t.Fatalf("%q: %v is not a 400 naming a field", query, err)
		}
	})
}

func asAppErr(err error, target **apperr.Error) bool {
	e, ok := err.(*apperr.Error)
	*target = e
	return ok
}
