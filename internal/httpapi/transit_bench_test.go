package httpapi_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"

	gtfsrt "github.com/MobilityData/gtfs-realtime-bindings/golang/gtfs"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
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
		b.Run(c.name, func(b *testing.B) { getParallel(b, client, e.URL+c.path, e.LiveKey, nil) })
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
			size := getParallel(b, client, e.URL+c.path, e.LiveKey, map[string]string{"Accept-Encoding": "gzip"})
			b.ReportMetric(float64(size), "wire-bytes")
		})
	}
}

// BenchmarkBoardsWithAlertsHTTP: whole board requests over loopback HTTP
// (SQLite, usage ledger on) for the same Caltrain board imported twice,
// once with the test alerts feed (one to three alerts on every entry, the
// response 3.6 times as long) and once without alerts, side by side in one
// run beside /healthz, by a client that accepts gzip (enc=gzip: Go's
// transport asks for it and inflates, as every shipped client does; the
// server sends its stored compression of the board, gzipcache.go) and by
// one that does not (enc=identity). Besides the wall time per request (16
// clients per core) it reports cpu-ns/op, the process's user+system CPU
// time per request (server and client, both in this process), which a
// noisy machine disturbs much less. Names are benchstat's key=value form; -count N interleaves
// the cases. bench/alerts.sh measures the server alone (wrk in a process
// of its own).
//
//	go test ./internal/httpapi -run '^$' -bench BoardsWithAlertsHTTP -count 10 | tee http.txt
//	benchstat -col /alerts -filter '-/path:healthz' http.txt
func BenchmarkBoardsWithAlertsHTTP(b *testing.B) {
	opts := transitAlertsOptions(b, rtNow, map[string]*gtfsrt.FeedMessage{"caltrain": testtool.CaltrainAlerts()},
		feedSpec{"caltrain", "caltrain-2023.zip", caltrainRT}, feedSpec{"plain", "caltrain-2023.zip", caltrainRT})
	e := apitest.New(b, store.SQLite, opts)
	clients := map[string]*http.Client{
		"gzip":     {Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		"identity": {Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}},
	}
	at := int64(testtool.CaltrainAgencyAlertStart+90) * 1000 // 17:02 PST: every entry has alerts
	for _, enc := range []string{"gzip", "identity"} {
		client := clients[enc]
		for _, c := range []struct{ name, path string }{
			{"path=healthz", "/healthz"},
			{"path=departures/max=10/alerts=none", departuresPath(station("plain_22nd_street"), at, 10)},
			{"path=departures/max=10/alerts=applying", departuresPath(station("caltrain_22nd_street"), at, 10)},
			{"path=departures/max=100/alerts=none", departuresPath(station("plain_22nd_street"), at, 100)},
			{"path=departures/max=100/alerts=applying", departuresPath(station("caltrain_22nd_street"), at, 100)},
		} {
			b.Run("enc="+enc+"/"+c.name, func(b *testing.B) {
				cpu0 := cpuTime()
				n := getParallel(b, client, e.URL+c.path, e.LiveKey, nil)
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(n), "body-B")
			})
		}
	}
}

// getParallel GETs url with the key (and hdr) from 16 goroutines per CPU
// until the benchmark ends, failing it on any status but 200, and returns
// the length of the last body read (as the client saw it: inflated when its
// transport asked for gzip itself).
func getParallel(b *testing.B, client *http.Client, url, key string, hdr map[string]string) int64 {
	b.ReportAllocs()
	b.SetParallelism(16)
	var size atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Errorf("%s: %d", url, res.StatusCode)
				return
			}
			size.Store(n)
		}
	})
	return size.Load()
}

// cpuTime is the user and system CPU time this process has used, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
