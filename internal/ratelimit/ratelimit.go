// Package ratelimit is where the rate limits keep their state: token
// buckets (the per-key limit, the limits of requests without a key) and
// failure counts (the sign-in throttle). Store is the one interface;
// Local keeps the state in this process (the default: every instance
// limits on its own), package redislimit keeps it in Redis shared by every
// instance, and Fallback puts a shared store in front of a local one so
// that the shared store being down degrades to per-instance limits rather
// than to an outage (docs/scaling.md "Limits across instances").
//
// Every method takes the caller's clock reading (now): the service clock,
// which tests replace with a fake one. The stores hold no clock of their
// own, so Local and Redis answer the same questions the same way.
package ratelimit

import (
	"context"
	"math"
	"time"
)

// Limit is a token bucket: Rate tokens per second, at most Burst of them.
type Limit struct {
	Rate  float64
	Burst int
}

// On reports whether the limit applies (a Rate or Burst of 0 turns it off).
func (l Limit) On() bool { return l.Rate > 0 && l.Burst > 0 }

// Taken is a bucket after a Take: whether the token was granted and the
// tokens left (a fraction while it refills).
type Taken struct {
	OK     bool
	Tokens float64
}

// Wait is how long until the bucket holds a whole token again (0 when it
// does).
func (t Taken) Wait(l Limit) time.Duration {
	if t.Tokens >= 1 || l.Rate <= 0 {
		return 0
	}
	return time.Duration((1 - t.Tokens) / l.Rate * float64(time.Second))
}

// Failures are the failures counted for a key: N of them, the last at
// Last. N is 0 when the last one is a window or more ago.
type Failures struct {
	N    int
	Last time.Time
}

// Store holds the limits' state. Keys are the callers' names of a bucket
// or a counter ("key:<key id>", "client:203.0.113.5"); a store that keeps
// them outside the process hashes them first.
type Store interface {
	// Take takes one token from key's bucket of limit l at now. A bucket
	// never seen (or expired) is full; it refills at l.Rate up to l.Burst.
	Take(ctx context.Context, key string, l Limit, now time.Time) (Taken, error)
	// Fail counts a failure of key at now. Failures further apart than
	// window start the count anew.
	Fail(ctx context.Context, key string, window time.Duration, now time.Time) error
	// Failures are key's failures at now (none once window has passed
	// since the last one).
	Failures(ctx context.Context, key string, window time.Duration, now time.Time) (Failures, error)
	// Forget clears key's failures.
	Forget(ctx context.Context, key string) error
}

// refill is the bucket's level at now: tokens at at plus what refilled
// since, at most the burst. A clock reading before at refills nothing.
func refill(tokens float64, at, now time.Time, l Limit) float64 {
	elapsed := now.Sub(at).Seconds()
	if elapsed < 0 {
		elapsed = 0
	}
	return math.Min(float64(l.Burst), tokens+elapsed*l.Rate)
}
