package pdf

// The renderer's queue (issue 33 §4). boxesandglue keeps process-wide
// state, so the process renders one PDF at a time (renderMu). Without a
// bound, a burst of downloads would pile up behind that one critical
// section, each holding a request and its memory, and answer late or not
// at all. So a render first takes a place in the queue: one renders, at
// most Limits.Queue wait; a render that finds the queue full, or whose
// turn has not come by Limits.Deadline, is refused with renderer_busy
// (503 with Retry-After at the API) instead of waiting without end.

import (
	"sync"
	"time"

	"github.com/farebox/farebox/internal/apperr"
)

// Limits bound the renders waiting for the process's renderer.
type Limits struct {
	// Queue is how many renders may wait while one is rendered (0: none
	// waits; a render that finds the renderer busy is refused at once).
	Queue int
	// Deadline is how long a render may wait for its turn. The render
	// itself is not interrupted (the library cannot be): the input limits
	// bound it (the largest allowed invoice renders in about 160 ms).
	Deadline time.Duration
}

// DefaultLimits are the limits until SetLimits is called: 64 waiting, at
// 7 ms of CPU per ordinary invoice about half a second of work, and 10 s
// to wait.
var DefaultLimits = Limits{Queue: 64, Deadline: 10 * time.Second}

// queue admits renders to the renderer: admitted counts the renders
// admitted (the one rendering and those waiting), turn holds a token for
// the render running.
type queue struct {
	mu       sync.Mutex
	limits   Limits
	admitted int
	turn     chan struct{}
}

var renderQueue = &queue{limits: DefaultLimits, turn: make(chan struct{}, 1)}

// SetLimits sets the renderer's queue limits for the process (config
// --pdf-queue, --pdf-deadline). Renders already admitted keep their place.
func SetLimits(l Limits) {
	renderQueue.mu.Lock()
	defer renderQueue.mu.Unlock()
	renderQueue.limits = l
}

// Exclusive runs f as the process's one render at a time, after waiting
// its turn in the bounded queue; it returns renderer_busy (Unavailable)
// without running f when the queue is full or the deadline passes first.
// Render and RenderLetter run through it.
func Exclusive(f func() error) error {
	q := renderQueue
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
	case q.turn <- struct{}{}:
	default:
		t := time.NewTimer(l.Deadline)
		select {
		case q.turn <- struct{}{}:
			t.Stop()
		case <-t.C:
			return busy("the document was not rendered in time; retry later")
		}
	}
	defer func() { <-q.turn }()
	renderMu.Lock()
	defer renderMu.Unlock()
	return f()
}

// QueueLength is how many renders are admitted now (the one rendering and
// those waiting), for the metrics.
func QueueLength() int {
	renderQueue.mu.Lock()
	defer renderQueue.mu.Unlock()
	return renderQueue.admitted
}

func busy(msg string) error {
	return apperr.E("pdf.Render", apperr.Unavailable, CodeRendererBusy, msg)
}
