package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// usageFill writes, set-based, the per-day counters the usage ledger keeps
// (usage_daily, updated in each ledger commit) for a year of traffic: the
// account gets 365 days × 20 endpoints × 2 environments with 600 counted
// and 85 uncounted requests each, 10,001,000 requests in all; nine other
// accounts get as much, so the table holds 146,000 rows.
func usageFill(b *testing.B, e *apitest.Env) {
	days := map[store.Engine]string{
		store.SQLite:   `date('2025-06-16', '+' || d.n || ' days')`,
		store.Postgres: `to_char(date '2025-06-16' + d.n, 'YYYY-MM-DD')`,
	}[e.Store.Engine()]
	sql := `WITH RECURSIVE d(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n < 364),
		ep(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM ep WHERE n < 19),
		acc(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM acc WHERE n < 9),
		env(name) AS (SELECT 'live' UNION ALL SELECT 'test')
		INSERT INTO usage_daily (account_id, environment, day, endpoint, counted, uncounted, refused)
		SELECT CASE acc.n WHEN 0 THEN '` + e.AccountID + `' ELSE 'farebox-account-other-' || acc.n END, env.name, ` + days + `,
			CASE ep.n % 4 WHEN 0 THEN 'GET /v9/ticketing/orders/' WHEN 1 THEN 'GET /v1/departures/' WHEN 2 THEN 'GET /v1/stations/' ELSE 'GET /v1/trips/' END || ep.n || '.json',
			600, 85, 5
		FROM d, ep, acc, env`
	if _, err := e.Store.DB().ExecContext(context.Background(), sql); err != nil {
		b.Fatal(err)
	}
	var n int
	err := e.Store.DB().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM usage_daily`).Scan(&n)
	if err != nil || n < 146000 {
		b.Fatalf("usage_daily has %d rows: %v", n, err)
	}
}

// BenchmarkDashboardUsage compares, on each engine, the dashboard's usage
// page of an account with 10 million requests in its ledger with the
// usage JSON of one month (GET /v1/usage.json): both read the per-day
// counters, never the ledger. dashboard-month is the page's default (30
// days, charts of every endpoint group, the table), dashboard-year the
// longest range it allows (366 days).
func BenchmarkDashboardUsage(b *testing.B) {
	storetest.EachEngineBench(b, func(b *testing.B, engine store.Engine) {
		e := apitest.New(b, engine, apitest.Options{Configure: withWallets(b, true)})
		usageFill(b, e)
		v := dashSignedIn(b, e, "bench@partner.example")
		for _, c := range []struct{ name, path string }{
			{"json-month", ""},
			{"dashboard-month", "/dashboard/live/usage?from=2026-05-17&to=2026-06-15"},
			{"dashboard-year", "/dashboard/live/usage?from=2025-06-16&to=2026-06-15"},
			{"csv-month", "/dashboard/live/usage.csv?from=2026-05-17&to=2026-06-15"},
		} {
			b.Run(c.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if c.path == "" {
						usageJSONMonth(b, e)
					} else {
						v.must(200, "GET", c.path, nil)
					}
				}
			})
		}
	})
}

// usageJSONMonth is GET /v1/usage.json of one month with the live key,
// read to the end (as a partner's client would; no OpenAPI validation).
func usageJSONMonth(b *testing.B, e *apitest.Env) {
	req, _ := http.NewRequest("GET", e.URL+"/v1/usage.json?from=2026-05-17&to=2026-06-15", nil)
	req.Header.Set("Authorization", "Bearer "+e.LiveKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || n < 1000 {
		b.Fatalf("usage.json: %d, %d bytes", resp.StatusCode, n)
	}
}
