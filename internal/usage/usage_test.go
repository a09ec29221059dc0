package usage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// recorder is a Writer that remembers every committed row and batch size.
type recorder struct {
	mu      sync.Mutex
	rows    map[string]int
	batches []int
	gate    chan struct{} // if not nil, the first write waits for it
	called  chan struct{} // closed when the first write starts
	fail    func(events []Event) error
}

func newRecorder() *recorder { return &recorder{rows: map[string]int{}, called: make(chan struct{})} }

func (r *recorder) write(_ context.Context, events []Event) error {
	r.mu.Lock()
	first := len(r.batches) == 0
	r.batches = append(r.batches, len(events))
	r.mu.Unlock()
	if first {
		close(r.called)
		if r.gate != nil {
			<-r.gate
		}
	}
	if r.fail != nil {
		if err := r.fail(events); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range events {
		r.rows[e.RequestID]++
	}
	return nil
}

func (r *recorder) committed(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rows[id]
}

func ev(id string) Event {
	return Event{RequestID: id, AccountID: "acc", Endpoint: "GET /v1/x", Status: 200, Counted: true, Reason: ReasonCounted, At: time.Now()}
}

// waitQueued waits until n rows wait in the ledger's next batch.
func waitQueued(t *testing.T, l *Ledger, n int) {
	t.Helper()
	for {
		l.mu.Lock()
		q := 0
		if l.next != nil {
			q = len(l.next.events)
		}
		l.mu.Unlock()
		if q == n {
			return
		}
		if q > n {
			t.Fatalf("%d rows queued, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Rows arriving while a write is in flight are written together as the
// next batch, by one write, and each Record returns only after its row is
// committed.
func TestLedgerGroupsRowsArrivingDuringAWrite(t *testing.T) {
	r := newRecorder()
	r.gate = make(chan struct{})
	l := NewLedger(r.write, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	rec := func(id string) {
		defer wg.Done()
		if err := l.Record(context.Background(), ev(id)); err != nil {
			errs <- err
			return
		}
		if n := r.committed(id); n != 1 {
			errs <- fmt.Errorf("%s returned with its row committed %d times", id, n)
		}
	}
	wg.Add(1)
	go rec("first")
	<-r.called // the first row is being written, alone
	wg.Add(63)
	for i := range 63 {
		go rec(fmt.Sprintf("r%02d", i))
	}
	waitQueued(t, l, 63)
	close(r.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if fmt.Sprint(r.batches) != "[1 63]" {
		t.Fatalf("batches %v, want [1 63]", r.batches)
	}
	if len(r.rows) != 64 {
		t.Fatalf("%d rows committed, want 64", len(r.rows))
	}
}

// Under sustained concurrent load every row is committed exactly once and
// before its Record returns.
func TestLedgerConcurrentRowsCommittedOnce(t *testing.T) {
	r := newRecorder()
	l := NewLedger(r.write, nil)
	const workers, each = 32, 300
	var failed sync.Map
	concurrently(workers, each, func(id string) {
		if err := l.Record(context.Background(), ev(id)); err != nil || r.committed(id) != 1 {
			failed.Store(id, err)
		}
	})
	failed.Range(func(k, v any) bool { t.Errorf("%v: err %v or not committed once", k, v); return true })
	if len(r.rows) != workers*each {
		t.Fatalf("%d rows committed, want %d", len(r.rows), workers*each)
	}
	total := 0
	for _, b := range r.batches {
		total += b
	}
	if total != workers*each {
		t.Fatalf("batches hold %d rows, want %d (a row written twice or lost)", total, workers*each)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writing || l.next != nil {
		t.Fatalf("idle ledger still writing=%v next=%v", l.writing, l.next)
	}
}

// A failed write fails every request in its batch, and only those: the
// next batch is written normally.
func TestLedgerWriteFailureFailsItsBatchOnly(t *testing.T) {
	r := newRecorder()
	r.gate = make(chan struct{})
	boom := errors.New("disk full")
	r.fail = func(events []Event) error {
		for _, e := range events {
			if e.RequestID == "bad" {
				return boom
			}
		}
		return nil
	}
	l := NewLedger(r.write, nil)
	res := make(map[string]chan error)
	start := func(id string) {
		res[id] = make(chan error, 1)
		go func() { res[id] <- l.Record(context.Background(), ev(id)) }()
	}
	start("first")
	<-r.called
	start("bad")
	waitQueued(t, l, 1)
	start("alsobad")
	waitQueued(t, l, 2)
	close(r.gate)
	if err := <-res["first"]; err != nil {
		t.Fatalf("first: %v", err)
	}
	for _, id := range []string{"bad", "alsobad"} {
		if err := <-res[id]; !errors.Is(err, boom) {
			t.Fatalf("%s: %v, want the batch's write error", id, err)
		}
		if r.committed(id) != 0 {
			t.Fatalf("%s committed although its batch failed", id)
		}
	}
	if err := l.Record(context.Background(), ev("later")); err != nil || r.committed("later") != 1 {
		t.Fatalf("after a failed batch: %v, committed %d", err, r.committed("later"))
	}
}

// Close waits for the rows already accepted and refuses new ones.
func TestLedgerCloseWaitsForAcceptedRows(t *testing.T) {
	r := newRecorder()
	r.gate = make(chan struct{})
	l := NewLedger(r.write, nil)
	first := make(chan error, 1)
	go func() { first <- l.Record(context.Background(), ev("first")) }()
	<-r.called
	queued := make(chan error, 1)
	go func() { queued <- l.Record(context.Background(), ev("queued")) }()
	waitQueued(t, l, 1)
	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	for {
		l.mu.Lock()
		c := l.closed
		l.mu.Unlock()
		if c {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := l.Record(context.Background(), ev("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Record after Close: %v, want ErrClosed", err)
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a write was in flight")
	default:
	}
	close(r.gate)
	<-closed
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-queued; err != nil {
		t.Fatal(err)
	}
	if r.committed("first") != 1 || r.committed("queued") != 1 || r.committed("late") != 0 {
		t.Fatalf("committed rows %v", r.rows)
	}
}

// BenchmarkLedgerRecord: the ledger's own cost per request with 64
// concurrent callers and a writer that encodes each batch as the journal
// does, without the write call.
func BenchmarkLedgerRecord(b *testing.B) {
	l := NewLedger(func(_ context.Context, events []Event) error {
		_ = AppendBatch(make([]byte, 0, 64), events)
		return nil
	}, nil)
	recordInParallel(b, l)
}

// recordInParallel records one event through l from 32 goroutines per
// core until b.N, reporting allocations.
func recordInParallel(b *testing.B, l interface {
	Record(context.Context, Event) error
}) {
	e := ev("bench-request-id-0123456789")
	b.SetParallelism(32)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := l.Record(context.Background(), e); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// concurrently calls do with the ids "w<worker>-<i>", i < n, from each of
// workers goroutines at once and returns when all calls are done.
func concurrently(workers, n int, do func(id string)) {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				do(fmt.Sprintf("w%d-%d", w, i))
			}
		}()
	}
	wg.Wait()
}
