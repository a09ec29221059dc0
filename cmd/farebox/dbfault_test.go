package main

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

// TestDatabaseOutageUnderLoad puts a TCP proxy between farebox serve and
// PostgreSQL, cuts it while partners keep ordering, and restores it. During
// the outage /readyz answers 503 and API calls fail with 503
// database_unavailable (JSON, Retry-After), never a 500 or a hang; after it
// the service recovers by itself, and every acknowledged order is stored.
func TestDatabaseOutageUnderLoad(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Load)
	env, st := pgEnv(t)
	u, err := url.Parse(storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := testtool.NewProxy(t, u.Host)
	pu := *u
	pu.Host = proxy.Addr
	q := pu.Query()
	for k, v := range env {
		if k == "FAREBOX_DATABASE_URL" {
			orig, _ := url.Parse(v)
			q.Set("search_path", orig.Query().Get("search_path"))
		}
	}
	q.Set("connect_timeout", "2")
	app := "farebox_outage_" + strings.TrimPrefix(q.Get("search_path"), "t_")
	q.Set("application_name", app)
	pu.RawQuery = q.Encode()
	env["FAREBOX_DATABASE_URL"] = pu.String()
	env["FAREBOX_REQUEST_TIMEOUT"] = "5s"
	env["FAREBOX_DATA_DIR"] = t.TempDir()
	accountID, key := newKey(t, env)
	in := startServe(t, env)
	ids := products(t, in.url(), key)

	var mu sync.Mutex
	acked := map[string]bool{}
	statuses := map[int]int{}
	var bad atomic.Value
	stop := loadUntilStopped(4, func(int, int) {
		start := time.Now()
		r := call(in.url(), "POST", "/v9/ticketing/orders.json", key, map[string]any{"product_ids": []string{ids["single/adult"]}}, nil)
		took := time.Since(start)
		mu.Lock()
		statuses[r.status]++
		switch {
		case r.status == 201:
			acked[str(r.m()["order_id"])] = true
		case r.status == 503:
			// outcome_unknown: an order whose statement was sent when the
			// connection was cut (it may have committed; no Retry-After).
			if c := r.m()["code"]; c == "outcome_unknown" {
				if r.header.Get("Retry-After") != "" {
					bad.Store(string(r.body))
				}
			} else if (c != "database_unavailable" && c != "usage_ledger_unavailable" && c != "request_cancelled") || r.header.Get("Retry-After") == "" {
				bad.Store(string(r.body))
			}
		default:
			bad.Store(string(r.body))
		}
		if took > 8*time.Second {
			bad.Store("a request took " + took.String())
		}
		mu.Unlock()
		if r.status != 201 {
			time.Sleep(50 * time.Millisecond)
		}
	})
	ready := func() int { return call(in.url(), "GET", "/readyz", "", nil, nil).status }
	waitFor(t, 10*time.Second, "orders before the outage", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 20 })
	proxy.Cut()
	waitFor(t, 10*time.Second, "/readyz 503 during the outage", func() bool { return ready() == 503 })
	r := call(in.url(), "GET", "/readyz", "", nil, nil)
	if r.m()["code"] != "database_unavailable" {
		t.Errorf("readyz during the outage: %d %s", r.status, r.body)
	}
	if s := call(in.url(), "GET", "/healthz", "", nil, nil).status; s != 200 {
		t.Errorf("healthz during the outage: %d (the process is alive)", s)
	}
	time.Sleep(2 * time.Second)
	proxy.Restore(t)
	waitFor(t, 20*time.Second, "/readyz 200 after the outage", func() bool { return ready() == 200 })
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	waitFor(t, 20*time.Second, "orders after the outage", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= n+20 })
	// A database restart as PostgreSQL's own clients see it: every backend
	// of the instance is terminated (57P01); the pool replaces them.
	admin, err := sql.Open("pgx", storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var killed int
	if err := admin.QueryRow(`SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&killed); err != nil || killed == 0 {
		t.Fatalf("terminate backends: %d %v", killed, err)
	}
	mu.Lock()
	n = len(acked)
	mu.Unlock()
	waitFor(t, 20*time.Second, "orders after terminating the backends", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= n+20 })
	// Ready again as a load balancer probes it: a probe that lands on a
	// connection the restart killed may say 503 once (logged, with its
	// code), the next ones 200.
	waitFor(t, 10*time.Second, "/readyz 200 after terminating the backends", func() bool {
		r := call(in.url(), "GET", "/readyz", "", nil, nil)
		if r.status != 200 {
			t.Logf("readyz after the backends were terminated: %d %s", r.status, r.body)
		}
		return r.status == 200
	})
	stop()
	if v := bad.Load(); v != nil {
		t.Errorf("unexpected answer during the outage: %v", v)
	}
	if statuses[503] == 0 {
		t.Errorf("no request saw the outage: %v", statuses)
	}
	for id := range acked {
		if _, err := st.Read().Order(context.Background(), accountID, account.Live, id); err != nil {
			t.Errorf("acknowledged order %s missing: %v", id, err)
		}
	}
	t.Logf("statuses: %v, %d backends terminated", statuses, killed)
}
