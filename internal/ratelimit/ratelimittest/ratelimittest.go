// Package ratelimittest is the conformance suite every ratelimit.Store
// passes (Local, Redis, a Fallback in front of Redis), and the Redis
// settings of the tests.
package ratelimittest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/ratelimit"
)

// RedisURL is the Redis of the tests: FAREBOX_TEST_REDIS_URL, or the local
// one (127.0.0.1:6379, as on the developers' machines and in CI).
func RedisURL() string {
	if u := os.Getenv("FAREBOX_TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// Prefix is a key prefix of the test's own, so that tests running at once
// never share a key.
func Prefix(t testing.TB) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return "farebox-test:" + name + ":" + hex.EncodeToString(b) + ":"
}

var t0 = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

// Run runs the suite. open returns a store on one shared state: every
// call for one test sees the same buckets (as two instances on one Redis
// do).
func Run(t *testing.T, open func(t *testing.T) func() ratelimit.Store) {
	t.Run("BucketDrainsAndRefills", func(t *testing.T) { bucketDrainsAndRefills(t, open(t)()) })
	t.Run("FractionsAndWait", func(t *testing.T) { fractionsAndWait(t, open(t)()) })
	t.Run("ClockBackwards", func(t *testing.T) { clockBackwards(t, open(t)()) })
	t.Run("KeysApart", func(t *testing.T) { keysApart(t, open(t)()) })
	t.Run("Extremes", func(t *testing.T) { extremes(t, open(t)()) })
	t.Run("ConcurrentTwins", func(t *testing.T) { concurrentTwins(t, open(t)) })
	t.Run("Failures", func(t *testing.T) { failureCounts(t, open(t)()) })
}

func take(t *testing.T, s ratelimit.Store, key string, l ratelimit.Limit, now time.Time) ratelimit.Taken {
	t.Helper()
	got, err := s.Take(context.Background(), key, l, now)
	if err != nil {
		t.Fatalf("take %q: %v", key, err)
	}
	return got
}

func want(t *testing.T, what string, got ratelimit.Taken, ok bool, tokens float64) {
	t.Helper()
	if got.OK != ok || got.Tokens != tokens {
		t.Errorf("%s: got %+v, want ok %v with %v tokens", what, got, ok, tokens)
	}
}

// A full bucket grants Burst tokens at once, refuses the next, refills at
// Rate and never above Burst.
func bucketDrainsAndRefills(t *testing.T, s ratelimit.Store) {
	l := ratelimit.Limit{Rate: 1, Burst: 3}
	for i := 2; i >= 0; i-- {
		want(t, "burst", take(t, s, "key:a", l, t0), true, float64(i))
	}
	want(t, "empty", take(t, s, "key:a", l, t0), false, 0)
	want(t, "a second later", take(t, s, "key:a", l, t0.Add(time.Second)), true, 0)
	want(t, "again", take(t, s, "key:a", l, t0.Add(time.Second)), false, 0)
	// An hour idle refills to the burst, not beyond.
	later := t0.Add(time.Hour)
	for i := 2; i >= 0; i-- {
		want(t, "after an hour", take(t, s, "key:a", l, later), true, float64(i))
	}
	want(t, "after an hour, empty", take(t, s, "key:a", l, later), false, 0)
}

// The level is kept in fractions, and a refusal says how long until the
// next whole token.
func fractionsAndWait(t *testing.T, s ratelimit.Store) {
	l := ratelimit.Limit{Rate: 2, Burst: 2}
	take(t, s, "k", l, t0)
	take(t, s, "k", l, t0)
	got := take(t, s, "k", l, t0.Add(250*time.Millisecond))
	want(t, "quarter second", got, false, 0.5)
	if w := got.Wait(l); w != 250*time.Millisecond {
		t.Errorf("wait %v, want 250ms", w)
	}
	want(t, "half second", take(t, s, "k", l, t0.Add(500*time.Millisecond)), true, 0)
	// Rate 0.5 per second: the RateLimit header's window arithmetic.
	slow := ratelimit.Limit{Rate: 0.5, Burst: 2}
	take(t, s, "slow", slow, t0)
	take(t, s, "slow", slow, t0)
	got = take(t, s, "slow", slow, t0.Add(time.Second))
	want(t, "slow, a second later", got, false, 0.5)
	if w := got.Wait(slow); w != time.Second {
		t.Errorf("slow wait %v, want 1s", w)
	}
}

// A clock reading before the bucket's last one (another instance's clock
// a little behind) refills nothing and breaks nothing.
func clockBackwards(t *testing.T, s ratelimit.Store) {
	l := ratelimit.Limit{Rate: 1, Burst: 2}
	take(t, s, "k", l, t0.Add(time.Second))
	want(t, "earlier", take(t, s, "k", l, t0), true, 0)
	want(t, "earlier, empty", take(t, s, "k", l, t0), false, 0)
	want(t, "the later clock refills from its own reading", take(t, s, "k", l, t0.Add(2*time.Second)), true, 0)
}

// Keys, however written, have buckets of their own.
func keysApart(t *testing.T, s ratelimit.Store) {
	l := ratelimit.Limit{Rate: 1, Burst: 1}
	long := strings.Repeat("x", 10_000)
	keys := []string{"key:a", "key:b", "client:203.0.113.5", "client:2001:db8:1:2::/64",
		"user:مستخدم@مثال.مصر", "user:משתמש", "user:用户@例子.中国", "user:🚆@example.org", "", long, long + "y"}
	for _, k := range keys {
		want(t, "first of "+k[:min(len(k), 40)], take(t, s, k, l, t0), true, 0)
	}
	for _, k := range keys {
		want(t, "second of "+k[:min(len(k), 40)], take(t, s, k, l, t0), false, 0)
	}
}

// The largest bursts and rates and the smallest rates keep their
// arithmetic.
func extremes(t *testing.T, s ratelimit.Store) {
	huge := ratelimit.Limit{Rate: 1e9, Burst: 1 << 30}
	want(t, "huge", take(t, s, "huge", huge, t0), true, float64(1<<30-1))
	want(t, "huge, a nanosecond... a microsecond later", take(t, s, "huge", huge, t0.Add(time.Microsecond)), true, float64(1<<30-1))
	tiny := ratelimit.Limit{Rate: 1e-6, Burst: 1}
	want(t, "tiny", take(t, s, "tiny", tiny, t0), true, 0)
	got := take(t, s, "tiny", tiny, t0.Add(time.Hour))
	if got.OK || got.Tokens < 0.0035 || got.Tokens > 0.0037 {
		t.Errorf("tiny rate an hour later: %+v", got)
	}
	// Burst 0 grants nothing (a limit that is on but empty).
	want(t, "burst 0", take(t, s, "zero", ratelimit.Limit{Rate: 1, Burst: 0}, t0), false, 0)
}

// Two stores on one state (two instances) taking at once from one bucket
// grant exactly its burst between them: nothing races.
func concurrentTwins(t *testing.T, open func() ratelimit.Store) {
	a, b := open(), open()
	const burst = 200
	l := ratelimit.Limit{Rate: 1e-3, Burst: burst}
	var mu sync.Mutex
	granted := 0
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if w%2 == 1 {
				s = b
			}
			for range 25 {
				got, err := s.Take(context.Background(), "twin", l, t0)
				if err != nil {
					t.Error(err)
					return
				}
				if got.OK {
					mu.Lock()
					granted++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if granted != burst {
		t.Errorf("16 workers on two stores took %d tokens of a burst of %d", granted, burst)
	}
}

// Failures count within the window from the last one, restart after it,
// and Forget clears them.
func failureCounts(t *testing.T, s ratelimit.Store) {
	ctx := context.Background()
	w := 15 * time.Minute
	get := func(key string, now time.Time) ratelimit.Failures {
		t.Helper()
		f, err := s.Failures(ctx, key, w, now)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fail := func(key string, now time.Time) {
		t.Helper()
		if err := s.Fail(ctx, key, w, now); err != nil {
			t.Fatal(err)
		}
	}
	if f := get("user:ops", t0); f.N != 0 {
		t.Errorf("no failure yet: %+v", f)
	}
	for i := range 5 {
		fail("user:ops", t0.Add(time.Duration(i)*time.Minute))
	}
	if f := get("user:ops", t0.Add(10*time.Minute)); f.N != 5 || !f.Last.Equal(t0.Add(4*time.Minute)) {
		t.Errorf("after 5 failures: %+v", f)
	}
	if f := get("user:ops", t0.Add(4*time.Minute+w)); f.N != 0 {
		t.Errorf("a window after the last: %+v", f)
	}
	if f := get("user:🚆", t0); f.N != 0 {
		t.Errorf("another key: %+v", f)
	}
	fail("user:ops", t0.Add(4*time.Minute+w)) // a window later: counting restarts
	if f := get("user:ops", t0.Add(5*time.Minute+w)); f.N != 1 {
		t.Errorf("restarted count: %+v", f)
	}
	if err := s.Forget(ctx, "user:ops"); err != nil {
		t.Fatal(err)
	}
	if f := get("user:ops", t0.Add(5*time.Minute+w)); f.N != 0 {
		t.Errorf("after Forget: %+v", f)
	}
	if err := s.Forget(ctx, "user:never-seen"); err != nil {
		t.Errorf("Forget of an unknown key: %v", err)
	}
}
