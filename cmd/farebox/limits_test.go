package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/ratelimit/ratelimittest"
	"github.com/farebox/farebox/internal/ratelimit/redislimit"
	"github.com/farebox/farebox/internal/testtool"
)

// redisEnv adds the shared limits on the tests' Redis, under a prefix of
// the test's own, to env.
func redisEnv(t *testing.T, env map[string]string, redisURL string) map[string]string {
	t.Helper()
	prefix := ratelimittest.Prefix(t)
	c, err := redislimit.Dial(ratelimittest.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis at %s (FAREBOX_TEST_REDIS_URL): %v", ratelimittest.RedisURL(), err)
	}
	t.Cleanup(func() {
		keys, _ := c.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
		c.Close()
	})
	env["FAREBOX_REDIS_URL"], env["FAREBOX_REDIS_PREFIX"] = redisURL, prefix
	return env
}

// TestLimitsAcrossInstances runs two `farebox serve` instances on one
// PostgreSQL schema and one Redis: one API key driven as hard as it goes
// through both at once gets its limit once, not twice (within 10 %); five
// failed dashboard sign-ins spread over both lock the address and the user
// on both, and the lock is still there for an instance started after both
// stopped.
func TestLimitsAcrossInstances(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Load)
	env, _ := pgEnv(t)
	const rate, burst = 20, 20
	env["FAREBOX_RATE_LIMIT"], env["FAREBOX_RATE_BURST"] = "20", "20"
	env = redisEnv(t, env, ratelimittest.RedisURL())
	_, key := newKey(t, env)
	a, b := startServe(t, env), startServe(t, env)

	var ok, refused, other atomic.Int64
	start := time.Now()
	stop := loadUntilStopped(8, func(w, i int) {
		on := []*instance{a, b}[w%2]
		switch r := call(on.url(), "GET", "/v1/account.json", key, nil, nil); r.status {
		case 200:
			ok.Add(1)
		case 429:
			refused.Add(1)
		default:
			other.Add(1)
			t.Errorf("status %d: %s", r.status, r.body)
		}
	})
	time.Sleep(4 * time.Second)
	stop()
	elapsed := time.Since(start).Seconds()
	want := burst + rate*elapsed
	got := float64(ok.Load())
	t.Logf("%.2f s, two instances: %d granted (limit %.0f), %d refused, %d other", elapsed, ok.Load(), want, refused.Load(), other.Load())
	if refused.Load() < ok.Load() {
		t.Errorf("the load did not press the limit: %d granted, %d refused", ok.Load(), refused.Load())
	}
	if got > want*1.1 || got < want*0.9 {
		t.Errorf("two instances granted %.0f requests in %.2f s; the shared limit is %.0f (±10 %%)", got, elapsed, want)
	}

	// Sign-in failures: three on a, two on b lock the user on both.
	jar, _ := cookiejar.New(nil) // cookies are per host, not port: one visitor of both
	v := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tok := signInToken(t, v, a.url())
	for i, in := range []*instance{a, a, b, a, b} {
		if st, _ := signIn(t, v, in.url(), tok, "ops@partner.example"); st != 401 {
			t.Fatalf("failure %d: status %d", i+1, st)
		}
	}
	for _, in := range []*instance{a, b} {
		if st, h := signIn(t, v, in.url(), tok, "ops@partner.example"); st != 429 || h.Get("Retry-After") == "" {
			t.Errorf("sixth try on %s: %d, Retry-After %q", in.addr, st, h.Get("Retry-After"))
		}
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	c := startServe(t, env)
	if st, _ := signIn(t, v, c.url(), signInToken(t, v, c.url()), "ops@partner.example"); st != 429 {
		t.Errorf("after both instances restarted: %d, want the lock (429)", st)
	}
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// signInToken loads the dashboard's sign-in form and returns its token.
func signInToken(t *testing.T, v *http.Client, base string) string {
	t.Helper()
	res, err := v.Get(base + "/dashboard/sign-in")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfField.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no CSRF token: %d %.300s", res.StatusCode, b)
	}
	return string(m[1])
}

// signIn posts a wrong password for email and returns the status.
func signIn(t *testing.T, v *http.Client, base, tok, email string) (int, http.Header) {
	t.Helper()
	res, err := v.PostForm(base+"/dashboard/sign-in", url.Values{"csrf_token": {tok}, "email": {email}, "password": {"not the password"}})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header
}

// TestLimitsWhenRedisIsDown: an instance whose Redis is unreachable at
// start-up starts and serves, limiting on its own (the metric says so);
// when Redis comes it shares the limits, and when Redis goes away mid-run
// it goes on serving with a warning in the log and the metric down, never
// a 5xx, and shares again once Redis is back.
func TestLimitsWhenRedisIsDown(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Load)
	proxy := testtool.NewProxy(t, strings.SplitN(ratelimittest.RedisURL(), "/", 4)[2])
	proxy.Cut()
	env := sqliteEnv(t, map[string]string{"FAREBOX_LOG_FORMAT": "json", "FAREBOX_RATE_LIMIT": "1000", "FAREBOX_RATE_BURST": "1000"})
	env = redisEnv(t, env, "redis://"+proxy.Addr+"/0")
	in, key := servePartner(t, env)

	var mu sync.Mutex
	statuses := map[int]int{}
	stop := loadUntilStopped(4, func(w, i int) {
		r := call(in.url(), "GET", "/v1/account.json", key, nil, nil)
		mu.Lock()
		statuses[r.status]++
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	})
	const up, local = "farebox_ratelimit_shared_up", "farebox_ratelimit_local_decisions_total"
	waitFor(t, 10*time.Second, "local decisions while Redis is down at start-up", func() bool { return in.metric(t, local) > 0 })
	if v := in.metric(t, up); v != 0 {
		t.Errorf("%s = %v with Redis down", up, v)
	}
	proxy.Restore(t)
	waitFor(t, 10*time.Second, "Redis to be used once it answers", func() bool { return in.metric(t, up) == 1 })
	before := in.metric(t, local)
	proxy.Cut()
	waitFor(t, 10*time.Second, "the cut to be noticed", func() bool { return in.metric(t, up) == 0 })
	waitFor(t, 10*time.Second, "local decisions after the cut", func() bool { return in.metric(t, local) > before })
	proxy.Restore(t)
	waitFor(t, 10*time.Second, "recovery", func() bool { return in.metric(t, up) == 1 })
	stop()
	mu.Lock()
	defer mu.Unlock()
	for st, n := range statuses {
		if st != 200 {
			t.Errorf("%d answers %d while Redis came and went", n, st)
		}
	}
	logs := in.logs.String()
	if n := strings.Count(logs, "Redis does not answer"); n < 2 {
		t.Errorf("%d warnings of Redis down (want one at start-up, one mid-run):\n%s", n, logs)
	}
	if !hasAll(logs, `"level":"WARN","msg":"Redis does not answer`, "Redis answers again") {
		t.Errorf("logs:\n%s", logs)
	}
	if strings.Count(logs, "Redis answers again") < 2 {
		t.Error("recovery not logged twice")
	}
	t.Logf("statuses %v", statuses)
}
