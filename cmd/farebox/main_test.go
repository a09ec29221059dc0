package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// syncBuffer is a bytes.Buffer safe for the server's concurrent log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func envFrom(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// serveStops runs `farebox serve` on 127.0.0.1:0 with env (in a data
// directory of its own unless env names one) and checks that it stops
// with an error saying each of want; what names the case. It returns the
// data directory.
func serveStops(t *testing.T, what string, env map[string]string, want ...string) (dataDir string) {
	t.Helper()
	e := map[string]string{"FAREBOX_DATA_DIR": filepath.Join(t.TempDir(), "data"), "FAREBOX_ADDR": "127.0.0.1:0"}
	maps.Copy(e, env)
	err := serve(context.Background(), nil, envFrom(e), io.Discard, io.Discard, nil)
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %v; want it to say %q", what, err, w)
		}
	}
	return e["FAREBOX_DATA_DIR"]
}

// cli runs one operator command and returns its stdout.
func cli(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, envFrom(env), nil, &out, &errb); err != nil {
		t.Fatalf("farebox %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// TestServeEndToEnd starts the real binary's run function on :0 on both
// engines, creates an account with the CLI, calls the API with its key,
// revokes it, and shuts down gracefully.
//
// The usage ledger runs in its default mode per engine (journal on SQLite,
// database commits on PostgreSQL) and in journal mode on PostgreSQL; the
// usage report at the end shows the recorded requests in every case.
func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		engine  store.Engine
		journal string
	}{{"sqlite", store.SQLite, "auto"}, {"postgres", store.Postgres, "auto"}, {"postgres-journal", store.Postgres, "journal"}}
	for _, c := range cases {
		engine := c.engine
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opts := storetest.Options(t, engine)
			env := map[string]string{"FAREBOX_DATA_DIR": t.TempDir(), "FAREBOX_ADDR": "127.0.0.1:0", "FAREBOX_LOG_FORMAT": "json",
				"FAREBOX_USAGE_LEDGER_JOURNAL": c.journal}
			if engine == store.SQLite {
				env["FAREBOX_DATA_DIR"] = opts.DataDir
			}
			if engine == store.Postgres {
				env["FAREBOX_DATABASE_URL"] = opts.URL + "&search_path=" + opts.Schema
			}
			// migrate explicitly, as an operator installing or rolling out
			// would (a new embedded database only with --create).
			if out := cli(t, env, "migrate", "--create"); !strings.Contains(out, string(engine)) {
				t.Fatalf("migrate output: %q", out)
			}
			var created struct {
				AccountID string `json:"account_id"`
				APIKey    string `json:"api_key"`
			}
			out := cli(t, env, "accounts", "create", "--name", "Bahn Partner", "--json")
			if err := json.Unmarshal([]byte(out), &created); err != nil || !strings.HasPrefix(created.APIKey, "fbx_live_") {
				t.Fatalf("accounts create --json printed %q", out)
			}
			var extra map[string]string
			out = cli(t, env, "accounts", "create", "--account", created.AccountID, "--test", "--json")
			if err := json.Unmarshal([]byte(out), &extra); err != nil || !strings.HasPrefix(extra["api_key"], "fbx_test_") || extra["account_id"] != created.AccountID {
				t.Fatalf("second key: %q", out)
			}
			// --name of an existing account with --test: a test key for
			// that account (as the README's first steps expect), not a
			// second account; a new name still makes a new account.
			var byName, fresh map[string]string
			out = cli(t, env, "accounts", "create", "--name", "Bahn Partner", "--test", "--json")
			if err := json.Unmarshal([]byte(out), &byName); err != nil || !strings.HasPrefix(byName["api_key"], "fbx_test_") || byName["account_id"] != created.AccountID {
				t.Fatalf("--name of an existing account with --test: %q, want a test key of %s", out, created.AccountID)
			}
			out = cli(t, env, "accounts", "create", "--name", "Neuer Partner", "--test", "--json")
			if err := json.Unmarshal([]byte(out), &fresh); err != nil || !strings.HasPrefix(fresh["api_key"], "fbx_test_") || fresh["account_id"] == created.AccountID {
				t.Fatalf("--name of a new account with --test: %q", out)
			}
			cli(t, env, "accounts", "create", "--name", "Neuer Partner")
			var out2, errb bytes.Buffer
			if err := run(context.Background(), []string{"accounts", "create", "--name", "Neuer Partner", "--test"}, envFrom(env), nil, &out2, &errb); err == nil || !strings.Contains(err.Error(), "2 accounts are named") {
				t.Errorf("--test with an ambiguous name: err %v, stdout %q", err, out2.String())
			}

			in := startServe(t, env)
			addr, logs := in.addr, in.logs
			get := func(key string) int {
				req, _ := http.NewRequest("GET", "http://"+addr+"/v1/account.json", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res.StatusCode
			}
			if s := get(created.APIKey); s != 200 {
				t.Fatalf("account.json with new key: %d", s)
			}
			list := cli(t, env, "accounts", "list")
			if !strings.Contains(list, "Bahn Partner") || !strings.Contains(list, created.APIKey[:17]) || strings.Contains(list, created.APIKey) {
				t.Errorf("accounts list shows the secret or misses the key:\n%s", list)
			}
			// The dashboard invitation prints a link the server opens once.
			link := strings.Fields(cli(t, env, "accounts", "invite", "--account", created.AccountID, "--email", "Ops@Bahn.example", "--url", "http://"+addr+"/"))[0]
			if !strings.HasPrefix(link, "http://"+addr+"/dashboard/invite?token=") {
				t.Fatalf("invite printed %q", link)
			}
			if res, err := http.Get(link); err != nil || res.StatusCode != 200 {
				t.Fatalf("the invitation link: %v %v", res, err)
			} else {
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if !strings.Contains(string(b), "ops@bahn.example") {
					t.Errorf("the invitation page does not name the address:\n%.1500s", b)
				}
			}
			if out := cli(t, env, "accounts", "revoke", created.APIKey[:17], "--account", created.AccountID); !strings.Contains(out, "revoked 1") {
				t.Errorf("revoke: %q", out)
			}
			// The auth cache holds a key for at most its TTL (5 s by default).
			deadline := time.Now().Add(15 * time.Second)
			for get(created.APIKey) != 401 {
				if time.Now().After(deadline) {
					t.Fatal("revoked key still accepted")
				}
				time.Sleep(200 * time.Millisecond)
			}
			// Every request above was recorded; the journal reaches the
			// database within a second or two.
			deadline = time.Now().Add(10 * time.Second)
			for {
				out := cli(t, env, "usage", "--json")
				if strings.Contains(out, `"endpoint":"GET /v1/account.json"`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("usage report: %q", out)
				}
				time.Sleep(200 * time.Millisecond)
			}
			journalFiles, _ := filepath.Glob(filepath.Join(env["FAREBOX_DATA_DIR"], "usage-journal", "usage-*.log"))
			if journaled := c.journal == "journal" || engine == store.SQLite; journaled != (len(journalFiles) > 0) {
				t.Errorf("journal files %v, journal mode %v", journalFiles, journaled)
			}
			if err := in.stop(); err != nil {
				t.Fatalf("serve returned %v", err)
			}
			if !strings.Contains(logs.String(), `"msg":"stopped"`) || strings.Contains(logs.String(), created.APIKey) {
				t.Errorf("logs miss the shutdown line or contain the key:\n%s", logs.String())
			}
		})
	}
}

func TestServeHelpListsEverySetting(t *testing.T) {
	t.Parallel()
	var errb bytes.Buffer
	err := run(context.Background(), []string{"serve", "--help"}, envFrom(nil), nil, io.Discard, &errb)
	if err == nil {
		t.Fatal("--help should end with flag.ErrHelp")
	}
	for _, want := range []string{"-addr", "FAREBOX_ADDR", "127.0.0.1:8080", "-data-dir", "FAREBOX_DATA_DIR", "./farebox-data", "FAREBOX_DATABASE_URL", "-usage-ledger"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	if err := run(context.Background(), []string{"serve", "--timezone", "Mars/Base"}, envFrom(nil), nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "timezone") {
		t.Errorf("bad timezone accepted: %v", err)
	}
	if err := run(context.Background(), []string{"bogus"}, envFrom(nil), nil, io.Discard, io.Discard); err != errUsage {
		t.Errorf("unknown command: %v", err)
	}
}
