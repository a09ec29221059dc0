package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// instance is one in-process `farebox serve` run of a test.
type instance struct {
	addr   string
	logs   *syncBuffer
	cancel context.CancelFunc
	done   chan error

	stopOnce sync.Once
	stopErr  error
}

// startServe runs serve with env (plus a :0 address) until the test ends.
func startServe(t *testing.T, env map[string]string) *instance {
	t.Helper()
	in := &instance{logs: &syncBuffer{}}
	cancel, ready, done := goServe(env, in.logs)
	in.cancel, in.done = cancel, done
	select {
	case in.addr = <-ready:
	case err := <-in.done:
		cancel()
		t.Fatalf("serve ended: %v\n%s", err, in.logs.String())
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start")
	}
	t.Cleanup(func() { in.stop() })
	return in
}

// goServe runs serve with env (plus a :0 address) and its log into logs
// until cancel; ready gets the address it listens on, done what it
// returned.
func goServe(env map[string]string, logs io.Writer) (cancel context.CancelFunc, ready chan string, done chan error) {
	e := map[string]string{}
	for k, v := range env {
		e[k] = v
	}
	e["FAREBOX_ADDR"] = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	ready, done = make(chan string, 1), make(chan error, 1)
	go func() { done <- serve(ctx, nil, envFrom(e), io.Discard, logs, ready) }()
	return cancel, ready, done
}

// stop shuts the instance down gracefully, waits for serve to return and
// returns its error (the same one on every call).
func (in *instance) stop() error {
	in.stopOnce.Do(func() {
		in.cancel()
		select {
		case in.stopErr = <-in.done:
		case <-time.After(30 * time.Second):
			in.stopErr = errors.New("graceful shutdown hung")
		}
	})
	return in.stopErr
}

func (in *instance) url() string { return "http://" + in.addr }

// pgEnv returns the settings of a fresh PostgreSQL schema and a store on it
// for the test's own checks.
func pgEnv(t *testing.T) (map[string]string, *store.Store) {
	t.Helper()
	opts := storetest.Options(t, store.Postgres)
	// The data dir (wallet development credentials) is the test's own:
	// the default ./farebox-data would land in the source tree.
	// Load from one address: the rate limits are not what these tests measure.
	env := map[string]string{"FAREBOX_LOG_FORMAT": "json", "FAREBOX_RATE_LIMIT": "0",
		"FAREBOX_CAPABILITY_RATE_LIMIT": "0", "FAREBOX_CLIENT_RATE_LIMIT": "0",
		"FAREBOX_DATABASE_URL": opts.URL + "&search_path=" + opts.Schema, "FAREBOX_DATA_DIR": t.TempDir()}
	seedDevKeys(t, env["FAREBOX_DATA_DIR"])
	cli(t, env, "migrate")
	s, err := store.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return env, s
}

// sqliteEnv returns settings on a fresh SQLite data dir of the test's own,
// with extra added to them.
func sqliteEnv(t *testing.T, extra map[string]string) map[string]string {
	t.Helper()
	env := map[string]string{"FAREBOX_DATA_DIR": storetest.Options(t, store.SQLite).DataDir}
	seedDevKeys(t, env["FAREBOX_DATA_DIR"])
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// migratedEnv returns the settings of a fresh, migrated installation on
// engine and a store on it for the test's own checks (pgEnv or sqliteEnv).
func migratedEnv(t *testing.T, engine store.Engine) (map[string]string, *store.Store) {
	t.Helper()
	if engine == store.Postgres {
		return pgEnv(t)
	}
	// A copy of the migrated database storetest keeps (what `farebox
	// migrate --create` makes, without migrating again per test).
	env := map[string]string{"FAREBOX_DATA_DIR": storetest.Migrated(t, store.SQLite).DataDir}
	seedDevKeys(t, env["FAREBOX_DATA_DIR"])
	s, err := store.Open(context.Background(), store.Options{DataDir: env["FAREBOX_DATA_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return env, s
}

// servePartner migrates a new installation with env, creates an account
// and starts serve: it returns the instance and the account's API key.
func servePartner(t *testing.T, env map[string]string) (*instance, string) {
	t.Helper()
	cli(t, env, "migrate", "--create")
	_, key := newKey(t, env)
	return startServe(t, env), key
}

// loadUntilStopped calls step(w, i) over and over from each of workers
// goroutines (w the worker, i its step) until stop is called; stop returns
// once every worker has finished its step.
func loadUntilStopped(workers int, step func(w, i int)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				step(w, i)
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

// newKey creates an account with the CLI and returns its id and key.
func newKey(t *testing.T, env map[string]string, extra ...string) (string, string) {
	t.Helper()
	var created struct {
		AccountID string `json:"account_id"`
		APIKey    string `json:"api_key"`
	}
	args := append([]string{"accounts", "create", "--name", "Partner", "--json"}, extra...)
	if err := json.Unmarshal([]byte(cli(t, env, args...)), &created); err != nil {
		t.Fatal(err)
	}
	return created.AccountID, created.APIKey
}

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) m() map[string]any {
	var v map[string]any
	_ = json.Unmarshal(r.body, &v)
	return v
}

var testClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// call sends one request; body is JSON-encoded unless nil. It returns a
// zero reply (status 0) when the connection fails.
func call(base, method, path, key string, body any, hdr map[string]string) reply {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := testClient.Do(req)
	if err != nil {
		return reply{}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return reply{}
	}
	return reply{status: res.StatusCode, header: res.Header, body: b}
}

// must calls and fails the test unless the status is want.
func must(t *testing.T, want int, base, method, path, key string, body any) reply {
	t.Helper()
	r := call(base, method, path, key, body, nil)
	if r.status != want {
		t.Fatalf("%s %s: %d %s (want %d)", method, path, r.status, r.body, want)
	}
	return r
}

// products returns product ids by "ticket_type/customer_type" for Berlin.
func products(t *testing.T, base, key string) map[string]string {
	t.Helper()
	var ps []map[string]any
	r := must(t, 200, base, "GET", "/v2/products/search_by_city_name.json?city_name=Berlin", key, nil)
	if err := json.Unmarshal(r.body, &ps); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range ps {
		out[p["ticket_type"].(string)+"/"+p["customer_type"].(string)] = p["id"].(string)
	}
	return out
}

// photoID activates a single ticket; photoIDMonthly a subscription (which
// takes the holder's postal code).
var photoID = map[string]any{"identification_medium": map[string]any{"photo_id_lite": map[string]any{
	"first_name": "Erika", "last_name": "Musterfrau", "birth_date": "1964-08-12"}}}
var photoIDMonthly = map[string]any{"identification_medium": photoID["identification_medium"],
	"tariff_settings": map[string]any{"german_postal_code": "10115"}}

func str(v any) string { s, _ := v.(string); return s }

func countRows(t *testing.T, s *store.Store, table string) int {
	t.Helper()
	n, err := s.Read().CountRows(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls cond every 100 ms until it holds or limit passes.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hasAll reports whether s contains every one of subs.
func hasAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// metric returns the value of the sample whose line starts with series
// (name and labels exactly as exposed) on an instance's /metrics, or -1.
func (in *instance) metric(t *testing.T, series string) float64 {
	t.Helper()
	r := call(in.url(), "GET", "/metrics", "", nil, nil)
	for _, line := range strings.Split(string(r.body), "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err != nil {
				t.Fatalf("metric %s: %q", series, line)
			}
			return v
		}
	}
	return -1
}
