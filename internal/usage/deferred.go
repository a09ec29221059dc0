package usage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// KeyedWriter commits a batch under key. A batch already committed under
// key changes nothing and returns nil: a retry after a write whose outcome
// was unknown (the connection broke after the commit) never counts twice.
type KeyedWriter func(ctx context.Context, key string, events []Event) error

// Defaults of DeferredOptions.
const (
	DefaultWindow     = 100 * time.Millisecond
	DefaultWindowRows = 10000
)

// DeferredOptions bound a Deferred ledger's window.
type DeferredOptions struct {
	// Window is how long the first row of a window waits before the
	// window is written (DefaultWindow when 0).
	Window time.Duration
	// MaxRows writes a window early once it holds this many rows; while a
	// full window waits for the write before it, Record waits too, so at
	// most 2×MaxRows acknowledged rows are ever uncommitted
	// (DefaultWindowRows when 0).
	MaxRows int
	// OnCommit, if not nil, observes each committed window (rows, write
	// latency) for metrics.
	OnCommit func(rows int, d time.Duration)
	// OnError, if not nil, observes each failed write of a window (it is
	// retried) and, with lost set, a window given up at Close.
	OnError func(err error, rows int, lost bool)
}

// ErrBacklog is returned by Record while the database refuses the ledger's
// writes and a full window already waits: the request is not answered as
// if it had been recorded.
var ErrBacklog = errors.New("usage: ledger backlog full while its writes fail")

// retryMax bounds the pause between retries of a failing window write.
const retryMax = 2 * time.Second

// Deferred is the ledger that does not keep the response waiting: Record
// appends the row to the open window and returns. One goroutine writes
// each window (group commit) when its first row is Window old or it holds
// MaxRows rows, under a key unique to this process and window, and retries
// a failed write under the same key until it commits. A crash of the
// process loses at most the open window and the one being written, never
// counts a row twice; Close writes everything before it returns, and
// Flush waits until every row recorded before the call is committed (the
// usage reports call it, so a report sees every request the service
// answered).
type Deferred struct {
	write KeyedWriter
	opt   DeferredOptions
	run   string // this process's part of the window keys

	mu        sync.Mutex
	open      []Event   // the open window
	openedAt  time.Time // when its first row came
	spare     []Event   // the buffer of the last window written, for reuse
	urgent    bool      // write the open window now (Flush, Close)
	failing   error     // the last write failed; it is being retried
	closed    bool
	seq       uint64        // windows taken for writing
	committed uint64        // windows written (or given up at Close)
	changed   chan struct{} // closed and replaced on every change of the above
	kick      chan struct{} // wakes the writer (capacity 1)
	done      chan struct{} // closed when the writer returned
}

// NewDeferred starts a deferred ledger writing with w.
func NewDeferred(w KeyedWriter, opt DeferredOptions) (*Deferred, error) {
	if opt.Window <= 0 {
		opt.Window = DefaultWindow
	}
	if opt.MaxRows <= 0 {
		opt.MaxRows = DefaultWindowRows
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("usage: window key: %w", err)
	}
	l := &Deferred{write: w, opt: opt, run: hex.EncodeToString(b[:]),
		changed: make(chan struct{}), kick: make(chan struct{}, 1), done: make(chan struct{})}
	go l.writer()
	return l, nil
}

// Run is the part of every window key this process writes ("<run>-<n>").
func (l *Deferred) Run() string { return l.run }

// Record adds ev to the open window and returns at once, unless the
// window is full while the write before it is still in flight (then it
// waits for room, or ctx) or the writes fail and the window is full
// (ErrBacklog).
func (l *Deferred) Record(ctx context.Context, ev Event) error {
	l.mu.Lock()
	for len(l.open) >= l.opt.MaxRows && !l.closed {
		if l.failing != nil {
			l.mu.Unlock()
			return fmt.Errorf("%w: %w", ErrBacklog, l.failing)
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		l.mu.Lock()
	}
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if l.open == nil {
		l.open, l.spare = l.spare, nil
	}
	l.open = append(l.open, ev)
	n := len(l.open)
	if n == 1 {
		l.openedAt = time.Now()
	}
	l.mu.Unlock()
	if n == 1 || n == l.opt.MaxRows {
		l.wake()
	}
	return nil
}

// Flush returns once every row recorded before the call is committed, or
// with ctx's error.
func (l *Deferred) Flush(ctx context.Context) error {
	l.mu.Lock()
	target := l.seq
	if len(l.open) > 0 {
		target++
		l.urgent = true
	}
	l.mu.Unlock()
	l.wake()
	for {
		l.mu.Lock()
		ok, ch := l.committed >= target, l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("usage: ledger flush: %w", ctx.Err())
		}
	}
}

// Close refuses rows from now on and returns when every accepted row is
// written; a window whose write still fails WriteTimeout after Close is
// given up (OnError with lost set).
func (l *Deferred) Close() {
	l.mu.Lock()
	l.closed = true
	l.urgent = true
	l.notify()
	l.mu.Unlock()
	l.wake()
	<-l.done
}

func (l *Deferred) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// notify wakes everyone waiting for a change (l.mu held).
func (l *Deferred) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// writer writes one window at a time until Close.
func (l *Deferred) writer() {
	defer close(l.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var closedAt time.Time
	for {
		l.mu.Lock()
		if len(l.open) == 0 {
			if l.closed {
				l.mu.Unlock()
				return
			}
			l.mu.Unlock()
			<-l.kick
			continue
		}
		if wait := time.Until(l.openedAt.Add(l.opt.Window)); wait > 0 && !l.urgent && len(l.open) < l.opt.MaxRows {
			l.mu.Unlock()
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-l.kick:
				timer.Stop()
			}
			continue
		}
		events := l.open
		l.open, l.urgent = nil, false
		l.seq++
		key := l.run + "-" + strconv.FormatUint(l.seq, 10)
		if l.closed && closedAt.IsZero() {
			closedAt = time.Now()
		}
		l.notify()
		l.mu.Unlock()
		l.writeWindow(key, events, &closedAt)
		l.mu.Lock()
		l.committed++
		l.spare = events[:0]
		l.notify()
		l.mu.Unlock()
	}
}

// writeWindow writes one window, retrying under the same key until it
// commits; after Close it gives up WriteTimeout after the close.
func (l *Deferred) writeWindow(key string, events []Event, closedAt *time.Time) {
	pause := l.opt.Window
	for {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), WriteTimeout)
		err := l.write(ctx, key, events)
		cancel()
		l.mu.Lock()
		l.failing = err
		if l.closed && closedAt.IsZero() {
			*closedAt = time.Now()
		}
		giveUp := err != nil && l.closed && time.Since(*closedAt) > WriteTimeout
		l.notify()
		l.mu.Unlock()
		if err == nil {
			if l.opt.OnCommit != nil {
				l.opt.OnCommit(len(events), time.Since(start))
			}
			return
		}
		if l.opt.OnError != nil {
			l.opt.OnError(err, len(events), giveUp)
		}
		if giveUp {
			return
		}
		time.Sleep(pause)
		pause = min(2*pause, retryMax)
	}
}

// Position is where the ledger stands: its newest committed batch.
type Position struct {
	Batch int64     // usage_batches id
	At    time.Time // the time of the batch's first row
	Rows  int
	Key   string // the window key of a deferred ledger's window ("" otherwise)
}
