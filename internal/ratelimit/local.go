package ratelimit

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Local keeps the limits' state in this process: the default of a single
// instance, and what a Fallback answers with while the shared store is
// unreachable. Memory is bounded: at most Max buckets (when full, the
// fullest quarter, those idle longest, is dropped, which only ever makes a
// dropped bucket start full again) and, past Max failure counters, those
// whose window has passed are dropped.
type Local struct {
	// Max bounds the buckets and the failure counters (0: DefaultMax).
	Max int

	mu       sync.Mutex
	buckets  map[string]*bucket
	failures map[string]failures
}

// DefaultMax is Local.Max when unset.
const DefaultMax = 1 << 16

type bucket struct {
	tokens float64
	at     time.Time // when tokens was computed
	limit  Limit
}

type failures struct {
	n      int
	last   time.Time
	window time.Duration
}

var _ Store = (*Local)(nil)

func (s *Local) max() int {
	if s.Max > 0 {
		return s.Max
	}
	return DefaultMax
}

// Take takes one token from key's bucket (Store).
func (s *Local) Take(_ context.Context, key string, l Limit, now time.Time) (Taken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[key]
	if b == nil {
		if s.buckets == nil {
			s.buckets = map[string]*bucket{}
		}
		if len(s.buckets) >= s.max() {
			s.evict(now)
		}
		b = &bucket{tokens: float64(l.Burst), at: now}
		s.buckets[key] = b
	}
	b.limit = l
	tokens := refill(b.tokens, b.at, now, l)
	if now.After(b.at) {
		b.tokens, b.at = tokens, now
	}
	if tokens < 1 {
		return Taken{Tokens: tokens}, nil
	}
	b.tokens = tokens - 1
	return Taken{OK: true, Tokens: b.tokens}, nil
}

// evict drops the fullest buckets (those idle longest) until a quarter of
// the table is free: a full bucket restarts exactly as it was, and the ones
// an attacker is draining stay. Sorting once per Max/4 insertions keeps
// the cost per request logarithmic.
func (s *Local) evict(now time.Time) {
	type kv struct {
		key   string
		level float64
	}
	all := make([]kv, 0, len(s.buckets))
	for k, b := range s.buckets {
		all = append(all, kv{k, refill(b.tokens, b.at, now, b.limit) / float64(max(b.limit.Burst, 1))})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].level > all[j].level })
	for _, e := range all[:len(all)-s.max()*3/4] {
		delete(s.buckets, e.key)
	}
}

// Fail counts a failure of key (Store).
func (s *Local) Fail(_ context.Context, key string, window time.Duration, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == nil {
		s.failures = map[string]failures{}
	}
	if len(s.failures) > s.max() { // bounded memory under a spray of keys
		for k, f := range s.failures {
			if now.Sub(f.last) >= f.window {
				delete(s.failures, k)
			}
		}
	}
	f := s.failures[key]
	if now.Sub(f.last) >= window {
		f.n = 0
	}
	f.n++
	f.last, f.window = now, window
	s.failures[key] = f
	return nil
}

// Failures are key's failures at now (Store).
func (s *Local) Failures(_ context.Context, key string, window time.Duration, now time.Time) (Failures, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.failures[key]
	if !ok {
		return Failures{}, nil
	}
	if now.Sub(f.last) >= window {
		delete(s.failures, key)
		return Failures{}, nil
	}
	return Failures{N: f.n, Last: f.last}, nil
}

// Forget clears key's failures (Store).
func (s *Local) Forget(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.failures, key)
	return nil
}
