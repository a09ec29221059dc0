package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/testtool"
)

// acks are the request ids a load saw answered 200, with the time each
// answer arrived.
type acks struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (a *acks) add(id string) {
	a.mu.Lock()
	a.at[id] = time.Now()
	a.mu.Unlock()
}

func (a *acks) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

// ledgerWindowRows is the window's row bound in TestKillLosesAtMostTheLedgerWindow:
// small, so that the bound on what a crash loses (2× this) is tested under load.
const ledgerWindowRows = 200

// TestKillLosesAtMostTheLedgerWindow kills a farebox process with SIGKILL
// under load with the deferred usage ledger (the default in database
// mode), on each engine, and counts what was lost: no request id is in
// the ledger twice; the acknowledged requests missing from it are at most
// the open window and the one being written (2 × --usage-ledger-window-rows),
// and each was answered after the first row of the last window the killed
// process committed, which the restarted process logs as the last
// committed position (so nothing older than the open window is lost).
// The restarted process then serves more load and stops gracefully:
// every request it acknowledged is in the ledger exactly once.
func TestKillLosesAtMostTheLedgerWindow(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Crash)
	for _, engine := range []store.Engine{store.SQLite, store.Postgres} {
		t.Run(string(engine), func(t *testing.T) { killLedgerWindow(t, engine) })
	}
}

func killLedgerWindow(t *testing.T, engine store.Engine) {
	ledger := map[string]string{"FAREBOX_USAGE_LEDGER_JOURNAL": "database", "FAREBOX_USAGE_LEDGER_COMMIT": "deferred",
		"FAREBOX_USAGE_LEDGER_WINDOW": "100ms", "FAREBOX_USAGE_LEDGER_WINDOW_ROWS": fmt.Sprint(ledgerWindowRows),
		"FAREBOX_RATE_LIMIT": "0", "FAREBOX_LOG_LEVEL": "info"}
	var env map[string]string
	var st *store.Store
	if engine == store.Postgres {
		env, st = pgEnv(t)
		for k, v := range ledger {
			env[k] = v
		}
	} else {
		env = sqliteEnv(t, ledger)
		cli(t, env, "migrate", "--create")
	}
	_, key := newKey(t, env)
	a := startChild(t, env)
	runA := logField(t, a.logs.String(), "usage ledger: deferred group commit", "run")

	first := &acks{at: map[string]time.Time{}}
	stop := loadUntilStopped(8, func(w, i int) {
		id := fmt.Sprintf("k%d-%d", w, i)
		if r := call(a.url(), "GET", "/v1/account.json", key, nil, map[string]string{"X-Request-Id": id}); r.status == 200 {
			first.add(id)
		}
	})
	waitFor(t, 120*time.Second, "acknowledged requests before the kill", func() bool { return first.len() >= 3000 })
	killAt := time.Now()
	a.kill()
	stop()

	b := startChild(t, env)
	posKey := logField(t, b.logs.String(), "usage ledger: last committed position", "window_key")
	posAt, err := time.Parse(time.RFC3339Nano, logField(t, b.logs.String(), "usage ledger: last committed position", "at"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(posKey, runA+"-") {
		t.Errorf("last committed position after the kill is window %q, want one of the killed run %s", posKey, runA)
	}
	second := &acks{at: map[string]time.Time{}}
	stop = loadUntilStopped(4, func(w, i int) {
		id := fmt.Sprintf("g%d-%d", w, i)
		if r := call(b.url(), "GET", "/v1/account.json", key, nil, map[string]string{"X-Request-Id": id}); r.status == 200 {
			second.add(id)
		}
	})
	waitFor(t, 60*time.Second, "acknowledged requests after the restart", func() bool { return second.len() >= 500 })
	stop()
	b.term() // graceful: everything it acknowledged is committed before it exits

	if st == nil {
		st = openSQLite(t, env["FAREBOX_DATA_DIR"])
	}
	rows := ledgerRows(t, st)
	for id, n := range rows {
		if n > 1 {
			t.Errorf("request %s is %d times in the ledger: billed twice", id, n)
		}
	}
	for id := range second.at {
		if rows[id] != 1 {
			t.Errorf("request %s acknowledged before the graceful stop: %d ledger rows, want 1", id, rows[id])
		}
	}
	lost, earliest := 0, killAt
	for id, at := range first.at {
		if rows[id] != 0 {
			continue
		}
		lost++
		if at.Before(earliest) {
			earliest = at
		}
		if !at.After(posAt) {
			t.Errorf("request %s answered at %s is lost, but the last committed window began at %s: an older window was lost",
				id, at.Format(time.RFC3339Nano), posAt.Format(time.RFC3339Nano))
		}
	}
	if lost > 2*ledgerWindowRows {
		t.Errorf("%d acknowledged requests lost, more than the open window and the one being written (2 × %d)", lost, ledgerWindowRows)
	}
	t.Logf("%s: %d acknowledged before the kill, %d lost (answered in the last %s before the kill), last committed window %s at %s; %d acknowledged after the restart, all recorded",
		engine, len(first.at), lost, killAt.Sub(earliest).Round(time.Millisecond), posKey, posAt.Format(time.RFC3339Nano), len(second.at))
}

// logField returns the field of the first JSON log line whose msg is msg.
func logField(t *testing.T, logs, msg, field string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == msg {
			return fmt.Sprint(m[field])
		}
	}
	t.Fatalf("no log line %q in:\n%s", msg, logs)
	return ""
}

// openSQLite opens the embedded database in dataDir for the test's checks.
func openSQLite(t *testing.T, dataDir string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
