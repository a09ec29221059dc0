package jobs_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// enqueueAt enqueues one job of kind "k" due at runAt and returns its id.
// claimAll claims for worker "w" at t0 with a minute's lease, limit jobs
// a call, until nothing is left, and returns the jobs in claim order.
func claimAll(t *testing.T, q store.JobQueue, limit int) []jobs.Job {
	t.Helper()
	var all []jobs.Job
	for {
		js, err := q.Claim(context.Background(), "w", t0, time.Minute, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(js) == 0 {
			return all
		}
		all = append(all, js...)
	}
}

func enqueueAt(t *testing.T, s *store.Store, payload string, runAt time.Time) int64 {
	t.Helper()
	err := s.Write(context.Background(), func(q store.Q) error {
		return q.EnqueueJob(context.Background(), jobs.NewJob{Kind: "k", Payload: payload, RunAt: runAt}, t0.Add(-time.Hour))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range rows(t, s, "k") {
		if j.Payload == payload {
			return j.ID
		}
	}
	t.Fatalf("job %s not stored", payload)
	return 0
}

// TestClaimOrder: claims take due jobs by (run_at, id), ready jobs and
// expired leases alike, never one that is not due or whose lease is held,
// and each claim returns its jobs in that order.
func TestClaimOrder(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		// Two jobs claimed long ago: one worker died (lease expired at t0),
		// one still holds its lease past t0.
		enqueueAt(t, s, "a-expired", t0.Add(-3*time.Minute))
		held, err := s.Jobs().Claim(ctx, "old", t0.Add(-3*time.Minute), 3*time.Minute, 1)
		if err != nil || len(held) != 1 || held[0].Payload != "a-expired" {
			t.Fatalf("first claim: %v %v", held, err)
		}
		enqueueAt(t, s, "d-held", t0.Add(-30*time.Second))
		if held, err = s.Jobs().Claim(ctx, "holder", t0.Add(-30*time.Second), time.Hour, 1); err != nil || len(held) != 1 || held[0].Payload != "d-held" {
			t.Fatalf("second claim: %v %v", held, err)
		}
		// Enqueued out of order; b1 and b2 share a run_at (id decides).
		enqueueAt(t, s, "c", t0.Add(-time.Minute))
		enqueueAt(t, s, "later", t0.Add(time.Second))
		enqueueAt(t, s, "b1", t0.Add(-2*time.Minute))
		enqueueAt(t, s, "b2", t0.Add(-2*time.Minute))
		enqueueAt(t, s, "e", t0)
		var got []string
		for _, j := range claimAll(t, s.Jobs(), 2) {
			got = append(got, j.Payload)
		}
		if want := []string{"a-expired", "b1", "b2", "c", "e"}; !slices.Equal(got, want) {
			t.Errorf("claimed %v, want %v", got, want)
		}
		for _, j := range rows(t, s, "k") {
			switch j.Payload {
			case "a-expired":
				if j.Attempts != 2 || *j.LockedBy != "w" {
					t.Errorf("reclaimed job: %+v", j)
				}
			case "d-held":
				if j.Attempts != 1 || *j.LockedBy != "holder" {
					t.Errorf("held job: %+v", j)
				}
			case "later":
				if j.State != jobs.StateReady {
					t.Errorf("job due later: %+v", j)
				}
			}
		}
	})
}

// TestExpiredLeasesAmongBacklog: with more expired leases and more ready
// jobs than one claim takes, claims still interleave both by (run_at, id)
// and each job is claimed once.
func TestExpiredLeasesAmongBacklog(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const n = 40
		// Even jobs are claimed by a worker that dies, its leases ending
		// before t0; odd ones, enqueued afterwards, stay ready. run_at
		// ascends with i.
		runAt := func(i int) time.Time { return t0.Add(time.Duration(i-n) * time.Second) }
		for i := 0; i < n; i += 2 {
			enqueueAt(t, s, fmt.Sprintf("%03d", i), runAt(i))
			js, err := s.Jobs().Claim(ctx, "dead", runAt(i), t0.Sub(runAt(i))-time.Second, 1)
			if err != nil || len(js) != 1 || js[0].Payload != fmt.Sprintf("%03d", i) {
				t.Fatalf("claim %d: %v %v", i, js, err)
			}
		}
		for i := 1; i < n; i += 2 {
			enqueueAt(t, s, fmt.Sprintf("%03d", i), runAt(i))
		}
		var got []string
		for _, j := range claimAll(t, s.Jobs(), 7) {
			got = append(got, j.Payload)
		}
		if len(got) != n || !slices.IsSorted(got) {
			t.Errorf("claimed %d jobs in order %v", len(got), got)
		}
	})
}

// TestConcurrentClaimsTwoInstances: two stores on one database (two
// instances), four workers each, claim 2,000 due jobs (some of them expired
// leases) in batches of 16: every job is claimed exactly once.
func TestConcurrentClaimsTwoInstances(t *testing.T) {
	// load-shaped: SQLite only under -short
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		ctx := context.Background()
		opts := storetest.Options(t, engine)
		var instances []*store.Store
		for i := 0; i < 2; i++ {
			s, err := store.Open(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			if i == 0 {
				if _, err := s.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
			}
			instances = append(instances, s)
		}
		s := instances[0]
		const n = 2000
		err := s.Write(ctx, func(q store.Q) error {
			for i := 0; i < n; i++ {
				if err := q.EnqueueJob(ctx, jobs.NewJob{Kind: "k", Payload: fmt.Sprint(i), RunAt: t0.Add(-time.Duration(i%7) * time.Second)}, t0.Add(-time.Hour)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// 100 jobs held by a worker whose lease ended before t0.
		if js, err := s.Jobs().Claim(ctx, "dead", t0.Add(-time.Second), time.Second, 100); err != nil || len(js) != 100 {
			t.Fatalf("dead worker's claim: %d %v", len(js), err)
		}
		var mu sync.Mutex
		claims := map[int64]int{}
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := instances[w%2].Jobs()
				worker := fmt.Sprintf("w%d", w)
				for {
					js, err := q.Claim(ctx, worker, t0, time.Minute, 16)
					if err != nil {
						t.Error(err)
						return
					}
					if len(js) == 0 {
						return
					}
					mu.Lock()
					for _, j := range js {
						claims[j.ID]++
					}
					mu.Unlock()
					for _, j := range js {
						if err := q.Complete(ctx, j.ID, worker, t0); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		if len(claims) != n {
			t.Errorf("%d of %d jobs claimed", len(claims), n)
		}
		for id, c := range claims {
			if c != 1 {
				t.Errorf("job %d claimed %d times", id, c)
			}
		}
		st, err := s.Read().JobStates(ctx)
		if err != nil || st[jobs.StateDone] != n || len(st) != 1 {
			t.Errorf("states after the run: %v %v", st, err)
		}
	})
}

// TestPruneJobs: done jobs older than the cutoff are deleted, in several
// batches when there are many; done jobs after the cutoff, dead, ready and
// running jobs stay.
func TestPruneJobs(t *testing.T) {
	storetest.ForEachEngineLoaded(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const old = 1200 // more than one batch of 1,000
		err := s.Write(ctx, func(q store.Q) error {
			for i := 0; i < old+4; i++ {
				if err := q.EnqueueJob(ctx, jobs.NewJob{Kind: "k", Payload: fmt.Sprint(i), MaxAttempts: 1}, t0); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		finish := func(n int, at time.Time, dead bool) {
			js, err := s.Jobs().Claim(ctx, "w", at, time.Minute, n)
			if err != nil || len(js) != n {
				t.Fatalf("claim %d: %d %v", n, len(js), err)
			}
			for _, j := range js {
				if dead {
					err = s.Jobs().Retry(ctx, j.ID, "w", at, at, "failed", true)
				} else {
					err = s.Jobs().Complete(ctx, j.ID, "w", at)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		finish(old, t0, false)
		finish(1, t0, true)                                                                          // dead long ago
		finish(1, t0.Add(10*24*time.Hour), false)                                                    // done recently
		if _, err := s.Jobs().Claim(ctx, "w", t0.Add(10*24*time.Hour), time.Minute, 1); err != nil { // running
			t.Fatal(err)
		}
		// one stays ready
		cutoff := t0.Add(10*24*time.Hour - jobs.DoneRetention)
		n, err := s.Jobs().PruneJobs(ctx, cutoff)
		if err != nil || n != old {
			t.Fatalf("pruned %d, %v; want %d", n, err, old)
		}
		st, err := s.Read().JobStates(ctx)
		want := map[string]int{jobs.StateDone: 1, jobs.StateDead: 1, jobs.StateRunning: 1, jobs.StateReady: 1}
		if err != nil || len(st) != len(want) {
			t.Fatalf("states after pruning: %v %v", st, err)
		}
		for k, v := range want {
			if st[k] != v {
				t.Errorf("states after pruning: %v, want %v", st, want)
			}
		}
		if n, err := s.Jobs().PruneJobs(ctx, cutoff); n != 0 || err != nil {
			t.Errorf("second prune: %d %v", n, err)
		}
	})
}

// TestClaimOfOneKind: a queue of one kind (store.JobsOf, the webhook
// runner's) claims only its kind's due jobs — ready ones and expired leases,
// by (run_at, id) — finds nothing due when only other kinds are, and leaves
// the other kinds to the queue of every kind.
func TestClaimOfOneKind(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		add := func(kind, payload string, runAt time.Time) {
			t.Helper()
			if err := s.Write(ctx, func(q store.Q) error {
				return q.EnqueueJob(ctx, jobs.NewJob{Kind: kind, Payload: payload, RunAt: runAt}, t0.Add(-time.Hour))
			}); err != nil {
				t.Fatal(err)
			}
		}
		hooks := s.JobsOf("hook")
		// Only other kinds are due: the hook queue finds nothing.
		add("k", "k-early", t0.Add(-5*time.Minute))
		if js, err := hooks.Claim(ctx, "w", t0, time.Minute, 10); err != nil || len(js) != 0 {
			t.Fatalf("hook queue with no hook job due: %v %v", js, err)
		}
		// A hook job whose worker died (lease over before t0), two ready
		// ones, one not yet due; more jobs of kind k around them.
		add("hook", "h-expired", t0.Add(-4*time.Minute))
		if js, err := hooks.Claim(ctx, "dead", t0.Add(-4*time.Minute), time.Minute, 1); err != nil || len(js) != 1 || js[0].Payload != "h-expired" {
			t.Fatalf("dead worker's claim: %v %v", js, err)
		}
		add("k", "k-mid", t0.Add(-3*time.Minute))
		add("hook", "h-b", t0.Add(-2*time.Minute))
		add("hook", "h-a", t0.Add(-3*time.Minute))
		add("hook", "h-later", t0.Add(time.Minute))
		var got []string
		for _, j := range claimAll(t, hooks, 2) {
			if j.Kind != "hook" {
				t.Errorf("hook queue claimed a %q job", j.Kind)
			}
			got = append(got, j.Payload)
		}
		if want := []string{"h-expired", "h-a", "h-b"}; !slices.Equal(got, want) {
			t.Errorf("hook queue claimed %v, want %v", got, want)
		}
		got = got[:0]
		js, err := s.Jobs().Claim(ctx, "all", t0, time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			got = append(got, j.Payload)
		}
		if want := []string{"k-early", "k-mid"}; !slices.Equal(got, want) {
			t.Errorf("queue of every kind then claimed %v, want %v", got, want)
		}
	})
}
