package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/ratelimit"
)

// flaky is a shared store that fails while down.
type flaky struct {
	ratelimit.Local
	down  atomic.Bool
	calls atomic.Int64
}

var errDown = errors.New("connection refused")

func (f *flaky) Take(ctx context.Context, key string, l ratelimit.Limit, now time.Time) (ratelimit.Taken, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return ratelimit.Taken{}, errDown
	}
	return f.Local.Take(ctx, key, l, now)
}

func (f *flaky) Fail(ctx context.Context, key string, w time.Duration, now time.Time) error {
	f.calls.Add(1)
	if f.down.Load() {
		return errDown
	}
	return f.Local.Fail(ctx, key, w, now)
}

// TestFallbackDegradesAndRecovers: while the shared store fails every
// answer comes from the local one, without an error; the switch is told
// once each way; the shared store is tried again after Retry by one call,
// and answers again once it is back.
func TestFallbackDegradesAndRecovers(t *testing.T) {
	ctx := context.Background()
	shared, local := &flaky{}, &ratelimit.Local{}
	var mu sync.Mutex
	var changes []bool
	var locals atomic.Int64
	f := &ratelimit.Fallback{Shared: shared, Local: local, Retry: 50 * time.Millisecond,
		OnChange: func(d bool, err error) {
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, d)
			if d != (err != nil) {
				t.Errorf("change to degraded=%v with error %v", d, err)
			}
		},
		OnLocal: func() { locals.Add(1) }}
	l := ratelimit.Limit{Rate: 1e-3, Burst: 2}
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	if got, err := f.Take(ctx, "k", l, now); err != nil || !got.OK || got.Tokens != 1 {
		t.Fatalf("shared take: %+v %v", got, err)
	}
	shared.down.Store(true)
	// Degraded: the local bucket (full) answers, no error.
	for i, want := range []bool{true, true, false} {
		if got, err := f.Take(ctx, "k", l, now); err != nil || got.OK != want {
			t.Errorf("degraded take %d: %+v %v", i, got, err)
		}
	}
	if err := f.Fail(ctx, "user:x", time.Minute, now); err != nil {
		t.Errorf("degraded fail: %v", err)
	}
	if n := shared.calls.Load(); n != 2 {
		t.Errorf("shared store called %d times, want 2 (one success, one failure, then left alone)", n)
	}
	if n := locals.Load(); n != 4 {
		t.Errorf("%d local answers, want 4", n)
	}
	// Back: after Retry one call tries it and it answers again.
	shared.down.Store(false)
	time.Sleep(60 * time.Millisecond)
	if got, err := f.Take(ctx, "k", l, now); err != nil || !got.OK || got.Tokens != 0 {
		t.Errorf("recovered take (the shared bucket had 1 left): %+v %v", got, err)
	}
	if got, _ := f.Take(ctx, "k", l, now); got.OK {
		t.Errorf("shared bucket empty, yet granted: %+v", got)
	}
	// A request that ended (its client went away) while Redis was asked
	// is answered locally and says nothing of Redis.
	shared.down.Store(true)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if got, err := f.Take(gone, "k2", l, now); err != nil || !got.OK {
		t.Errorf("take of an ended request: %+v %v", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 2 || !changes[0] || changes[1] {
		t.Errorf("changes %v, want [true false]", changes)
	}
}
