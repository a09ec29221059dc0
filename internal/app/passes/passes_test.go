package passes_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/passes"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestChangedDueNowAndLater: a change due now queues the Google object
// update (whether or not Google is configured: the job decides) and no
// Apple update while no Apple pass follows the ticket; a change due later
// (the next cycle's ticket, issued ahead of its start) queues the Apple
// update at its start and no Google update, since a saved Google object of
// that ticket already holds its validity. Both engines.
func TestChangedDueNowAndLater(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
		changed := func(effective time.Time, id string) {
			t.Helper()
			if err := s.Write(ctx, func(q store.Q) error { return passes.Changed(ctx, q, now, now, effective, id) }); err != nil {
				t.Fatal(err)
			}
		}
		count := func(kind string) int {
			t.Helper()
			js, err := s.Read().Jobs(ctx, kind)
			if err != nil {
				t.Fatal(err)
			}
			return len(js)
		}
		changed(now.Add(-time.Hour), "farebox-ticket-due-now")
		if g, a := count(passes.JobGoogleObject), count(passes.JobApplePassUpdate); g != 1 || a != 0 {
			t.Errorf("change due now: %d Google, %d Apple jobs, want 1 and 0", g, a)
		}
		later := now.Add(7 * 24 * time.Hour)
		changed(later, "farebox-ticket-next-cycle")
		if g := count(passes.JobGoogleObject); g != 1 {
			t.Errorf("change due later queued a Google job: %d in all", g)
		}
		js, err := s.Read().Jobs(ctx, passes.JobApplePassUpdate)
		if err != nil || len(js) != 1 || js[0].Payload != "farebox-ticket-next-cycle" || !js[0].RunAt.Equal(later) ||
			js[0].MaxAttempts != passes.UpdateAttempts {
			t.Errorf("change due later: Apple jobs %+v %v, want one at %v", js, err, later)
		}
	})
}
