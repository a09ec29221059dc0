package redislimit_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/ratelimit"
	"github.com/farebox/farebox/internal/ratelimit/ratelimittest"
	"github.com/farebox/farebox/internal/ratelimit/redislimit"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/redis/go-redis/v9"
)

// client connects to the tests' Redis (ratelimittest.RedisURL); a Redis
// that does not answer fails the test.
func client(t testing.TB, url string) *redis.Client {
	t.Helper()
	c, err := redislimit.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// clean deletes the test's keys when it ends.
func clean(t testing.TB, prefix string) {
	c := client(t, ratelimittest.RedisURL())
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis at %s (FAREBOX_TEST_REDIS_URL): %v", ratelimittest.RedisURL(), err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := c.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
}

var secret = []byte("test secret")

func TestRedisConformance(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T) func() ratelimit.Store {
		prefix := ratelimittest.Prefix(t)
		clean(t, prefix)
		return func() ratelimit.Store {
			return redislimit.New(client(t, ratelimittest.RedisURL()), prefix, secret)
		}
	})
}

// TestPipelinedConformance: the store on the automatic pipeline (what
// serve uses).
func TestPipelinedConformance(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T) func() ratelimit.Store {
		prefix := ratelimittest.Prefix(t)
		clean(t, prefix)
		return func() ratelimit.Store { return redislimit.New(pipelined(t, ratelimittest.RedisURL()), prefix, secret) }
	})
}

// pipelined is the automatic pipeline of a client of url.
func pipelined(t testing.TB, url string) redis.Cmdable {
	ap, err := redislimit.Pipelined(client(t, url))
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

// TestFallbackOnRedisConformance: a Fallback in front of a Redis that
// answers is the Redis store.
func TestFallbackOnRedisConformance(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T) func() ratelimit.Store {
		prefix := ratelimittest.Prefix(t)
		clean(t, prefix)
		return func() ratelimit.Store {
			return &ratelimit.Fallback{Shared: redislimit.New(pipelined(t, ratelimittest.RedisURL()), prefix, secret), Local: &ratelimit.Local{}}
		}
	})
}

// TestRedisKeys: a key's name is an HMAC of what the caller named it by
// (no key id, coupon id, address or user name in Redis), every key
// expires, a bucket once it would be full and a failure count a window
// (and a second) after the last failure.
func TestRedisKeys(t *testing.T) {
	ctx := context.Background()
	prefix := ratelimittest.Prefix(t)
	clean(t, prefix)
	c := client(t, ratelimittest.RedisURL())
	s := redislimit.New(c, prefix, secret)
	now := time.Now()
	names := []string{"key:farebox-key-0190", "client:203.0.113.5", "user:ops@example.org"}
	if _, err := s.Take(ctx, names[0], ratelimit.Limit{Rate: 10, Burst: 100}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, names[1], ratelimit.Limit{Rate: 0.5, Burst: 2}, now); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, names[2], 15*time.Minute, now); err != nil {
		t.Fatal(err)
	}
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys %v %v", keys, err)
	}
	ttls := map[string]time.Duration{}
	for _, k := range keys {
		for _, n := range names {
			if strings.Contains(k, n) || strings.Contains(k, strings.SplitN(n, ":", 2)[1]) {
				t.Errorf("key %q names %q", k, n)
			}
		}
		rest := strings.TrimPrefix(k, prefix)
		if len(rest) != 2+32 {
			t.Errorf("key %q: want kind and 32 hex digits after the prefix", k)
		}
		ttls[rest[:1]+rest[len(rest)-4:]], _ = c.PTTL(ctx, k).Result()
		if d := c.PTTL(ctx, k).Val(); d <= 0 {
			t.Errorf("key %q does not expire (%v)", k, d)
		}
	}
	// Bucket of 100 at 10/s, one taken: full after 0.1 s, expires 1.1 s on.
	// Bucket of 2 at 0.5/s, one taken: full after 2 s, expires after 3 s.
	// Failure count: 15 min + 1 s.
	var b, f []time.Duration
	for k, d := range ttls {
		if k[0] == 'b' {
			b = append(b, d)
		} else {
			f = append(f, d)
		}
	}
	for _, d := range b {
		if d > 3*time.Second || d < 900*time.Millisecond {
			t.Errorf("bucket expires after %v", d)
		}
	}
	if len(f) != 1 || f[0] > 15*time.Minute+time.Second || f[0] < 15*time.Minute {
		t.Errorf("failure count expires after %v", f)
	}
	// Another secret names the same limit differently.
	other := redislimit.New(c, prefix, []byte("another secret"))
	if got, _ := other.Take(ctx, names[1], ratelimit.Limit{Rate: 0.5, Burst: 1}, now); !got.OK {
		t.Error("a store with another secret shares the bucket")
	}
}

// TestRedisUnreachableMidRun: Redis going away under a Fallback (the
// connection cut, new ones refused) turns every answer local, without an
// error and without waiting on Redis for each request; when Redis is back
// the shared bucket, as it was left, answers again.
func TestRedisUnreachableMidRun(t *testing.T) {
	ctx := context.Background()
	prefix := ratelimittest.Prefix(t)
	clean(t, prefix)
	proxy := testtool.NewProxy(t, strings.TrimPrefix(strings.SplitN(ratelimittest.RedisURL(), "/", 4)[2], ""))
	var down, up, locals atomic.Int64
	f := &ratelimit.Fallback{Shared: redislimit.New(pipelined(t, "redis://"+proxy.Addr+"/0"), prefix, secret), Local: &ratelimit.Local{}, Retry: 100 * time.Millisecond,
		OnChange: func(d bool, err error) {
			if d {
				down.Add(1)
			} else {
				up.Add(1)
			}
		}, OnLocal: func() { locals.Add(1) }}
	l := ratelimit.Limit{Rate: 1e-3, Burst: 3}
	now := time.Now()
	if got, _ := f.Take(ctx, "key:a", l, now); !got.OK || got.Tokens != 2 {
		t.Fatalf("first take: %+v", got)
	}
	proxy.Cut()
	start := time.Now()
	granted := 0
	for range 1000 {
		got, err := f.Take(ctx, "key:a", l, now)
		if err != nil {
			t.Fatal(err)
		}
		if got.OK {
			granted++
		}
	}
	took := time.Since(start)
	if granted != 3 { // the local bucket: full, never touched before
		t.Errorf("degraded: %d granted, want the local burst 3", granted)
	}
	if down.Load() != 1 || locals.Load() != 1000 {
		t.Errorf("down %d times, %d local answers", down.Load(), locals.Load())
	}
	t.Logf("1,000 takes with Redis cut: %v", took)
	proxy.Restore(t)
	deadline := time.Now().Add(10 * time.Second)
	for up.Load() == 0 && time.Now().Before(deadline) {
		f.Take(ctx, "key:other", l, now)
		time.Sleep(20 * time.Millisecond)
	}
	if up.Load() != 1 {
		t.Fatal("never recovered")
	}
	if got, _ := f.Take(ctx, "key:a", l, now); !got.OK || got.Tokens != 1 {
		t.Errorf("after recovery the shared bucket (2 left) answers: %+v", got)
	}
}

// BenchmarkTakeParallel is one token taken by 64 goroutines at once (as
// requests in flight take them): in process, in Redis over the
// connection pool (what serve uses), and in Redis through go-redis's
// automatic pipelining (experimental in go-redis), side by side in one
// run. Besides the wall time per take it reports the CPU per take of this
// process (getrusage) and of redis-server (/proc, its process_id from
// INFO): on a loaded machine those are what a take costs.
func BenchmarkTakeParallel(b *testing.B) {
	prefix := ratelimittest.Prefix(b)
	clean(b, prefix)
	c := client(b, ratelimittest.RedisURL())
	ap := pipelined(b, ratelimittest.RedisURL())
	redisPID := redisProcess(b, c)
	l := ratelimit.Limit{Rate: 1e9, Burst: 1 << 30}
	for _, s := range []struct {
		name  string
		store ratelimit.Store
	}{{"local", &ratelimit.Local{}}, {"redis-pool", redislimit.New(c, prefix, secret)}, {"redis-autopipeline", redislimit.New(ap, prefix, secret)}} {
		b.Run(s.name, func(b *testing.B) {
			b.SetParallelism(32) // 64 goroutines on 2 cores
			var n atomic.Int64
			self0, redis0 := selfCPU(), procCPU(b, redisPID)
			b.RunParallel(func(pb *testing.PB) {
				key := "key:" + strconv.FormatInt(n.Add(1)%8, 10)
				for pb.Next() {
					if got, err := s.store.Take(context.Background(), key, l, time.Now()); err != nil || !got.OK {
						b.Fatal(got, err)
					}
				}
			})
			ops := float64(b.N)
			b.ReportMetric(float64((selfCPU()-self0).Microseconds())/ops, "cpu-µs/op")
			b.ReportMetric(float64((procCPU(b, redisPID)-redis0).Microseconds())/ops, "redis-cpu-µs/op")
		})
	}
}

// redisProcess is the process id of the Redis c talks to (INFO server).
func redisProcess(b *testing.B, c *redis.Client) int {
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			pid, _ := strconv.Atoi(v)
			return pid
		}
	}
	b.Fatal("no process_id in INFO server")
	return 0
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is another process's user and system CPU time so far
// (/proc/PID/stat, fields 14 and 15, in clock ticks of 10 ms).
func procCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatalf("redis-server is not on this machine: %v", err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
