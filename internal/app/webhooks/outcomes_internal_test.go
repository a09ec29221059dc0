package webhooks

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
)

// TestOutcomeBatching: outcomes that arrive while a batch is being written
// wait and are written together in the next one (group commit), and each
// attempt learns the result of the write that recorded it.
func TestOutcomeBatching(t *testing.T) {
	var b hookBatch
	release := make(chan struct{})
	var mu sync.Mutex
	var batches [][]int64
	failSecond := errors.New("second write failed")
	write := func(_ context.Context, batch []*hookOutcome) error {
		ids := make([]int64, len(batch))
		for i, o := range batch {
			ids[i] = o.job.ID
		}
		mu.Lock()
		batches = append(batches, ids)
		n := len(batches)
		mu.Unlock()
		if n == 1 {
			<-release // the first write is slow: the others queue meanwhile
			return nil
		}
		return failSecond
	}
	outcome := func(id int64) *hookOutcome {
		o := &hookOutcome{done: make(chan error, 1)}
		o.job.ID = id
		return o
	}
	errs := make([]error, 6)
	var wg sync.WaitGroup
	first := make(chan struct{})
	wg.Go(func() {
		close(first)
		errs[0] = b.record(context.Background(), outcome(0), write)
	})
	<-first
	// Wait until the first write has begun, then queue five more.
	for {
		mu.Lock()
		n := len(batches)
		mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	for i := 1; i < 6; i++ {
		wg.Go(func() { errs[i] = b.record(context.Background(), outcome(int64(i)), write) })
	}
	for {
		b.mu.Lock()
		n := len(b.queue)
		b.mu.Unlock()
		if n == 5 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if len(batches) != 2 || len(batches[0]) != 1 || batches[0][0] != 0 || len(batches[1]) != 5 {
		t.Fatalf("batches %v, want [0] then the five queued meanwhile", batches)
	}
	if errs[0] != nil {
		t.Errorf("the first attempt: %v", errs[0])
	}
	for i := 1; i < 6; i++ {
		if !errors.Is(errs[i], failSecond) {
			t.Errorf("attempt %d: %v, want the second write's error", i, errs[i])
		}
	}
	if b.flushing || len(b.queue) != 0 {
		t.Errorf("after the writes: flushing %v, queue %d", b.flushing, len(b.queue))
	}
}
