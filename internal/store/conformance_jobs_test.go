package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceJobs(t *testing.T) { jobsConformance.run(t) }

// jobsConformance: jobs.go (the job queue: store.Q's enqueue and
// inspection, the JobQueue of *Store.Jobs and JobsOf) and the operator's
// dead-job methods of web.go.
var jobsConformance = conformanceCases{
	"EnqueueJob": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		later := fxAt.Add(time.Hour)
		f.write(func(q store.Q) error {
			if err := q.EnqueueJob(f.ctx, jobs.NewJob{Kind: "k", Payload: "now"}, fxAt); err != nil {
				return err
			}
			return q.EnqueueJob(f.ctx, jobs.NewJob{Kind: "k", Payload: "later", MaxAttempts: 2, RunAt: later}, fxAt)
		})
		wantJobs(t, f, jobs.Record{ID: 1, Kind: "k", Payload: "now", State: jobs.StateReady, MaxAttempts: jobs.DefaultMaxAttempts, RunAt: fxAt},
			jobs.Record{ID: 2, Kind: "k", Payload: "later", State: jobs.StateReady, MaxAttempts: 2, RunAt: later})
	},
	"EnqueueJobs": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		later := fxAt.Add(time.Hour)
		f.write(func(q store.Q) error {
			if err := q.EnqueueJobs(f.ctx, nil, fxAt); err != nil { // none: nothing written
				return err
			}
			return q.EnqueueJobs(f.ctx, []jobs.NewJob{{Kind: "k", Payload: "a"}, {Kind: "other", Payload: "b"},
				{Kind: "k", Payload: "c", MaxAttempts: 3, RunAt: later}}, fxAt)
		})
		wantJobs(t, f, jobs.Record{ID: 1, Kind: "k", Payload: "a", State: jobs.StateReady, MaxAttempts: jobs.DefaultMaxAttempts, RunAt: fxAt},
			jobs.Record{ID: 3, Kind: "k", Payload: "c", State: jobs.StateReady, MaxAttempts: 3, RunAt: later}) // in order, of kind k
	},
	"Jobs": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a", "b")
		enqueue(f, "other", "c")
		enqueue(f, "k", "d")
		got, err := f.read().Jobs(f.ctx, "k")
		if ps := payloads(got); err != nil || !cmp.Equal(ps, []string{"a", "b", "d"}) {
			t.Errorf("Jobs(k) = %v, %v; want a, b, d by id", ps, err)
		}
		if got, err := f.read().Jobs(f.ctx, "none"); err != nil || len(got) != 0 {
			t.Errorf("Jobs of an unknown kind = %v, %v", got, err)
		}
	},
	"Store.Jobs": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a")
		enqueue(f, "j", "b")
		if got := claimed(t, f, s.Jobs(), "w", fxAt, 10); !cmp.Equal(got, []string{"a", "b"}) {
			t.Errorf("Jobs().Claim = %v, want the due jobs of every kind", got)
		}
	},
	"Store.JobsOf": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "j", "a") // due first, of another kind
		enqueue(f, "k", "b")
		if got := claimed(t, f, s.JobsOf("k"), "w", fxAt, 10); !cmp.Equal(got, []string{"b"}) {
			t.Errorf("JobsOf(k).Claim = %v, want b alone", got)
		}
		wantStates(t, f, "j", jobs.StateReady)
	},
	"JobQueue.Of": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "j", "a")
		enqueue(f, "k", "b")
		for _, jq := range []jobs.Queue{s.Jobs().Of("k"), s.JobsOf("j").Of("k")} {
			if got := claimed(t, f, jq, "w", fxAt, 10); !cmp.Equal(got, []string{"b"}) {
				t.Errorf("Of(k).Claim = %v, want b alone", got)
			}
			f.write(func(q store.Q) error { return q.CompleteJobs(f.ctx, []int64{2}, "w", fxAt) })
			enqueue(f, "k", "b")
			f.write(func(q store.Q) error { return q.DeleteJobs(f.ctx, map[int64]string{}) })
		}
	},
	"JobQueue.Claim": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a", "b", "c")
		f.write(func(q store.Q) error {
			return q.EnqueueJob(f.ctx, jobs.NewJob{Kind: "k", Payload: "early", RunAt: fxAt.Add(-time.Hour)}, fxAt)
		})
		f.write(func(q store.Q) error {
			return q.EnqueueJob(f.ctx, jobs.NewJob{Kind: "k", Payload: "later", RunAt: fxAt.Add(time.Hour)}, fxAt)
		})
		jq := s.Jobs()
		// Due jobs in run_at order, up to the limit; held jobs are not claimed twice.
		js, err := jq.Claim(f.ctx, "w1", fxAt, time.Minute, 2)
		want := []jobs.Job{{ID: 4, Kind: "k", Payload: "early", Attempts: 1, MaxAttempts: jobs.DefaultMaxAttempts},
			{ID: 1, Kind: "k", Payload: "a", Attempts: 1, MaxAttempts: jobs.DefaultMaxAttempts}}
		if d := cmp.Diff(want, js); err != nil || d != "" {
			t.Errorf("Claim(limit 2) (%v; -want +got):\n%s", err, d)
		}
		if got := claimed(t, f, jq, "w2", fxAt, 10); !cmp.Equal(got, []string{"b", "c"}) {
			t.Errorf("second Claim = %v, want b, c (not the held ones, not later)", got)
		}
		if got := claimed(t, f, jq, "w3", fxAt.Add(30*time.Second), 10); len(got) != 0 {
			t.Errorf("Claim while every due job is held = %v", got)
		}
		// A lease that ran out (a minute) makes its job due again, counted as a further attempt.
		if got := claimed(t, f, jq, "w4", fxAt.Add(time.Hour), 10); !cmp.Equal(got, []string{"early", "a", "b", "c", "later"}) {
			t.Errorf("Claim after the leases ran out = %v", got)
		}
		rs, err := f.read().Jobs(f.ctx, "k")
		if err != nil || rs[0].State != jobs.StateRunning || rs[0].Attempts != 2 || rs[0].LockedBy == nil || *rs[0].LockedBy != "w4" ||
			rs[0].LockedUntil == nil || !rs[0].LockedUntil.Equal(fxAt.Add(time.Hour+time.Minute)) {
			t.Errorf("a after two claims = %+v, %v; want running for w4 until its lease, attempt 2", rs[0], err)
		}
	},
	"JobQueue.Complete": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a")
		claimed(t, f, s.Jobs(), "w1", fxAt, 1)
		for _, w := range []string{"w2", "w1"} { // only the holder completes it
			if err := s.Jobs().Complete(f.ctx, 1, w, fxAt); err != nil {
				t.Fatal(err)
			}
		}
		wantStates(t, f, "k", jobs.StateDone)
		if got := claimed(t, f, s.Jobs(), "w3", fxAt.Add(time.Hour), 10); len(got) != 0 {
			t.Errorf("a done job was claimed: %v", got)
		}
	},
	"JobQueue.Retry": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a", "b")
		claimed(t, f, s.Jobs(), "w1", fxAt, 2)
		jq := s.Jobs()
		if err := jq.Retry(f.ctx, 1, "w2", fxAt, fxAt, "not mine", false); err != nil { // not the holder: nothing
			t.Fatal(err)
		}
		if err := jq.Retry(f.ctx, 1, "w1", fxAt, fxAt.Add(2*time.Minute), "bo\x00om", false); err != nil { // NUL: refused by PostgreSQL's text
			t.Fatal(err)
		}
		long := "x" + strings.Repeat("é", 1500) // byte 2000 cuts through an é
		if err := jq.Retry(f.ctx, 2, "w1", fxAt, fxAt, long, true); err != nil {
			t.Fatal(err)
		}
		rs, err := f.read().Jobs(f.ctx, "k")
		if err != nil || rs[0].State != jobs.StateReady || !rs[0].RunAt.Equal(fxAt.Add(2*time.Minute)) || rs[0].LockedBy != nil ||
			rs[0].LastError == nil || *rs[0].LastError != "boom" {
			t.Errorf("a after Retry = %+v, %v; want ready at its retry time with the error", rs[0], err)
		}
		if msg := rs[1].LastError; rs[1].State != jobs.StateDead || msg == nil || len(*msg) != 1999 || !strings.HasPrefix(long, *msg) {
			t.Errorf("b after Retry(dead) = %+v; want dead with the error cut to whole characters within 2000 bytes", rs[1])
		}
		if got := claimed(t, f, jq, "w3", fxAt.Add(time.Minute), 10); len(got) != 0 {
			t.Errorf("Claim before the retry time = %v", got)
		}
		if got := claimed(t, f, jq, "w3", fxAt.Add(3*time.Minute), 10); !cmp.Equal(got, []string{"a"}) {
			t.Errorf("Claim at the retry time = %v, want a (the dead b never)", got)
		}
	},
	"JobQueue.Extend": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a")
		jq := s.Jobs()
		claimed(t, f, jq, "w1", fxAt, 1)
		for _, c := range []struct {
			worker string
			want   bool
		}{{"w2", false}, {"w1", true}} {
			if ok, err := jq.Extend(f.ctx, 1, c.worker, fxAt.Add(time.Hour)); ok != c.want || err != nil {
				t.Errorf("Extend by %s = %v, %v; want %v", c.worker, ok, err, c.want)
			}
		}
		if got := claimed(t, f, jq, "w3", fxAt.Add(30*time.Minute), 1); len(got) != 0 {
			t.Errorf("Claim within the extended lease = %v", got)
		}
		if err := jq.Complete(f.ctx, 1, "w1", fxAt); err != nil {
			t.Fatal(err)
		}
		if ok, err := jq.Extend(f.ctx, 1, "w1", fxAt.Add(2*time.Hour)); ok || err != nil {
			t.Errorf("Extend of a done job = %v, %v", ok, err)
		}
	},
	"JobQueue.PruneJobs": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a", "b", "c")
		jq := s.Jobs()
		claimed(t, f, jq, "w", fxAt, 3)
		if err := jq.Complete(f.ctx, 1, "w", fxAt); err != nil {
			t.Fatal(err)
		}
		if err := jq.Complete(f.ctx, 2, "w", fxAt.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := jq.Retry(f.ctx, 3, "w", fxAt, fxAt, "dead", true); err != nil {
			t.Fatal(err)
		}
		// Done jobs finished before the cut go; later ones and dead ones stay.
		if n, err := jq.PruneJobs(f.ctx, fxAt.Add(time.Minute)); n != 1 || err != nil {
			t.Errorf("PruneJobs = %d, %v; want 1", n, err)
		}
		wantStates(t, f, "k", jobs.StateDone, jobs.StateDead)
	},
	"DeleteJobs": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a", "b", "c")
		claimed(t, f, s.Jobs(), "w1", fxAt, 2) // a and b, ids 1 and 2
		f.write(func(q store.Q) error {
			// Only the jobs the worker holds: a job held by another worker stays.
			return q.DeleteJobs(f.ctx, map[int64]string{1: "w1", 2: "w2", 3: "w1"})
		})
		got, err := f.read().Jobs(f.ctx, "k")
		if ps := payloads(got); err != nil || !cmp.Equal(ps, []string{"b", "c"}) {
			t.Errorf("jobs after DeleteJobs = %v, %v; want b (held by w1, not w2) and c (not held)", ps, err)
		}
	},
	"CompleteJobs": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a", "b", "c")
		if got := claimed(t, f, s.Jobs(), "w1", fxAt, 2); !cmp.Equal(got, []string{"a", "b"}) {
			t.Fatalf("claimed %v", got)
		}
		f.write(func(q store.Q) error {
			if err := q.CompleteJobs(f.ctx, nil, "w1", fxAt); err != nil {
				return err
			}
			return q.CompleteJobs(f.ctx, []int64{1, 2, 3}, "w2", fxAt)
		})
		wantStates(t, f, "k", jobs.StateRunning, jobs.StateRunning, jobs.StateReady) // another worker completes nothing
		f.write(func(q store.Q) error { return q.CompleteJobs(f.ctx, []int64{1, 2, 3}, "w1", fxAt) })
		wantStates(t, f, "k", jobs.StateDone, jobs.StateDone, jobs.StateReady)
	},
	"JobStates": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if got, err := f.read().JobStates(f.ctx); err != nil || len(got) != 0 {
			t.Errorf("JobStates of none = %v, %v", got, err)
		}
		enqueue(f, "k", "a", "b", "c")
		claimed, err := s.Jobs().Claim(f.ctx, "w", fxAt, time.Minute, 1)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("Claim = %v, %v", claimed, err)
		}
		if got, err := f.read().JobStates(f.ctx); err != nil || !cmp.Equal(got, map[string]int{"ready": 2, "running": 1}) {
			t.Errorf("JobStates = %v, %v", got, err)
		}
	},
	"JobState": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		if st, err := f.read().JobState(f.ctx, "k", "a"); err != nil || st != "" {
			t.Errorf("JobState of no job = %q, %v; want \"\"", st, err)
		}
		enqueue(f, "k", "a")
		claimed, err := s.Jobs().Claim(f.ctx, "w", fxAt, time.Minute, 1)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("Claim = %v, %v", claimed, err)
		}
		enqueue(f, "k", "a") // the newest job of kind and payload answers
		if st, err := f.read().JobState(f.ctx, "k", "a"); err != nil || st != jobs.StateReady {
			t.Errorf("JobState = %q, %v; want the newest job's, ready", st, err)
		}
	},
	"JobsInState": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a", "b", "c")
		enqueue(f, "other", "d")
		if _, err := s.Jobs().Claim(f.ctx, "w", fxAt, time.Minute, 1); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			state string
			limit int
			want  []string
		}{{"", 10, []string{"d", "c", "b", "a"}}, {"", 2, []string{"d", "c"}}, {jobs.StateReady, 10, []string{"d", "c", "b"}}, {jobs.StateRunning, 10, []string{"a"}}} {
			got, err := f.read().JobsInState(f.ctx, c.state, c.limit)
			if ps := payloads(got); err != nil || !cmp.Equal(ps, c.want) {
				t.Errorf("JobsInState(%q, %d) = %v, %v; want %v, newest first", c.state, c.limit, ps, err, c.want)
			}
		}
	},
	"RetryDeadJob": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		enqueue(f, "k", "a", "b")
		claimed, err := s.Jobs().Claim(f.ctx, "w", fxAt, time.Minute, 1)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("Claim = %v, %v", claimed, err)
		}
		if err := s.Jobs().Retry(f.ctx, claimed[0].ID, "w", fxAt, fxAt, "boom", true); err != nil {
			t.Fatal(err)
		}
		later := fxAt.Add(time.Hour)
		f.write(func(q store.Q) error { return q.RetryDeadJob(f.ctx, claimed[0].ID, later) })
		got, err := f.read().Jobs(f.ctx, "k")
		if err != nil || got[0].State != jobs.StateReady || got[0].Attempts != 0 || !got[0].RunAt.Equal(later) {
			t.Errorf("job after RetryDeadJob = %+v, %v; want ready at %v with no attempts", got[0], err, later)
		}
		for what, id := range map[string]int64{"a job not dead": 2, "an unknown job": 99} {
			err := s.Write(f.ctx, func(q store.Q) error { return q.RetryDeadJob(f.ctx, id, later) })
			wantCode(t, what, err, apperr.NotFound, store.CodeDeadJobNotFound)
		}
	},
}

// claimed claims up to limit jobs of jq for worker at at with a minute's
// lease and returns their payloads in the order claimed.
func claimed(t *testing.T, f *fixture, jq jobs.Queue, worker string, at time.Time, limit int) []string {
	t.Helper()
	js, err := jq.Claim(f.ctx, worker, at, time.Minute, limit)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, j := range js {
		if j.Attempts < 1 || j.Kind == "" || j.MaxAttempts != jobs.DefaultMaxAttempts {
			t.Errorf("claimed %+v: attempts, kind or max attempts unset", j)
		}
		out = append(out, j.Payload)
	}
	return out
}

// enqueue enqueues jobs of kind with payloads, in order, ready at fxAt.
func enqueue(f *fixture, kind string, payloads ...string) {
	f.t.Helper()
	f.write(func(q store.Q) error {
		for _, p := range payloads {
			if err := q.EnqueueJob(f.ctx, jobs.NewJob{Kind: kind, Payload: p}, fxAt); err != nil {
				return err
			}
		}
		return nil
	})
}

// wantStates fails unless the jobs of kind, by id, are in states.
func wantStates(t *testing.T, f *fixture, kind string, states ...string) {
	t.Helper()
	rs, err := f.read().Jobs(f.ctx, kind)
	var got []string
	for _, r := range rs {
		got = append(got, r.State)
	}
	if err != nil || !cmp.Equal(got, states) {
		t.Errorf("states of the %s jobs = %v, %v; want %v", kind, got, err, states)
	}
}

func payloads(rs []jobs.Record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Payload)
	}
	return out
}

// wantJobs fails unless the jobs of kind k are want, by id.
func wantJobs(t *testing.T, f *fixture, want ...jobs.Record) {
	t.Helper()
	got, err := f.read().Jobs(f.ctx, "k")
	for i := range got {
		got[i].RunAt = got[i].RunAt.UTC()
	}
	if d := cmp.Diff(want, got); err != nil || d != "" {
		t.Errorf("jobs of kind k (%v; -want +got):\n%s", err, d)
	}
}
