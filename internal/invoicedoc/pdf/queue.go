package pdf

// The renderer's queue (issue 33 §4). boxesandglue keeps process-wide
// state, so the process renders one PDF at a time (renderMu). Without a
// bound, a burst of downloads would pile up behind that one critical
// section, each holding a request and its memory, and answer late or not
// at all. So a render first takes a place in its server's Queue: one
// renders, at most Limits.Queue wait; a render that finds the queue full,
// or whose turn has not come by Limits.Deadline, is refused with
// renderer_busy (503 with Retry-After at the API) instead of waiting
// without end.
//
// The limits and the count belong to a Queue, which serve builds once from
// --pdf-queue and --pdf-deadline and hands to the use cases that render
// (invoices, books); nothing about them is process-wide, so servers built
// side by side in one test process (apitest) each keep their own limits
// and count. The turn at the renderer is the process's: it is one library.

import (
	"sync"
	"time"

	"github.com/farebox/farebox/internal/apperr"
)

// Limits bound the renders waiting for the renderer.
type Limits struct {
	// Queue is how many renders may wait while one is rendered (0: none
	// waits; a render that finds the renderer busy is refused at once).
	Queue int
	// Deadline is how long a render may wait for its turn. The render
	// itself is not interrupted (the library cannot be): the input limits
	// bound it (the largest allowed invoice renders in about 160 ms).
	Deadline time.Duration
}

// DefaultLimits are the limits of a nil Queue and of the package's Render
// and RenderLetter: 64 waiting, at 7 ms of CPU per ordinary
// invoice about half a second of work, and 10 s to wait.
var DefaultLimits = Limits{Queue: 64, Deadline: 10 * time.Second}

// Queue admits renders to the renderer under its Limits: admitted counts
// the renders it admitted (the one rendering, if it is one of them, and
// those waiting). A nil *Queue is the process's queue of DefaultLimits.
type Queue struct {
	mu       sync.Mutex
	limits   Limits
	admitted int
}

// NewQueue returns a queue with limits l (config --pdf-queue,
// --pdf-deadline).
func NewQueue(l Limits) *Queue { return &Queue{limits: l} }

// defaultQueue is the queue of a nil *Queue.
var defaultQueue = NewQueue(DefaultLimits)

// turn holds a token for the render running in the process.
var turn = make(chan struct{}, 1)

func (q *Queue) or() *Queue {
	if q == nil {
		return defaultQueue
	}
	return q
}

// Exclusive runs f as the process's one render at a time, after waiting
// its turn in the bounded queue; it returns renderer_busy (Unavailable)
// without running f when the queue is full or the deadline passes first.
// Render and RenderLetter run through it.
func (q *Queue) Exclusive(f func() error) error {
	q = q.or()
	q.mu.Lock()
	l := q.limits
	if q.admitted > l.Queue { // one rendering and l.Queue waiting
		q.mu.Unlock()
		return busy("too many documents are waiting to be rendered; retry later")
	}
	q.admitted++
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.admitted--
		q.mu.Unlock()
	}()
	select {
	case turn <- struct{}{}:
	default:
		t := time.NewTimer(l.Deadline)
		select {
		case turn <- struct{}{}:
			t.Stop()
		case <-t.C:
			return busy("the document was not rendered in time; retry later")
		}
	}
	defer func() { <-turn }()
	renderMu.Lock()
	defer renderMu.Unlock()
	return f()
}

// Length is how many renders q admitted now (the one rendering and those
// waiting), for the metrics.
func (q *Queue) Length() int {
	q = q.or()
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.admitted
}

func busy(msg string) error {
	return apperr.E("pdf.Render", apperr.Unavailable, CodeRendererBusy, msg)
}
