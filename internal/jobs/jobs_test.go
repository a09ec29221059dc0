package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

var t0 = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

func enqueue(t *testing.T, s *store.Store, at time.Time, kind string, payloads ...string) {
	t.Helper()
	err := s.Write(context.Background(), func(q store.Q) error {
		for _, p := range payloads {
			if err := q.EnqueueJob(context.Background(), jobs.NewJob{Kind: kind, Payload: p, MaxAttempts: 3}, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func rows(t *testing.T, s *store.Store, kind string) []jobs.Record {
	t.Helper()
	rs, err := s.Read().Jobs(context.Background(), kind)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := jobs.Backoff(2*time.Second, 30*time.Second, i+1); got != w {
			t.Errorf("Backoff(attempt %d) = %v, want %v", i+1, got, w)
		}
	}
}

// TestOutbox: a job enqueued in a transaction that rolls back never exists.
func TestOutbox(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		err := s.Write(context.Background(), func(q store.Q) error {
			if err := q.EnqueueJob(context.Background(), jobs.NewJob{Kind: "k", Payload: "p"}, t0); err != nil {
				return err
			}
			return errors.New("business write failed")
		})
		if err == nil || len(rows(t, s, "k")) != 0 {
			t.Errorf("rolled-back job exists: %v", rows(t, s, "k"))
		}
	})
}

// TestRetryBackoffDead: a failing job is retried after its backoff (not
// before), succeeds on a later attempt, and a job that always fails ends
// dead after max_attempts with its last error.
func TestRetryBackoffDead(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		clk := clocktest.NewFixed(t0)
		r := jobs.New(s.Jobs(), clk, jobs.Options{BaseBackoff: 10 * time.Second, MaxBackoff: time.Minute})
		calls := map[string]int{}
		r.Handle("flaky", func(ctx context.Context, j jobs.Job) error {
			calls[j.Payload]++
			if j.Payload == "always" || calls[j.Payload] < 2 {
				return fmt.Errorf("attempt %d failed", j.Attempts)
			}
			return nil
		})
		enqueue(t, s, t0, "flaky", "once", "always")
		ctx := context.Background()
		if n, err := r.RunOnce(ctx); n != 2 || err != nil {
			t.Fatalf("first run: %d %v", n, err)
		}
		for _, j := range rows(t, s, "flaky") {
			if j.State != jobs.StateReady || j.Attempts != 1 || j.LockedBy != nil || *j.LastError != "attempt 1 failed" ||
				j.RunAt.Before(t0.Add(10*time.Second)) || j.RunAt.After(t0.Add(13*time.Second)) {
				t.Errorf("after a failure: %+v", j)
			}
		}
		if n, _ := r.RunOnce(ctx); n != 0 {
			t.Errorf("retried before the backoff elapsed: %d", n)
		}
		clk.Advance(13 * time.Second)
		if n, _ := r.RunOnce(ctx); n != 2 {
			t.Errorf("second run: %d", n)
		}
		js := rows(t, s, "flaky")
		if js[0].State != jobs.StateDone || js[0].Attempts != 2 || calls["once"] != 2 {
			t.Errorf("flaky job: %+v calls %d", js[0], calls["once"])
		}
		// Second backoff is doubled: 20 s (+ up to 25 % jitter).
		if d := js[1].RunAt.Sub(clk.Now()); d < 20*time.Second || d > 25*time.Second {
			t.Errorf("second backoff %v", d)
		}
		clk.Advance(30 * time.Second)
		r.RunOnce(ctx)
		js = rows(t, s, "flaky")
		if js[1].State != jobs.StateDead || js[1].Attempts != 3 || *js[1].LastError != "attempt 3 failed" || calls["always"] != 3 {
			t.Errorf("dead job: %+v calls %d", js[1], calls["always"])
		}
		clk.Advance(time.Hour)
		if n, _ := r.RunOnce(ctx); n != 0 {
			t.Errorf("dead job ran again")
		}
	})
}

// TestLeaseRecovery: a job claimed by a worker that died (never completed)
// is invisible until its lease expires, then another worker takes it; the
// dead worker's late completion is ignored.
func TestLeaseRecovery(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		clk := clocktest.NewFixed(t0)
		enqueue(t, s, t0, "doc", "x")
		ctx := context.Background()
		claimed, err := s.Jobs().Claim(ctx, "dead-worker", t0, time.Minute, 10)
		if err != nil || len(claimed) != 1 || claimed[0].Attempts != 1 {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		// The process "restarts": a new runner on the same database.
		r := jobs.New(s.Jobs(), clk, jobs.Options{Lease: time.Minute})
		done := 0
		r.Handle("doc", func(context.Context, jobs.Job) error { done++; return nil })
		if n, _ := r.RunOnce(ctx); n != 0 {
			t.Errorf("a leased job was taken: %d", n)
		}
		clk.Advance(time.Minute)
		if n, _ := r.RunOnce(ctx); n != 1 || done != 1 {
			t.Errorf("expired lease not re-claimed: ran %d, handler %d", n, done)
		}
		if err := s.Jobs().Complete(ctx, claimed[0].ID, "dead-worker", clk.Now()); err != nil {
			t.Fatal(err)
		}
		j := rows(t, s, "doc")[0]
		if j.State != jobs.StateDone || j.Attempts != 2 {
			t.Errorf("after recovery: %+v", j)
		}
	})
}

// TestTwoRunnersOnce: two runners (two instances) with two workers each
// and in-process wake-ups do every job exactly once.
func TestTwoRunnersOnce(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		clk := clock.System{}
		var mu sync.Mutex
		seen := map[string]int{}
		total := 0
		doneCh := make(chan struct{})
		const n = 60
		h := func(ctx context.Context, j jobs.Job) error {
			mu.Lock()
			defer mu.Unlock()
			seen[j.Payload]++
			total++
			if total == n {
				close(doneCh)
			}
			return nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		var runners []*jobs.Runner
		for i := 0; i < 2; i++ {
			r := jobs.New(s.Jobs(), clk, jobs.Options{PollInterval: 50 * time.Millisecond})
			r.Handle("k", h)
			r.Start(ctx, 2)
			runners = append(runners, r)
		}
		var payloads []string
		for i := 0; i < n; i++ {
			payloads = append(payloads, fmt.Sprint(i))
		}
		enqueue(t, s, time.Now(), "k", payloads[:n/2]...)
		runners[0].Notify()
		enqueue(t, s, time.Now(), "k", payloads[n/2:]...)
		runners[1].Notify()
		select {
		case <-doneCh:
		case <-time.After(time.Minute):
			t.Error("jobs not finished")
		}
		cancel()
		for _, r := range runners {
			r.Wait()
		}
		for _, p := range payloads {
			if seen[p] != 1 {
				t.Errorf("job %s ran %d times", p, seen[p])
			}
		}
		for _, j := range rows(t, s, "k") {
			if j.State != jobs.StateDone || j.Attempts != 1 {
				t.Errorf("job %d: %+v", j.ID, j)
			}
		}
	})
}

// TestLongJobKeepsItsLease: a job that runs for several leases extends its
// lease while it works, so a second runner polling meanwhile never takes it
// and it runs exactly once.
func TestLongJobKeepsItsLease(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		clk := clocktest.NewFixed(t0)
		ctx := context.Background()
		enqueue(t, s, t0, "slow", "x")
		const lease = time.Minute
		second := jobs.New(s.Jobs(), clk, jobs.Options{Lease: lease})
		stolen := 0
		second.Handle("slow", func(context.Context, jobs.Job) error { stolen++; return nil })
		first := jobs.New(s.Jobs(), clk, jobs.Options{Lease: lease, Heartbeat: time.Millisecond})
		runs := 0
		first.Handle("slow", func(ctx context.Context, j jobs.Job) error {
			runs++
			// Work for five leases (40 s steps of the fixed clock). After
			// each step wait for a heartbeat to cover the new time, then
			// let the second runner try to take the job.
			for i := 0; i < 8; i++ {
				clk.Advance(40 * time.Second)
				for {
					js := rows(t, s, "slow")
					if js[0].LockedUntil != nil && js[0].LockedUntil.After(clk.Now()) {
						break
					}
					time.Sleep(time.Millisecond)
				}
				if n, err := second.RunOnce(ctx); n != 0 || err != nil {
					t.Errorf("after %v the second runner took the job: %d %v", clk.Now().Sub(t0), n, err)
				}
			}
			return ctx.Err()
		})
		if n, err := first.RunOnce(ctx); n != 1 || err != nil {
			t.Fatalf("run: %d %v", n, err)
		}
		js := rows(t, s, "slow")
		if runs != 1 || stolen != 0 || js[0].State != jobs.StateDone || js[0].Attempts != 1 {
			t.Errorf("runs %d, stolen %d, job %+v", runs, stolen, js[0])
		}
	})
}

// TestLostLeaseCancelsJob: when another worker took the job after this one
// stalled past its lease, the heartbeat finds the lease gone and cancels
// the handler's context, and the stale result is not recorded.
func TestLostLeaseCancelsJob(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		clk := clocktest.NewFixed(t0)
		ctx := context.Background()
		enqueue(t, s, t0, "slow", "x")
		r := jobs.New(s.Jobs(), clk, jobs.Options{Lease: time.Minute, Heartbeat: time.Millisecond})
		r.Handle("slow", func(hctx context.Context, j jobs.Job) error {
			// Another worker claims the job as if this one had stalled.
			// On PostgreSQL the claim skips the row while a heartbeat's
			// UPDATE holds its lock (SKIP LOCKED): try again until the
			// row is free.
			var js []jobs.Job
			var err error
			for try := 0; try < 10000 && err == nil && len(js) == 0; try++ {
				js, err = s.Jobs().Claim(ctx, "other", clk.Now().Add(2*time.Minute), time.Hour, 1)
			}
			if err != nil || len(js) != 1 {
				// Without the other claim the lease is never lost: fail
				// rather than wait for a cancellation that cannot come.
				t.Errorf("the other worker's claim: %d jobs, %v", len(js), err)
				return err
			}
			<-hctx.Done()
			return hctx.Err()
		})
		if n, err := r.RunOnce(ctx); n != 1 || err != nil {
			t.Fatalf("run: %d %v", n, err)
		}
		j := rows(t, s, "slow")[0]
		if j.State != jobs.StateRunning || j.LockedBy == nil || *j.LockedBy != "other" || j.Attempts != 2 {
			t.Errorf("the other worker's claim was disturbed: %+v", j)
		}
	})
}

// TestBatchHandler: the due jobs of a kind with a batch handler come to it
// together, in claim order, with their worker set, beside the jobs of a
// kind with a plain handler; each result is what a handler's error means:
// nil marks the job done, ErrCompleted leaves it to the handler, an error
// schedules a retry; a panicking batch retries every job of it, and a
// panicking plain handler its job, with the panic as the job's error.
func TestBatchHandler(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		clk := clocktest.NewFixed(t0)
		r := jobs.New(s.Jobs(), clk, jobs.Options{BaseBackoff: 10 * time.Second, ClaimBatch: 10})
		enqueue(t, s, t0, "b", "ok", "self", "fail", "ok2")
		enqueue(t, s, t0, "plain", "x")
		enqueue(t, s, t0, "boom", "p1", "p2")
		enqueue(t, s, t0, "crash", "c1")
		var got [][]string
		r.HandleBatch("b", 0, func(ctx context.Context, js []jobs.Job) []error {
			var ps []string
			out := make([]error, len(js))
			for i, j := range js {
				ps = append(ps, j.Payload)
				if j.Worker == "" {
					t.Errorf("job %s without its worker", j.Payload)
				}
				switch j.Payload {
				case "self":
					out[i] = jobs.ErrCompleted
				case "fail":
					out[i] = errors.New("receiver down")
				}
			}
			got = append(got, ps)
			return out
		})
		r.HandleBatch("boom", 0, func(context.Context, []jobs.Job) []error { panic("broken") })
		plain := 0
		r.Handle("plain", func(context.Context, jobs.Job) error { plain++; return nil })
		r.Handle("crash", func(context.Context, jobs.Job) error { panic("plain broken") })
		n, err := r.RunOnce(ctx)
		if err != nil || n != 8 {
			t.Fatalf("RunOnce = %d, %v; want 8 jobs", n, err)
		}
		if len(got) != 1 || fmt.Sprint(got[0]) != "[ok self fail ok2]" || plain != 1 {
			t.Fatalf("batches %v, plain runs %d; want one batch [ok self fail ok2] and one plain run", got, plain)
		}
		state := map[string]string{}
		for _, k := range []string{"b", "boom", "crash"} {
			for _, j := range rows(t, s, k) {
				state[j.Payload] = j.State
				if j.State == jobs.StateReady && (j.LastError == nil || !j.RunAt.After(t0)) {
					t.Errorf("job %s retried without its error or backoff: %+v", j.Payload, j)
				}
				if k != "b" && (j.LastError == nil || !strings.HasPrefix(*j.LastError, "panic: ")) {
					t.Errorf("job %s: last error %v, want the panic", j.Payload, j.LastError)
				}
			}
		}
		want := map[string]string{"ok": jobs.StateDone, "ok2": jobs.StateDone, "self": jobs.StateRunning, "fail": jobs.StateReady,
			"p1": jobs.StateReady, "p2": jobs.StateReady, "c1": jobs.StateReady}
		if fmt.Sprint(state) != fmt.Sprint(want) {
			t.Errorf("states %v, want %v", state, want)
		}
	})
}

// TestBatchFilledUpTo: a kind registered with upTo gets batches filled
// beyond one claim with its further due jobs (claimed for the same worker,
// never another kind's, never one not yet due), at most upTo per batch; a
// Permanent error buries its job at once, other errors retry it.
func TestBatchFilledUpTo(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		clk := clocktest.NewFixed(t0)
		r := jobs.New(s.Jobs(), clk, jobs.Options{BaseBackoff: 10 * time.Second, ClaimBatch: 2})
		var payloads []string
		for i := range 12 {
			payloads = append(payloads, fmt.Sprintf("p%02d", i))
		}
		enqueue(t, s, t0, "pass", payloads...)
		enqueue(t, s, t0.Add(time.Hour), "pass", "later")
		enqueue(t, s, t0, "other", "o1", "o2", "o3")
		var sizes []int
		workers := map[string]bool{}
		r.HandleBatch("pass", 5, func(ctx context.Context, js []jobs.Job) []error {
			sizes = append(sizes, len(js))
			out := make([]error, len(js))
			for i, j := range js {
				workers[j.Worker] = true
				switch j.Payload {
				case "p03":
					out[i] = jobs.Permanent(errors.New("BadCertificate"))
				case "p04":
					out[i] = errors.New("503 from APNs")
				}
			}
			return out
		})
		others := 0
		r.Handle("other", func(context.Context, jobs.Job) error { others++; return nil })
		n, err := r.RunOnce(ctx)
		if err != nil || n != 15 {
			t.Fatalf("RunOnce = %d, %v; want 15 jobs", n, err)
		}
		total := 0
		for _, sz := range sizes {
			if sz > 5 {
				t.Errorf("a batch of %d jobs, want at most 5", sz)
			}
			total += sz
		}
		if total != 12 || len(sizes) > 4 || sizes[0] != 5 || others != 3 || len(workers) != 1 {
			t.Fatalf("batches %v (total %d), other runs %d, workers %v; want 12 pass jobs in full batches of 5 by one worker and 3 other runs",
				sizes, total, others, workers)
		}
		for _, j := range rows(t, s, "pass") {
			want := jobs.StateDone
			switch j.Payload {
			case "p03":
				want = jobs.StateDead
			case "p04", "later":
				want = jobs.StateReady
			}
			if j.State != want {
				t.Errorf("job %s is %s, want %s", j.Payload, j.State, want)
			}
			if j.Payload == "p03" && (j.LastError == nil || *j.LastError != "BadCertificate") {
				t.Errorf("buried job's error %v, want BadCertificate", j.LastError)
			}
			if j.Payload == "p04" && j.Attempts != 1 {
				t.Errorf("retried job after %d attempts, want 1 (retried later, not buried)", j.Attempts)
			}
		}
	})
}
