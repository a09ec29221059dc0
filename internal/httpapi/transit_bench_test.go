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
