package usage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// windows is a KeyedWriter over a map, like the store: a key committed
// once is not committed again. A write may be made to fail before (fail)
// or after (lostAck: committed, but the caller hears an error) the commit.
type windows struct {
	mu      sync.Mutex
	byKey   map[string][]Event
	rows    map[string]int // request id → times committed
	calls   []string       // keys in call order
	written chan string    // receives each committed key, if not nil
	fail    func(key string, attempt int) (before, lostAck bool)
	tries   map[string]int
}

func newWindows() *windows {
	return &windows{byKey: map[string][]Event{}, rows: map[string]int{}, tries: map[string]int{}}
}

func (w *windows) write(_ context.Context, key string, events []Event) error {
	w.mu.Lock()
	w.calls = append(w.calls, key)
	w.tries[key]++
	before, lostAck := false, false
	if w.fail != nil {
		before, lostAck = w.fail(key, w.tries[key])
	}
	if before {
		w.mu.Unlock()
		return errors.New("connection refused")
	}
	fresh := w.byKey[key] == nil
	if fresh {
		w.byKey[key] = append([]Event(nil), events...)
		for _, e := range events {
			w.rows[e.RequestID]++
		}
	}
	w.mu.Unlock()
	if fresh && w.written != nil {
		w.written <- key
	}
	if lostAck {
		return errors.New("connection reset after commit")
	}
	return nil
}

func (w *windows) count(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rows[id]
}

// Record returns before anything is written (the window is an hour
// here); Flush commits every row recorded before it, each exactly once,
// under keys of this process's run.
func TestDeferredFlushCommitsEveryRecordedRow(t *testing.T) {
	w := newWindows()
	var committed int
	var mu sync.Mutex
	l, err := NewDeferred(w.write, DeferredOptions{Window: time.Hour, OnCommit: func(rows int, _ time.Duration) {
		mu.Lock()
		committed += rows
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 5 {
		if err := l.Record(context.Background(), ev(fmt.Sprint("r", i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.count("r0"); n != 0 {
		t.Fatalf("r0 committed %d times before the window ended or a flush", n)
	}
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if n := w.count(fmt.Sprint("r", i)); n != 1 {
			t.Errorf("r%d committed %d times after Flush, want 1", i, n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if committed != 5 || len(w.calls) != 1 || !strings.HasPrefix(w.calls[0], l.Run()+"-") {
		t.Errorf("OnCommit saw %d rows; writes %v; want 5 rows in one window keyed %s-…", committed, w.calls, l.Run())
	}
	// A flush with nothing recorded returns at once and writes nothing.
	if err := l.Flush(context.Background()); err != nil || len(w.calls) != 1 {
		t.Errorf("empty Flush: %v, writes %v", err, w.calls)
	}
}

// A window is written when its first row is Window old, without a flush.
func TestDeferredWritesWhenTheWindowEnds(t *testing.T) {
	w := newWindows()
	w.written = make(chan string, 1)
	l, err := NewDeferred(w.write, DeferredOptions{Window: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Record(context.Background(), ev("a")); err != nil {
		t.Fatal(err)
	}
	<-w.written
	if n := w.count("a"); n != 1 {
		t.Errorf("a committed %d times, want 1", n)
	}
}

// MaxRows: a full window is written at once, however long the window;
// while a full window waits for the write before it, Record waits for
// room, so at most 2×MaxRows acknowledged rows are ever uncommitted.
func TestDeferredFullWindowAndBackPressure(t *testing.T) {
	w := newWindows()
	w.written = make(chan string) // unbuffered: a write waits until the test takes it
	l, err := NewDeferred(w.write, DeferredOptions{Window: time.Hour, MaxRows: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := l.Record(context.Background(), ev(fmt.Sprint("a", i))); err != nil {
			t.Fatal(err)
		}
	}
	// The first window is being written (and held in w.written); the
	// next fills up, and the one row more must wait.
	for i := range 3 {
		if err := l.Record(context.Background(), ev(fmt.Sprint("b", i))); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() { waited <- l.Record(ctx, ev("c")) }()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("Record into a full window behind a write in flight = %v, want it to wait until ctx ends", err)
	}
	go func() {
		for range w.written {
		}
	}()
	if err := l.Record(context.Background(), ev("c")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	close(w.written)
	for _, id := range []string{"a0", "a2", "b0", "b2", "c"} {
		if n := w.count(id); n != 1 {
			t.Errorf("%s committed %d times, want 1", id, n)
		}
	}
	if err := l.Record(context.Background(), ev("late")); !errors.Is(err, ErrClosed) {
		t.Errorf("Record after Close = %v, want ErrClosed", err)
	}
}

// A write that fails is retried under the same key; one that committed
// but whose answer was lost is retried too and changes nothing: every row
// is counted once. While writes fail and the open window is full, Record
// refuses (ErrBacklog) instead of answering as if it had recorded.
func TestDeferredRetriesUnderTheSameKey(t *testing.T) {
	w := newWindows()
	var outage sync.Mutex // held: every write fails before committing
	down := true
	w.fail = func(key string, attempt int) (bool, bool) {
		if strings.HasSuffix(key, "-1") && attempt == 1 {
			return false, true // committed, answer lost
		}
		outage.Lock()
		defer outage.Unlock()
		return down, false
	}
	var failures, lost int
	l, err := NewDeferred(w.write, DeferredOptions{Window: time.Millisecond, MaxRows: 2,
		OnError: func(_ error, _ int, gaveUp bool) {
			outage.Lock()
			failures++
			if gaveUp {
				lost++
			}
			outage.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"x0", "x1"} {
		if err := l.Record(context.Background(), ev(id)); err != nil {
			t.Fatal(err)
		}
	}
	// Window 1 commits but hears an error, and its retries fail (down):
	// the next window fills and then the ledger refuses.
	var refused error
	for i := 0; refused == nil; i++ {
		refused = l.Record(context.Background(), ev(fmt.Sprint("y", i)))
	}
	if !errors.Is(refused, ErrBacklog) {
		t.Fatalf("Record while writes fail = %v, want ErrBacklog", refused)
	}
	outage.Lock()
	down = false
	outage.Unlock()
	if err := l.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Close()
	for _, id := range []string{"x0", "x1", "y0", "y1"} {
		if n := w.count(id); n != 1 {
			t.Errorf("%s committed %d times, want 1", id, n)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tries[l.Run()+"-1"] < 2 || failures < 1 || lost != 0 {
		t.Errorf("window 1 tried %d times, %d failures reported (%d lost); want retries and nothing lost", w.tries[l.Run()+"-1"], failures, lost)
	}
}

// Concurrent requests: every row recorded before Close is committed
// exactly once, and windows carry distinct keys.
func TestDeferredConcurrentRecordsAndClose(t *testing.T) {
	w := newWindows()
	l, err := NewDeferred(w.write, DeferredOptions{Window: time.Millisecond, MaxRows: 64})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				if err := l.Record(context.Background(), ev(fmt.Sprintf("g%d-%d", g, i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	l.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.rows) != 8*500 {
		t.Errorf("%d distinct rows committed, want %d", len(w.rows), 8*500)
	}
	for id, n := range w.rows {
		if n != 1 {
			t.Errorf("%s committed %d times", id, n)
		}
	}
	seen := map[string]bool{}
	for _, k := range w.calls {
		if seen[k] {
			t.Errorf("key %s written twice without a failure", k)
		}
		seen[k] = true
	}
}

// BenchmarkDeferredRecord: the deferred ledger's cost per request with 64
// concurrent callers and a writer that encodes each window as the store
// does, without the write call (compare BenchmarkLedgerRecord in the same
// run: go test -run XXX -bench 'Record$' ./internal/usage).
func BenchmarkDeferredRecord(b *testing.B) {
	l, err := NewDeferred(func(_ context.Context, _ string, events []Event) error {
		_ = EncodeBatch(events)
		_ = Aggregate(events)
		return nil
	}, DeferredOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	recordInParallel(b, l)
}
