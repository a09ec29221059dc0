package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestOldestReadyJob: the queue-age metric reads the run_at of the
// longest-waiting due job and ignores jobs scheduled for later.
func TestOldestReadyJob(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
		if _, ok, err := s.Read().OldestReadyJob(ctx, t0); ok || err != nil {
			t.Fatalf("empty queue: ok %v err %v", ok, err)
		}
		for _, at := range []time.Time{t0.Add(-3 * time.Minute), t0.Add(-time.Minute), t0.Add(time.Hour)} {
			if err := s.Write(ctx, func(q store.Q) error {
				return q.EnqueueJob(ctx, jobs.NewJob{Kind: "k", Payload: at.String(), RunAt: at}, at)
			}); err != nil {
				t.Fatal(err)
			}
		}
		due, ok, err := s.Read().OldestReadyJob(ctx, t0)
		if err != nil || !ok || !due.Equal(t0.Add(-3*time.Minute)) {
			t.Fatalf("oldest due: %v %v %v", due, ok, err)
		}
		if _, ok, _ := s.Read().OldestReadyJob(ctx, t0.Add(-4*time.Minute)); ok {
			t.Error("a job due later counted as waiting")
		}
	})
}
