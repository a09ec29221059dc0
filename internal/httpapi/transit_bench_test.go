package httpapi_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
)

// BenchmarkTransitHTTP measures whole requests over loopback HTTP on SQLite
// with the usage ledger on: /healthz, /v1/account.json (key lookup and
// ledger row) and a Caltrain departure board, in one run so the ratios are
// comparable. The board's extra cost over account.json is the transit work.
func BenchmarkTransitHTTP(b *testing.B) {
	e := apitest.New(b, store.SQLite, transitOptions(b, rtNow, caltrainFeeds...))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for _, c := range []struct{ name, path string }{
		{"healthz", "/healthz"},
		{"account", "/v1/account.json"},
		{"departures", departuresPath(station("caltrain_22nd_street"), tueFivePM, 10)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("GET", e.URL+c.path, nil)
					req.Header.Set("Authorization", "Bearer "+e.LiveKey)
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Errorf("%s: %d", c.path, res.StatusCode)
						return
					}
				}
			})
		})
	}
}

// BenchmarkMapTilesHTTP measures vector tiles over loopback HTTP beside
// /healthz in one run (SQLite, usage ledger on, gzip accepted), over the
// New York subway and Manhattan buses: the z14 Manhattan and the z10 New
// York transit tiles, served from the tile cache after the first request
// (the first request's cost is BenchmarkMapTilesNYC's "computed").
func BenchmarkMapTilesHTTP(b *testing.B) {
	e := apitest.New(b, store.SQLite, transitOptions(b, rtNow, feedSpec{"nyc-subway", "nyc/subway.zip", ""},
		feedSpec{"nyc-bus-manhattan", "nyc/bus-manhattan.zip", ""}))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	for _, c := range []struct{ name, path string }{
		{"healthz", "/healthz"},
		{"z14-manhattan-transit", "/v1/transit_map/14-4824-6157.mvt"},
		{"z10-nyc-transit", "/v1/transit_map/10-301-385.mvt"},
		{"z10-nyc-stations", "/v1/station_map/10-301-385.mvt"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16)
			var size int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("GET", e.URL+c.path, nil)
					req.Header.Set("Authorization", "Bearer "+e.LiveKey)
					req.Header.Set("Accept-Encoding", "gzip")
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					n, _ := io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Errorf("%s: %d", c.path, res.StatusCode)
						return
					}
					size = n
				}
			})
			b.ReportMetric(float64(size), "wire-bytes")
		})
	}
}
