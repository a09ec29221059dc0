package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app"
	"github.com/farebox/farebox/internal/httpapi"
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

// BenchmarkBoardsWithAlertsHTTP: whole board requests over loopback HTTP
// (SQLite, usage ledger on) for the same Caltrain board imported twice,
// once with the test alerts feed (one to three alerts on every entry, the
// response 2.8 times as long) and once without alerts, side by side in one
// run beside /healthz. Besides the wall time per request (16 clients per
// core) it reports cpu-ns/op, the process's user+system CPU time per
// request (server and client, both in this process), which a noisy machine
// disturbs much less. Names are benchstat's key=value form; -count N
// interleaves the cases:
//
//	go test ./internal/httpapi -run '^$' -bench BoardsWithAlertsHTTP -count 10 | tee http.txt
//	benchstat -col /alerts -filter '-/path:healthz' http.txt
func BenchmarkBoardsWithAlertsHTTP(b *testing.B) {
	data, err := proto.Marshal(testtool.CaltrainAlerts())
	if err != nil {
		b.Fatal(err)
	}
	alertsFile := filepath.Join(b.TempDir(), "alerts.pb")
	if err := os.WriteFile(alertsFile, data, 0o600); err != nil {
		b.Fatal(err)
	}
	opts := apitest.Options{Now: rtNow, Configure: func(d *httpapi.Deps) {
		ctx := context.Background()
		for _, id := range []string{"caltrain", "plain"} {
			if _, err := d.App.ImportGTFS(ctx, app.GTFSImport{FeedID: id, SourceName: "caltrain-2023.zip", Feed: parsedFeed(b, "caltrain-2023.zip"), RealtimeSource: caltrainRT}); err != nil {
				panic(err)
			}
		}
		tr := d.App.NewTransit(app.TransitOptions{RealtimeAlerts: map[string]string{"caltrain": alertsFile}})
		if err := tr.Refresh(ctx); err != nil {
			panic(err)
		}
		b.Cleanup(tr.Close)
		waitRealtime(b, tr, "caltrain")
		waitRealtime(b, tr, "plain")
		for deadline := time.Now().Add(30 * time.Second); tr.Hub().Alerts("caltrain") == nil || len(tr.Hub().Alerts("caltrain").Alerts) == 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				panic("alerts never fetched")
			}
		}
		key, err := d.App.SessionKey(ctx, "")
		if err != nil {
			panic(err)
		}
		d.Transit, d.SessionKey, d.Ready = tr, key, tr.Ready
	}}
	e := apitest.New(b, store.SQLite, opts)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	at := int64(testtool.CaltrainAgencyAlertStart+90) * 1000 // 17:02 PST: every entry has alerts
	for _, c := range []struct{ name, path string }{
		{"path=healthz", "/healthz"},
		{"path=departures/max=10/alerts=none", departuresPath(station("plain_22nd_street"), at, 10)},
		{"path=departures/max=10/alerts=applying", departuresPath(station("caltrain_22nd_street"), at, 10)},
		{"path=departures/max=100/alerts=none", departuresPath(station("plain_22nd_street"), at, 100)},
		{"path=departures/max=100/alerts=applying", departuresPath(station("caltrain_22nd_street"), at, 100)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16)
			var n int64
			cpu0 := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("GET", e.URL+c.path, nil)
					req.Header.Set("Authorization", "Bearer "+e.LiveKey)
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					k, _ := io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Errorf("%s: %d", c.path, res.StatusCode)
						return
					}
					atomic.StoreInt64(&n, k)
				}
			})
			b.ReportMetric(float64(atomic.LoadInt64(&n)), "body-B")
		})
	}
}

// cpuTime is the user and system CPU time this process has used, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
