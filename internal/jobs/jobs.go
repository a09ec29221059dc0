package jobs

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/clock"
)

// States of a job row.
const (
	StateReady   = "ready"   // waiting for run_at
	StateRunning = "running" // claimed; locked_by holds it until locked_until
	StateDone    = "done"    // finished successfully
	StateDead    = "dead"    // failed max_attempts times; kept for inspection
)

// Job is one claimed job.
type Job struct {
	ID          int64
	Kind        string
	Payload     string
	Attempts    int // including the current one
	MaxAttempts int
	// Worker holds the job's lease while its handler runs: a handler that
	// completes the job in a transaction of its own (with the job's
	// results) passes it to the store and returns ErrCompleted.
	Worker string
}

// ErrCompleted, returned by a handler, says that the handler has marked
// its job done itself, in the transaction that wrote its results: the
// runner records nothing more (one commit less per job).
var ErrCompleted = errors.New("job completed by its handler")

// Record is a job as stored, with its state and lease (for tests and
// operations).
type Record struct {
	ID          int64
	Kind        string
	Payload     string
	State       string
	Attempts    int
	MaxAttempts int
	RunAt       time.Time
	LockedBy    *string
	LockedUntil *time.Time // the lease of a running job
	LastError   *string
}

// NewJob is a job to enqueue.
type NewJob struct {
	Kind        string
	Payload     string
	MaxAttempts int       // 0: DefaultMaxAttempts
	RunAt       time.Time // zero: now
}

// DefaultMaxAttempts is how often a job runs before it is dead.
const DefaultMaxAttempts = 8

// DoneRetention is how long a job that finished successfully stays in the
// queue (for the operator's look at recent work) before it is pruned. Dead
// jobs are kept until an operator deals with them.
const DoneRetention = 7 * 24 * time.Hour

// Queue is the storage the runner needs; internal/store implements it.
type Queue interface {
	// Claim marks up to limit due jobs (ready with run_at ≤ now, or running
	// with an expired lease) as running for worker until now+lease,
	// increments their attempts and returns them. Two concurrent claims never
	// return the same job.
	Claim(ctx context.Context, worker string, now time.Time, lease time.Duration, limit int) ([]Job, error)
	// Complete marks a job done if worker still holds it.
	Complete(ctx context.Context, id int64, worker string, now time.Time) error
	// Retry puts a job back to ready at runAt (or to dead when dead is
	// true) with the error message, if worker still holds it.
	Retry(ctx context.Context, id int64, worker string, now, runAt time.Time, msg string, dead bool) error
	// Extend moves the lease of a running job that worker still holds to
	// until; false when worker no longer holds it.
	Extend(ctx context.Context, id int64, worker string, until time.Time) (bool, error)
	// Of is the queue of one kind of job: its Claim takes only jobs of
	// kind (a batch handler's further jobs, HandleBatch).
	Of(kind string) Queue
}

// Handler runs one job. A returned error schedules a retry.
type Handler func(ctx context.Context, j Job) error

// BatchHandler runs the jobs of one kind from one claim together (one
// read for all of them, say), and returns one result per job, in the
// order given, each meaning what a Handler's error means (nil, ErrCompleted,
// an error that schedules a retry, or a Permanent one). Its context is
// cancelled when the lease of any of the jobs is lost.
type BatchHandler func(ctx context.Context, js []Job) []error

// Permanent marks a handler's error as one no retry can change: the job
// is buried (dead) at once, with the error, for the operator.
func Permanent(err error) error { return permanent{err} }

type permanent struct{ error }

func (e permanent) Unwrap() error { return e.error }

// Options tune a Runner.
type Options struct {
	Lease time.Duration // how long a claim holds (default 2 minutes)
	// Heartbeat is how often a running job's lease is extended by Lease
	// (default Lease/3): a job that runs longer than its lease keeps it
	// while its worker lives, and is taken over only once the worker is gone.
	Heartbeat    time.Duration
	PollInterval time.Duration // how often idle workers look for jobs (default 1 s)
	BaseBackoff  time.Duration // first retry delay (default 2 s)
	ClaimBatch   int           // jobs a worker claims at once (default 16)
	// Concurrent runs the jobs of one claim at the same time instead of
	// one after the other: for jobs that mostly wait (webhook deliveries),
	// so one claim's jobs share the wait and their handlers can share a
	// commit.
	Concurrent bool
	MaxBackoff time.Duration // cap of the retry delay (default 10 minutes)
	Log        *slog.Logger
	// Observe, when set, is called after every run with the handler's
	// result and duration (metrics).
	Observe func(kind string, err error, d time.Duration)
}

// Runner claims and runs jobs.
type Runner struct {
	q      Queue
	clk    clock.Clock
	o      Options
	id     string
	mu     sync.RWMutex
	kinds  map[string]Handler
	batch  map[string]batchKind
	wake   chan struct{}
	wg     sync.WaitGroup
	seq    int
	seqMu  sync.Mutex
	jitter func(time.Duration) time.Duration
}

// WithDefaults is o with every unset duration and the claim batch at the
// runner's default (a handler that claims or retries jobs itself uses the
// same lease and backoff as the runner).
func (o Options) WithDefaults() Options {
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = o.Lease / 3
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = 2 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Minute
	}
	if o.ClaimBatch <= 0 {
		o.ClaimBatch = 16
	}
	return o
}

// New returns a runner over q. Its worker ids are unique per process.
func New(q Queue, clk clock.Clock, o Options) *Runner {
	o = o.WithDefaults()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	b := make([]byte, 6)
	_, _ = crand.Read(b)
	return &Runner{q: q, clk: clk, o: o, id: hex.EncodeToString(b), kinds: map[string]Handler{}, batch: map[string]batchKind{},
		wake: make(chan struct{}, 1), jitter: func(d time.Duration) time.Duration {
			return time.Duration(rand.Int64N(int64(d)/4 + 1))
		}}
}

// Handle registers the handler of a job kind.
func (r *Runner) Handle(kind string, h Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kinds[kind] = h
}

// HandleBatch registers the handler of a job kind whose jobs run
// together; it replaces a Handler of the kind. With upTo 0 a batch is the
// kind's jobs of one claim (Options.ClaimBatch of every kind); with more,
// the runner adds further due jobs of the kind, claimed for the same
// worker, until the batch holds upTo (a month turn's thousands of pass
// updates, due at one instant, served 500 at a time). Every job of a
// batch keeps its lease by the same heartbeat.
func (r *Runner) HandleBatch(kind string, upTo int, h BatchHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batch[kind] = batchKind{h: h, upTo: upTo}
	delete(r.kinds, kind)
}

// batchKind is a batch handler and the size its batches are filled to.
type batchKind struct {
	h    BatchHandler
	upTo int
}

// Notify wakes one idle worker of this instance; call it after the
// transaction that enqueued a job committed. It never blocks.
func (r *Runner) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Backoff is the delay before attempt n+1 after n failed attempts: base·2^(n−1),
// capped, without jitter.
func Backoff(base, max time.Duration, n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := base
	for i := 1; i < n; i++ {
		d *= 2
		if d >= max {
			return max
		}
	}
	return min(d, max)
}

func (r *Runner) worker() string {
	r.seqMu.Lock()
	defer r.seqMu.Unlock()
	r.seq++
	return fmt.Sprintf("%s-%d", r.id, r.seq)
}

// RunOnce claims every due job (in batches of Options.ClaimBatch) under one worker id
// and runs them one after the other until none is due. It returns how many
// jobs ran (successfully or not).
func (r *Runner) RunOnce(ctx context.Context) (int, error) {
	return r.drain(ctx, r.worker())
}

func (r *Runner) drain(ctx context.Context, worker string) (int, error) {
	n := 0
	for {
		jobs, err := r.q.Claim(ctx, worker, r.clk.Now(), r.o.Lease, r.o.ClaimBatch)
		if err != nil {
			return n, err
		}
		if len(jobs) == 0 {
			return n, nil
		}
		jobs, ran, err := r.runBatches(ctx, worker, jobs)
		n += ran
		if err != nil {
			return n, err
		}
		if r.o.Concurrent {
			errs := make([]error, len(jobs))
			var wg sync.WaitGroup
			for i, j := range jobs {
				wg.Add(1)
				go func() { defer wg.Done(); errs[i] = r.run(ctx, worker, j) }()
			}
			wg.Wait()
			n += len(jobs)
			if err := errors.Join(errs...); err != nil {
				return n, err
			}
			continue
		}
		for _, j := range jobs {
			if err := r.run(ctx, worker, j); err != nil {
				return n, err
			}
			n++
		}
	}
}

// errExhausted is the outcome of a job claimed once more than it may run.
var errExhausted = errors.New("attempts exhausted (the last worker lost its lease)")

// runBatches runs the jobs of a claim whose kinds have a BatchHandler, one
// call per kind, and returns the others.
func (r *Runner) runBatches(ctx context.Context, worker string, js []Job) (rest []Job, ran int, err error) {
	r.mu.RLock()
	hs := make(map[string]batchKind, len(r.batch))
	for k, h := range r.batch {
		hs[k] = h
	}
	r.mu.RUnlock()
	if len(hs) == 0 {
		return js, 0, nil
	}
	byKind := map[string][]Job{}
	var kinds []string
	for _, j := range js {
		if _, ok := hs[j.Kind]; !ok {
			rest = append(rest, j)
			continue
		}
		if byKind[j.Kind] == nil {
			kinds = append(kinds, j.Kind)
		}
		byKind[j.Kind] = append(byKind[j.Kind], j)
	}
	for _, k := range kinds {
		claimed := byKind[k]
		if n := hs[k].upTo - len(claimed); n > 0 {
			more, cerr := r.q.Of(k).Claim(ctx, worker, r.clk.Now(), r.o.Lease, n)
			if cerr != nil {
				// The claimed jobs run without further ones.
				r.o.Log.Warn("job batch not filled", "kind", k, "error", cerr.Error())
			}
			claimed = append(claimed, more...)
		}
		var batch []Job
		for _, j := range claimed {
			if j.Attempts > j.MaxAttempts {
				ran++
				err = errors.Join(err, r.finish(ctx, worker, j, errExhausted))
				continue
			}
			j.Worker = worker
			batch = append(batch, j)
		}
		if len(batch) == 0 {
			continue
		}
		began := time.Now()
		errs := r.runBatchLeased(ctx, worker, hs[k].h, batch)
		for i, j := range batch {
			herr := errs[i]
			if r.o.Observe != nil {
				e := herr
				if errors.Is(e, ErrCompleted) {
					e = nil
				}
				r.o.Observe(j.Kind, e, time.Since(began))
			}
			ran++
			if !errors.Is(herr, ErrCompleted) {
				err = errors.Join(err, r.finish(ctx, worker, j, herr))
			}
		}
	}
	return rest, ran, err
}

// runBatchLeased runs a batch handler while extending the leases of its
// jobs (runLeased for a batch); it cancels the handler's context when a
// lease is lost. It always returns one result per job.
func (r *Runner) runBatchLeased(ctx context.Context, worker string, h BatchHandler, js []Job) (errs []error) {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	beat := make(chan struct{})
	go func() {
		defer close(beat)
		t := time.NewTicker(r.o.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			for _, j := range js {
				held, err := r.q.Extend(context.WithoutCancel(ctx), j.ID, worker, r.clk.Now().Add(r.o.Lease))
				switch {
				case err != nil:
					r.o.Log.Warn("job lease not extended", "job_id", j.ID, "kind", j.Kind, "error", err.Error())
				case !held:
					r.o.Log.Warn("job lease lost", "job_id", j.ID, "kind", j.Kind)
					cancel()
					return
				}
			}
		}
	}()
	defer func() {
		close(stop)
		<-beat
		if p := recover(); p != nil {
			errs = nil
			for range js {
				errs = append(errs, fmt.Errorf("panic: %v", p))
			}
		}
	}()
	errs = h(hctx, js)
	if len(errs) != len(js) {
		panic(fmt.Sprintf("batch handler of %q returned %d results for %d jobs", js[0].Kind, len(errs), len(js)))
	}
	return errs
}

// run executes one job and records its outcome.
func (r *Runner) run(ctx context.Context, worker string, j Job) error {
	r.mu.RLock()
	h := r.kinds[j.Kind]
	r.mu.RUnlock()
	var herr error
	switch {
	case j.Attempts > j.MaxAttempts:
		herr = errExhausted
	case h == nil:
		herr = fmt.Errorf("no handler for job kind %q", j.Kind)
	default:
		began := time.Now()
		j.Worker = worker
		herr = r.runLeased(ctx, worker, h, j)
		if errors.Is(herr, ErrCompleted) {
			if r.o.Observe != nil {
				r.o.Observe(j.Kind, nil, time.Since(began))
			}
			return nil
		}
		if r.o.Observe != nil {
			r.o.Observe(j.Kind, herr, time.Since(began))
		}
	}
	return r.finish(ctx, worker, j, herr)
}

// finish records the outcome of a job that its handler did not complete
// itself: done, or a retry after a backoff (dead after MaxAttempts, or at
// once for a Permanent error).
func (r *Runner) finish(ctx context.Context, worker string, j Job, herr error) error {
	// Record the outcome even when ctx was cancelled meanwhile (shutdown):
	// the work is done and must not be repeated after the lease.
	ctx = context.WithoutCancel(ctx)
	now := r.clk.Now()
	if herr == nil {
		return r.q.Complete(ctx, j.ID, worker, now)
	}
	var pe permanent
	dead := j.Attempts >= j.MaxAttempts || errors.As(herr, &pe)
	delay := Backoff(r.o.BaseBackoff, r.o.MaxBackoff, j.Attempts)
	delay += r.jitter(delay)
	r.o.Log.Warn("job failed", "job_id", j.ID, "kind", j.Kind, "attempt", j.Attempts, "dead", dead, "error", herr.Error())
	return r.q.Retry(ctx, j.ID, worker, now, now.Add(delay), herr.Error(), dead)
}

// runLeased runs h while extending the job's lease every Heartbeat, so a
// job that outlives one lease is not claimed and run a second time by
// another worker. When the lease turns out to be lost (another worker took
// the job after this one stalled past it), the handler's context is
// cancelled: its result would be discarded anyway.
func (r *Runner) runLeased(ctx context.Context, worker string, h Handler, j Job) error {
	return r.runBatchLeased(ctx, worker, func(ctx context.Context, js []Job) []error {
		return []error{h(ctx, js[0])}
	}, []Job{j})[0]
}

// Start runs n workers until ctx ends; Wait waits for them. Each worker
// drains the due jobs, then sleeps until Notify or the poll interval.
func (r *Runner) Start(ctx context.Context, n int) {
	for i := 0; i < n; i++ {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			worker := r.worker()
			t := time.NewTicker(r.o.PollInterval)
			defer t.Stop()
			for {
				if _, err := r.drain(ctx, worker); err != nil && ctx.Err() == nil {
					r.o.Log.Error("job worker", "worker", worker, "error", err.Error())
				}
				select {
				case <-ctx.Done():
					return
				case <-r.wake:
				case <-t.C:
				}
			}
		}()
	}
}

// Wait blocks until the workers started by Start have stopped.
func (r *Runner) Wait() { r.wg.Wait() }
