package realtime

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/clock"
)

// DefaultMaxAge is how long a snapshot's predictions are used after its header timestamp.
const DefaultMaxAge = 5 * time.Minute

// Hub holds the latest good snapshot per feed id. Safe for concurrent use;
// readers never block writers for longer than a map lookup.
type Hub struct {
	clock  clock.Clock
	maxAge time.Duration
	mu     sync.RWMutex
	feeds  map[string]*feedState
}

type feedState struct {
	snap atomic.Pointer[Snapshot]
	mu   sync.Mutex
	st   Status
}

// Status describes a feed's realtime source for health endpoints and logs.
type Status struct {
	LastSuccess time.Time // when the last good snapshot arrived (zero if never)
	LastError   string    // the last failure ("" after a success)
	LastErrorAt time.Time
	Failures    int // consecutive failures
	HeaderTime  time.Time
	TripUpdates int
	Stale       bool // the kept snapshot is older than MaxAge (or there is none)
}

// NewHub returns a hub judging staleness by c; maxAge <= 0 means DefaultMaxAge.
func NewHub(c clock.Clock, maxAge time.Duration) *Hub {
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	return &Hub{clock: c, maxAge: maxAge, feeds: map[string]*feedState{}}
}

func (h *Hub) state(feedID string, create bool) *feedState {
	h.mu.RLock()
	fs := h.feeds[feedID]
	h.mu.RUnlock()
	if fs != nil || !create {
		return fs
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if fs = h.feeds[feedID]; fs == nil {
		fs = &feedState{}
		h.feeds[feedID] = fs
	}
	return fs
}

// Set replaces the feed's snapshot (FULL_DATASET semantics).
func (h *Hub) Set(feedID string, s *Snapshot) {
	fs := h.state(feedID, true)
	fs.snap.Store(s)
	fs.mu.Lock()
	fs.st.LastSuccess, fs.st.LastError, fs.st.Failures = h.clock.Now(), "", 0
	fs.mu.Unlock()
}

// Fail records a failed fetch; the last good snapshot stays in use until it expires.
func (h *Hub) Fail(feedID string, err error) {
	fs := h.state(feedID, true)
	fs.mu.Lock()
	fs.st.LastError, fs.st.LastErrorAt = err.Error(), h.clock.Now()
	fs.st.Failures++
	fs.mu.Unlock()
}

// TripUpdates returns the feed's current snapshot, or nil when there is
// none or it is older than MaxAge.
func (h *Hub) TripUpdates(feedID string) *Snapshot {
	fs := h.state(feedID, false)
	if fs == nil {
		return nil
	}
	s := fs.snap.Load()
	if s == nil || h.stale(s) {
		return nil
	}
	return s
}

func (h *Hub) stale(s *Snapshot) bool {
	return h.clock.Now().Sub(s.Timestamp) > h.maxAge
}

// Status reports the state of the feed's source.
func (h *Hub) Status(feedID string) Status {
	fs := h.state(feedID, false)
	if fs == nil {
		return Status{Stale: true}
	}
	fs.mu.Lock()
	st := fs.st
	fs.mu.Unlock()
	if s := fs.snap.Load(); s != nil {
		st.HeaderTime, st.TripUpdates, st.Stale = s.Timestamp, s.Updates, h.stale(s)
	} else {
		st.Stale = true
	}
	return st
}
