// Package usage is the durable usage ledger: one row per request that can be
// attributed to an account, saying whether the request is counted (billed).
//
// Deferred, the default in database mode, does not keep the response
// waiting: it commits a window of rows (at most 100 ms or a row bound)
// after the responses, under a key unique to the window, so a crash loses at
// most the open window and the one being written and never bills twice
// (docs/operations.md "Billing").
//
// Ledger commits a request's row before its response is sent, so a crash
// neither loses a billed request nor bills one twice. Committing one row per
// transaction would make the ledger the bottleneck, so Ledger batches (group
// commit): rows that arrive while a batch is being written wait together and
// are written as the next batch by one of their own requests. Under load the
// batch grows by itself while the previous write is in flight; an idle
// service writes a single row at once. FileLog, the journal, commits a row
// by copying it into a memory-mapped file and moves whole seconds of rows
// into the database at once (Rollup). All three are Recorders.
package usage

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/account"
)

// Reasons a request is not counted (Event.Reason); "" for counted requests.
const (
	ReasonCounted = "counted"
	ReasonSession = "session"      // covered by a session block
	ReasonReplay  = "replay"       // idempotent replay
	ReasonFailed  = "server_error" // the service failed (5xx)
	// ReasonRateLimited: refused with 429 by a rate limit; reported as
	// refused (Row.Refused) besides uncounted.
	ReasonRateLimited = "rate_limited"
)

// UncountedReasons are the reasons of uncounted rows (metric label values).
var UncountedReasons = []string{ReasonSession, ReasonReplay, ReasonFailed, ReasonRateLimited}

// Event is one ledger row.
type Event struct {
	RequestID   string
	AccountID   string
	Environment account.Environment
	Endpoint    string // route pattern, e.g. "GET /v1/departures.json"
	Status      int
	Counted     bool
	Reason      string
	At          time.Time
}

// Day is the calendar day (UTC) an event is booked on.
func (e Event) Day() string { return e.At.UTC().Format(time.DateOnly) }

// Row is one line of a usage report.
type Row struct {
	AccountID string `json:"account_id,omitempty"`
	Day       string `json:"date"`
	Endpoint  string `json:"endpoint"`
	Counted   int64  `json:"counted"`
	Uncounted int64  `json:"uncounted"` // every request not billed, refused ones included
	Refused   int64  `json:"refused"`   // of those, refused by a rate limit (429)
}

// Recorder takes a request's ledger row: Deferred returns once the row is
// in its open window, Ledger (group commit to the database) and FileLog
// (the embedded journal) once it is durable.
type Recorder interface {
	Record(ctx context.Context, ev Event) error
}

// Writer commits a batch of events in one transaction.
type Writer func(ctx context.Context, events []Event) error

// ErrClosed is returned by Record after Close.
var ErrClosed = errors.New("usage: ledger closed")

// WriteTimeout bounds one batch write: a request waits at most this long
// (plus the batch written before its own) for its row.
const WriteTimeout = 30 * time.Second

// Ledger batches ledger writes (group commit) without a writer goroutine.
// The request that finds no write in progress becomes the leader and writes
// its own row at once. Rows that arrive meanwhile join the next batch and
// their requests wait; when a write returns, its leader hands the next batch
// to one of the requests waiting in it, which writes the whole batch and
// wakes the others. So there is one write in flight at a time, a batch is
// everything that arrived during the previous write, and no row passes
// through another goroutine: the cost per request is an append under a
// mutex and, for followers, one park and wake-up.
type Ledger struct {
	write    Writer
	onCommit func(batch int, d time.Duration)

	mu      sync.Mutex
	idle    sync.Cond // signalled when writing becomes false
	writing bool      // a batch write is in flight (or handed to its next leader)
	next    *batch    // rows waiting for the write after the current one
	closed  bool
}

// batch is a group of rows written together.
type batch struct {
	events []Event
	lead   chan struct{} // one token: the receiving request writes the batch
	done   chan struct{} // closed after the write; err holds its outcome
	err    error
}

// NewLedger returns a ledger committing batches with w. onCommit, if not
// nil, observes each committed batch (size and latency) for metrics.
func NewLedger(w Writer, onCommit func(batch int, d time.Duration)) *Ledger {
	l := &Ledger{write: w, onCommit: onCommit}
	l.idle.L = &l.mu
	return l
}

// Record adds ev to the ledger and returns once it is committed (nil) or
// its batch failed. A row being written is never abandoned, so Record
// waits for the outcome even if ctx ends; WriteTimeout bounds the write.
func (l *Ledger) Record(_ context.Context, ev Event) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if !l.writing {
		l.writing = true
		l.mu.Unlock()
		one := [1]Event{ev}
		err := l.commit(one[:])
		l.handOff()
		return err
	}
	b := l.next
	if b == nil {
		b = &batch{lead: make(chan struct{}, 1), done: make(chan struct{})}
		l.next = b
	}
	b.events = append(b.events, ev)
	l.mu.Unlock()
	select {
	case <-b.done:
		return b.err
	case <-b.lead:
		// This request writes the batch for everyone in it; rows that
		// joined until now are in it, later ones start the next batch.
		l.mu.Lock()
		l.next = nil
		events := b.events
		l.mu.Unlock()
		b.err = l.commit(events)
		close(b.done)
		l.handOff()
		return b.err
	}
}

// handOff passes the writing on to the batch that filled up meanwhile, or
// ends it when nothing waits.
func (l *Ledger) handOff() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next != nil {
		l.next.lead <- struct{}{} // sent once: the batch stays next until taken
		return
	}
	l.writing = false
	l.idle.Broadcast()
}

func (l *Ledger) commit(events []Event) error {
	start := time.Now()
	// A batch must not be abandoned halfway because one caller gave up.
	ctx, cancel := context.WithTimeout(context.Background(), WriteTimeout)
	err := l.write(ctx, events)
	cancel()
	if l.onCommit != nil && err == nil {
		l.onCommit(len(events), time.Since(start))
	}
	return err
}

// Close stops accepting rows and returns when every accepted row is written.
func (l *Ledger) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for l.writing {
		l.idle.Wait()
	}
}
