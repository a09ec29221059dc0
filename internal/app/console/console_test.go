package console_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/console"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestConsoleJobs drives the console's job use cases on both engines: a
// bad state or job id is refused (422) naming the field and changes nothing, a
// ready job is listed and counted, and the catalog list of an empty
// catalog is empty.
func TestConsoleJobs(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
		empty, err := catalog.NewIndex(&catalog.File{Version: catalog.FormatVersion})
		if err != nil {
			t.Fatal(err)
		}
		woken := 0
		c := console.New(store.NewView[console.Queries](s), clocktest.NewFixed(now), func() *catalog.Index { return empty }, func() { woken++ })
		field := func(err error) string {
			if e := apperr.As(err); e != nil && e.Kind == apperr.Unprocessable && len(e.Details) == 1 {
				return e.Code + " " + e.Details[0].Field
			}
			return ""
		}
		if _, _, err := c.Jobs(ctx, "sleeping"); field(err) != console.CodeInvalidJobState+" state" {
			t.Errorf("bad state: %v", err)
		}
		for _, id := range []string{"0", "-1", "x", "١"} {
			if _, err := c.RetryDeadJob(ctx, id); field(err) != console.CodeInvalidJobID+" job_id" {
				t.Errorf("job id %q: %v", id, err)
			}
		}
		if woken != 0 {
			t.Errorf("a refused retry woke the workers %d times", woken)
		}
		if err := s.Write(ctx, func(q store.Q) error {
			return q.EnqueueJob(ctx, jobs.NewJob{Kind: "console.test", Payload: "Ω 東京"}, now)
		}); err != nil {
			t.Fatal(err)
		}
		list, counts, err := c.Jobs(ctx, jobs.StateReady)
		if err != nil || len(list) != 1 || list[0].Kind != "console.test" || list[0].State != jobs.StateReady || list[0].LastError != "" || counts[jobs.StateReady] != 1 {
			t.Fatalf("Jobs = %+v %v %v", list, counts, err)
		}
		if dead, _, err := c.Jobs(ctx, jobs.StateDead); err != nil || len(dead) != 0 {
			t.Fatalf("dead jobs = %+v %v", dead, err)
		}
		if p := c.Catalog(); len(p) != 0 {
			t.Errorf("empty catalog lists %+v", p)
		}
	})
}
