package app_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app"
)

// TestPassesChangedDueNowAndLater: a change due now queues the Google
// object update (whether or not Google is configured: the job decides) and
// no Apple update while no Apple pass follows the ticket; a change due later
// (the next cycle's ticket, issued ahead of its start) queues the Apple
// update at its start and no Google update, since a saved Google object of
// that ticket already holds its validity.
func TestPassesChangedDueNowAndLater(t *testing.T) {
	eachEngine(t, func(t *testing.T, b *testBundle) {
		now := b.clock.Now()
		count := func(kind string) int {
			t.Helper()
			js, err := b.store.Read().Jobs(b.ctx, kind)
			if err != nil {
				t.Fatal(err)
			}
			return len(js)
		}
		if err := app.PassesChanged(b.ctx, b.store, now, now.Add(-time.Hour), "farebox-ticket-due-now"); err != nil {
			t.Fatal(err)
		}
		if g, a := count(app.JobGoogleObject), count(app.JobApplePassUpdate); g != 1 || a != 0 {
			t.Errorf("change due now: %d Google, %d Apple jobs, want 1 and 0", g, a)
		}
		later := now.Add(7 * 24 * time.Hour)
		if err := app.PassesChanged(b.ctx, b.store, now, later, "farebox-ticket-next-cycle"); err != nil {
			t.Fatal(err)
		}
		if g := count(app.JobGoogleObject); g != 1 {
			t.Errorf("change due later queued a Google job: %d in all", g)
		}
		js, err := b.store.Read().Jobs(b.ctx, app.JobApplePassUpdate)
		if err != nil || len(js) != 1 || js[0].Payload != "farebox-ticket-next-cycle" || !js[0].RunAt.Equal(later) {
			t.Errorf("change due later: Apple jobs %+v %v, want one at %v", js, err, later)
		}
	})
}
