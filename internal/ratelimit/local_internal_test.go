package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestLocalBounded: an attacker cycling ids (or addresses) cannot grow the
// buckets past Max, and the flood does not reset the bucket it is
// draining: eviction drops the fullest buckets first. Failure counters
// whose window has passed are dropped once past Max.
func TestLocalBounded(t *testing.T) {
	const max = 1000
	ctx := context.Background()
	l := Limit{Rate: 1, Burst: 5}
	s := &Local{Max: max}
	now := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
	for i := 0; i < l.Burst; i++ {
		if got, _ := s.Take(ctx, "victim", l, now); !got.OK {
			t.Fatal("victim's burst refused")
		}
	}
	for i := 0; i < 100*max; i++ {
		s.Take(ctx, fmt.Sprintf("coupon_id=farebox-coupon-%d", i), l, now)
		if n := len(s.buckets); n > max {
			t.Fatalf("table grew to %d > %d after %d ids", n, max, i+1)
		}
	}
	if got, _ := s.Take(ctx, "victim", l, now); got.OK || got.Wait(l) != time.Second {
		t.Errorf("the drained victim was reset by the flood: %+v", got)
	}
	for i := 0; i < 3*max; i++ {
		s.Fail(ctx, fmt.Sprintf("client:%d", i), time.Minute, now.Add(time.Duration(i)*time.Second))
	}
	if n := len(s.failures); n > max+1 {
		t.Errorf("failure counters grew to %d", n)
	}
}
