package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Fallback answers from Shared and, while Shared fails, from Local: a
// shared store that is down (or unreachable mid-run) degrades every limit
// to a per-instance one, never to a refused or failed request. After a
// failure Shared is left alone for Retry; then one request at a time tries
// it again (the others keep answering locally, so a store that hangs
// delays at most that one), and its first success makes Shared the answer
// again. OnChange hears each switch (degraded true with the error, false
// on recovery) and OnLocal each answer given locally because of it: the
// wiring logs the one and counts the other.
//
// Fallback's methods never return an error.
type Fallback struct {
	Shared, Local Store
	// Retry is how long Shared is left alone after a failure (0: a second).
	Retry    time.Duration
	OnChange func(degraded bool, err error)
	OnLocal  func()

	mu       sync.Mutex
	degraded bool
	probing  bool
	retryAt  time.Time // wall clock: when Shared may be tried again
}

var _ Store = (*Fallback)(nil)

// shared reports whether this call should try Shared, and whether it is
// the one probe of a degraded store.
func (f *Fallback) shared() (try, probe bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.degraded {
		return true, false
	}
	if f.probing || time.Now().Before(f.retryAt) {
		return false, false
	}
	f.probing = true
	return true, true
}

// release ends a probe that learnt nothing.
func (f *Fallback) release(probe bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if probe {
		f.probing = false
	}
}

// done records how a call to Shared went.
func (f *Fallback) done(probe bool, err error) {
	f.mu.Lock()
	if probe {
		f.probing = false
	}
	was := f.degraded
	if err != nil {
		retry := f.Retry
		if retry <= 0 {
			retry = time.Second
		}
		f.degraded, f.retryAt = true, time.Now().Add(retry)
	} else if probe {
		f.degraded = false
	}
	now := f.degraded
	f.mu.Unlock()
	if was != now && f.OnChange != nil {
		f.OnChange(now, err)
	}
}

// run calls op on Shared, or on Local when Shared is degraded or fails.
// A call that failed because its own request ended (the client went
// away) says nothing of Shared and changes nothing.
func run[T any](ctx context.Context, f *Fallback, op func(Store) (T, error)) (T, error) {
	if try, probe := f.shared(); try {
		v, err := op(f.Shared)
		if err != nil && ctx.Err() != nil {
			f.release(probe)
			return op(f.Local)
		}
		f.done(probe, err)
		if err == nil {
			return v, nil
		}
	}
	if f.OnLocal != nil {
		f.OnLocal()
	}
	return op(f.Local)
}

// Take takes a token from Shared's bucket, or Local's (Store).
func (f *Fallback) Take(ctx context.Context, key string, l Limit, now time.Time) (Taken, error) {
	take := func(s Store) (Taken, error) { return s.Take(ctx, key, l, now) }
	return run(ctx, f, take)
}

// Fail counts the failure in Shared, or Local (Store).
func (f *Fallback) Fail(ctx context.Context, key string, window time.Duration, now time.Time) error {
	fail := func(s Store) (struct{}, error) { return struct{}{}, s.Fail(ctx, key, window, now) }
	_, err := run(ctx, f, fail)
	return err
}

// Failures are Shared's count, or Local's (Store).
func (f *Fallback) Failures(ctx context.Context, key string, window time.Duration, now time.Time) (Failures, error) {
	get := func(s Store) (Failures, error) { return s.Failures(ctx, key, window, now) }
	return run(ctx, f, get)
}

// Forget clears the key in Shared, or Local (Store). Local is cleared
// too: a lock counted there while Shared was down ends with the success
// like the shared one.
func (f *Fallback) Forget(ctx context.Context, key string) error {
	_ = f.Local.Forget(ctx, key)
	forget := func(s Store) (struct{}, error) { return struct{}{}, s.Forget(ctx, key) }
	_, err := run(ctx, f, forget)
	return err
}
