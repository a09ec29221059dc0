// Package redislimit keeps the rate limits' state (ratelimit.Store) in
// Redis, shared by every instance: one limit across instances, and a
// sign-in lock that holds on the next instance and after a restart.
//
// A token is taken by one Lua script (EVALSHA, falling back to EVAL once
// per connection the script is not cached on): the read, the refill and
// the write happen atomically in Redis, so two instances cannot both take
// the last token. The bucket is the same token bucket as ratelimit.Local,
// in the same arithmetic (the caller's clock in microseconds), so a single
// instance answers the same with either store. Every key expires once it
// would be back to its empty state (a full bucket, a failure window
// passed), so Redis holds only the limits in use. Key names never carry
// what the caller named the limit by (an API key id, a coupon id, an
// address, a user name): they are an HMAC of it.
package redislimit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/ratelimit"
	"github.com/redis/go-redis/v9"
)

// Store is a ratelimit.Store in Redis.
type Store struct {
	c      redis.Cmdable
	prefix string
	secret []byte
}

var _ ratelimit.Store = (*Store)(nil)

// Timeouts of a client from Dial the URL leaves unset: connecting
// (a Redis that is gone is noticed within a quarter second), a command's
// read and write, and the wait for a free connection. A limit answered
// locally after half a second beats a request that waits for a Redis that
// is gone; a busy instance (every connection in use) waits longer before
// it calls Redis unreachable.
const (
	DialTimeout    = 250 * time.Millisecond
	CommandTimeout = 500 * time.Millisecond
	PoolTimeout    = time.Second
)

// Dial returns a client of the redis:// (or rediss://) URL with the
// timeouts above where the URL sets none, at least 64 connections per
// instance, and no retry of a failed command (the caller falls back
// instead; a take retransmitted after Redis ran it would take twice). It
// does not connect yet. Store takes it as it is (a round trip per take on
// a connection of its own) or, as serve does, its automatic pipeline
// (Pipelined).
func Dial(url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&opt.DialTimeout, DialTimeout}, {&opt.ReadTimeout, CommandTimeout}, {&opt.WriteTimeout, CommandTimeout}, {&opt.PoolTimeout, PoolTimeout}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	opt.PoolSize = max(opt.PoolSize, 64)
	opt.MaxRetries = -1
	opt.DisableIdentity = true
	return redis.NewClient(opt), nil
}

// Pipelined is c's automatic pipeline: the takes of the requests in
// flight at one moment go to Redis together, in one write and one read,
// instead of one round trip each. It costs a take less than half the CPU
// in farebox and two thirds in Redis (BenchmarkTakeParallel); its API is
// marked experimental by go-redis. A queued command waits for its batch
// (the command timeouts above), not for the request's context.
func Pipelined(c *redis.Client) (redis.Cmdable, error) {
	return c.AutoPipeline()
}

// New returns the store on c. Every key starts with prefix (instances
// that share limits use the same one); secret keys the HMAC of the names
// (every instance must use the same one, as it must the session key).
func New(c redis.Cmdable, prefix string, secret []byte) *Store {
	return &Store{c: c, prefix: prefix, secret: secret}
}

// key is the Redis key of the caller's name: the prefix, the kind ("b"
// bucket, "f" failures) and 128 bits of an HMAC-SHA256 of the name.
func (s *Store) key(kind, name string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(name))
	return s.prefix + kind + ":" + hex.EncodeToString(m.Sum(nil)[:16])
}

// take is the token bucket of ratelimit.Local. ARGV: rate (per second),
// burst, now (µs). The bucket is a hash of t (tokens) and a (when, µs);
// it expires a second after it would be full again (at most a week).
var take = redis.NewScript(`
local rate, burst, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local v = redis.call('HMGET', KEYS[1], 't', 'a')
local tokens, at = burst, now
if v[1] and v[2] then tokens, at = tonumber(v[1]), tonumber(v[2]) end
local elapsed = (now - at) / 1e6
if elapsed < 0 then elapsed = 0 end
local level = math.min(burst, tokens + elapsed * rate)
if now > at then at = now end
local ok = 0
if level >= 1 then level = level - 1; ok = 1 end
local ttl = math.min(math.ceil((burst - level) / rate * 1000) + 1000, 604800000)
redis.call('HSET', KEYS[1], 't', string.format('%.17g', level), 'a', string.format('%.17g', at))
redis.call('PEXPIRE', KEYS[1], ttl)
return {ok, string.format('%.17g', level)}
`)

// Take takes one token from key's bucket (ratelimit.Store).
func (s *Store) Take(ctx context.Context, key string, l ratelimit.Limit, now time.Time) (ratelimit.Taken, error) {
	if l.Rate <= 0 {
		return ratelimit.Taken{}, errors.New("redislimit: a bucket needs a positive rate")
	}
	res, err := take.Run(ctx, s.c, []string{s.key("b", key)},
		strconv.FormatFloat(l.Rate, 'g', -1, 64), l.Burst, now.UnixMicro()).Slice()
	if err != nil {
		return ratelimit.Taken{}, err
	}
	if len(res) != 2 {
		return ratelimit.Taken{}, fmt.Errorf("redislimit: take answered %v", res)
	}
	ok, _ := res[0].(int64)
	level, _ := res[1].(string)
	tokens, err := strconv.ParseFloat(level, 64)
	if err != nil {
		return ratelimit.Taken{}, fmt.Errorf("redislimit: take answered %v", res)
	}
	return ratelimit.Taken{OK: ok == 1, Tokens: tokens}, nil
}

// fail counts a failure. ARGV: window (µs), now (µs), the key's life (ms).
// The counter is a hash of n and l (the last failure, µs).
var fail = redis.NewScript(`
local window, now = tonumber(ARGV[1]), tonumber(ARGV[2])
local v = redis.call('HMGET', KEYS[1], 'n', 'l')
local n, last = 0, 0
if v[1] and v[2] then n, last = tonumber(v[1]), tonumber(v[2]) end
if now - last >= window then n = 0 end
n = n + 1
redis.call('HSET', KEYS[1], 'n', n, 'l', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return n
`)

// Fail counts a failure of key (ratelimit.Store).
func (s *Store) Fail(ctx context.Context, key string, window time.Duration, now time.Time) error {
	return fail.Run(ctx, s.c, []string{s.key("f", key)},
		window.Microseconds(), now.UnixMicro(), (window + time.Second).Milliseconds()).Err()
}

// Failures are key's failures at now (ratelimit.Store).
func (s *Store) Failures(ctx context.Context, key string, window time.Duration, now time.Time) (ratelimit.Failures, error) {
	v, err := s.c.HMGet(ctx, s.key("f", key), "n", "l").Result()
	if err != nil {
		return ratelimit.Failures{}, err
	}
	ns, _ := v[0].(string)
	ls, _ := v[1].(string)
	if ns == "" || ls == "" {
		return ratelimit.Failures{}, nil
	}
	n, err1 := strconv.Atoi(ns)
	last, err2 := strconv.ParseInt(ls, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return ratelimit.Failures{}, fmt.Errorf("redislimit: failures of a key: %w", err)
	}
	f := ratelimit.Failures{N: n, Last: time.UnixMicro(last)}
	if now.Sub(f.Last) >= window {
		return ratelimit.Failures{}, nil
	}
	return f, nil
}

// Forget clears key's failures (ratelimit.Store).
func (s *Store) Forget(ctx context.Context, key string) error {
	return s.c.Del(ctx, s.key("f", key)).Err()
}
