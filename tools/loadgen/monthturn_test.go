package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/credentials"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/farebox/farebox/internal/wallet/apple"
	"github.com/farebox/farebox/internal/wallet/apple/apnstest"
)

// TestMonthTurnNothingLostOrDuplicated drives -mode monthturn at a small
// N against real `farebox serve` processes (one on SQLite, two on one
// PostgreSQL database) configured as bench/monthturn.sh configures them:
// the run's checks pass (every cycle ordered once, one new ticket per
// subscription, one push per registered device, every pushed pass showing
// the new cycle), and they catch a duplicate: one more push to a device
// makes them fail naming it.
func TestMonthTurnNothingLostOrDuplicated(t *testing.T) {
	testtool.FullSuiteOnly(t, testtool.Load)
	bin := buildFarebox(t)
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		apns, err := apnstest.Start(apnstest.Options{Topic: credentials.DevPassTypeID})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(apns.Close)
		env := serveEnv(t, engine, apns)
		key := testKey(t, bin, env)
		instances := map[store.Engine]int{store.SQLite: 1, store.Postgres: 2}[engine]
		var urls []string
		for range instances {
			urls = append(urls, startServe(t, bin, env))
		}
		const n = 30
		var out bytes.Buffer
		l := &turnLoad{urls: urls, key: key, n: n, conc: 4, apns: apns, passType: credentials.DevPassTypeID, out: &out}
		if err := monthTurnLoad(l); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		want := fmt.Sprintf("checks: %d subscriptions with exactly two cycles ordered once and activated, %d distinct renewed tickets, %d devices pushed exactly once, %d pushes in all, 0 refused", n, n, n, n)
		if !strings.Contains(out.String(), want) || !regexp.MustCompile(`reactivation: p50 \S+ +p95 \S+ +p99 \S+`).MatchString(out.String()) {
			t.Fatalf("report:\n%s\nwant the line %q and the reactivation's percentiles", out.String(), want)
		}

		// A second push to one device is a duplicate the checks name.
		c, err := apple.NewAPNs(apns.Config())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Push(context.Background(), l.subs[7].pushToken); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := l.check(); err == nil || !strings.Contains(err.Error(), "device of "+l.subs[7].sub+" pushed 2 times") {
			t.Fatalf("a duplicated push: %v\n%s", err, out.String())
		}
	})
}

// buildFarebox builds cmd/farebox into the test's temporary directory.
func buildFarebox(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "farebox")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/farebox").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveEnv is the environment of the instances: a fresh database on
// engine, no rate limits, Apple pass updates pushed to apns, whose key
// and certificate (trusted through SSL_CERT_FILE) are written to files.
func serveEnv(t *testing.T, engine store.Engine, apns *apnstest.Server) []string {
	t.Helper()
	dir := t.TempDir()
	p8, cert := testtool.WriteFile(t, dir, "apns.p8", apns.P8), testtool.WriteFile(t, dir, "apns.pem", apns.CertPEM())
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "FAREBOX_ADDR=127.0.0.1:0", "FAREBOX_LOG_FORMAT=json",
		"FAREBOX_LOG_LEVEL=warn", "FAREBOX_RATE_LIMIT=0", "FAREBOX_CAPABILITY_RATE_LIMIT=0", "FAREBOX_CLIENT_RATE_LIMIT=0",
		"FAREBOX_SHARED_DATA=" + os.Getenv("FAREBOX_SHARED_DATA"), "SSL_CERT_FILE=" + cert,
		"FAREBOX_PUBLIC_URL=https://tickets.example.com", "FAREBOX_APNS_KEY=" + p8, "FAREBOX_APNS_KEY_ID=" + apns.KeyID,
		"FAREBOX_APNS_TEAM_ID=" + apns.TeamID, "FAREBOX_APNS_ENDPOINT=" + apns.URL, "FAREBOX_DATA_DIR=" + t.TempDir()}
	if engine == store.Postgres {
		opts := storetest.Options(t, engine)
		env = append(env, "FAREBOX_DATABASE_URL="+opts.URL+"&search_path="+opts.Schema)
	}
	return env
}

// testKey creates the partner's account and returns its test key.
func testKey(t *testing.T, bin string, env []string) string {
	t.Helper()
	var key struct {
		APIKey string `json:"api_key"`
	}
	for _, args := range [][]string{{"--create", "--name", "Monatswechsel GmbH"}, {"--name", "Monatswechsel GmbH", "--test"}} {
		cmd := exec.Command(bin, append(append([]string{"accounts", "create"}, args...), "--json")...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("accounts create %v: %v %s", args, err, out)
		}
		if err := json.Unmarshal(out, &key); err != nil {
			t.Fatalf("accounts create: %v %s", err, out)
		}
	}
	return key.APIKey
}

// startServe runs `farebox serve` with env until the test ends and returns
// its base URL.
func startServe(t *testing.T, bin string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(env[:len(env):len(env)], "FAREBOX_LOG_LEVEL=info")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	addr, done := make(chan string, 1), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Msg == "farebox listening" {
				addr <- m.Addr
			}
			mu.Lock()
			logs.Write(append(sc.Bytes(), '\n'))
			mu.Unlock()
		}
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			mu.Lock()
			t.Logf("farebox serve:\n%s", logs.String())
			mu.Unlock()
		}
	})
	select {
	case a := <-addr:
		return "http://" + a
	case <-done:
		t.Fatalf("farebox serve exited at start")
	case <-time.After(2 * time.Minute):
		t.Fatalf("farebox serve did not start")
	}
	return ""
}
