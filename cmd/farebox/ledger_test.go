package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// Graceful shutdown commits every row the deferred ledger holds before the
// store closes: with a window of a minute nothing is written while the
// instance serves, and after it stopped every answered request is in the
// ledger once. The next start logs that window as the last committed
// position, and the metrics counted its rows.
func TestShutdownCommitsTheDeferredLedger(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngineOptions(t, func(t *testing.T, engine store.Engine) {
		opts := storetest.Options(t, engine)
		env := map[string]string{"FAREBOX_DATA_DIR": t.TempDir(), "FAREBOX_LOG_FORMAT": "json",
			"FAREBOX_USAGE_LEDGER_JOURNAL": "database", "FAREBOX_USAGE_LEDGER_WINDOW": "1m"}
		if engine == store.SQLite {
			env["FAREBOX_DATA_DIR"] = opts.DataDir
		} else {
			env["FAREBOX_DATABASE_URL"] = opts.URL + "&search_path=" + opts.Schema
		}
		cli(t, env, "migrate", "--create")
		_, key := newKey(t, env)
		in := startServe(t, env)
		if got := logField(t, in.logs.String(), "usage ledger: last committed position: none (empty ledger)", "msg"); got == "" {
			t.Fatal("no start-up position line")
		}
		run := logField(t, in.logs.String(), "usage ledger: deferred group commit", "run")
		const n = 20
		for i := range n {
			if r := call("http://"+in.addr, "GET", "/v1/account.json", key, nil, map[string]string{"X-Request-Id": fmt.Sprint("s", i)}); r.status != 200 {
				t.Fatalf("request %d: %d %s", i, r.status, r.body)
			}
		}
		metrics := string(call("http://"+in.addr, "GET", "/metrics", "", nil, nil).body)
		if !strings.Contains(metrics, "farebox_usage_ledger_rows_written_total 0\n") {
			t.Errorf("rows written before the window ended:\n%s", grepLines(metrics, "farebox_usage_ledger"))
		}
		if err := in.stop(); err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		seen := ledgerRows(t, s)
		for i := range n {
			if c := seen[fmt.Sprint("s", i)]; c != 1 {
				t.Errorf("request s%d: %d ledger rows after the graceful stop, want 1", i, c)
			}
		}
		again := startServe(t, env)
		if k := logField(t, again.logs.String(), "usage ledger: last committed position", "window_key"); k != run+"-1" {
			t.Errorf("last committed position after the stop: window %q, want %s-1", k, run)
		}
	})
}

// ledgerRows counts the usage-ledger rows of each request id in st.
func ledgerRows(t *testing.T, st *store.Store) map[string]int {
	t.Helper()
	events, err := st.Read().UsageEvents(context.Background(), time.Unix(0, 0), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, e := range events {
		rows[e.RequestID]++
	}
	return rows
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
