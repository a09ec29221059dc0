package realtime

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/clock"
)

// DefaultMaxAge is how long a snapshot's predictions are used after its header timestamp.
const DefaultMaxAge = 5 * time.Minute

// Hub holds the latest good snapshot per feed id (and of its alerts
// source). Safe for concurrent use; readers take no lock.
type Hub struct {
	clock  clock.Clock
	maxAge time.Duration
	mu     sync.Mutex                            // serialises adding a feed
	feeds  atomic.Pointer[map[string]*feedState] // copied on write: a lookup takes no lock
}

type feedState struct {
	snap   atomic.Pointer[Snapshot]
	alerts atomic.Pointer[Snapshot] // from a separate alerts source; nil: none configured or none fetched yet
	mu     sync.Mutex
	st     Status
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
	h := &Hub{clock: c, maxAge: maxAge}
	h.feeds.Store(&map[string]*feedState{})
	return h
}

func (h *Hub) state(feedID string, create bool) *feedState {
	fs := (*h.feeds.Load())[feedID]
	if fs != nil || !create {
		return fs
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	old := *h.feeds.Load()
	if fs = old[feedID]; fs == nil {
		m := make(map[string]*feedState, len(old)+1)
		for k, v := range old {
			m[k] = v
		}
		fs = &feedState{}
		m[feedID] = fs
		h.feeds.Store(&m)
	}
	return fs
}

// Set replaces the feed's snapshot (FULL_DATASET semantics). A run the
// previous snapshot added (ADDED, NEW, DUPLICATED, REPLACEMENT) that s
// cancels without describing it again keeps its stops in s, marked
// CanceledLater, so boards show it cancelled rather than forget it.
func (h *Hub) Set(feedID string, s *Snapshot) {
	fs := h.state(feedID, true)
	if s != nil {
		s.carryCanceled(fs.snap.Load())
	}
	fs.snap.Store(s)
	h.succeeded(fs)
}

// succeeded records a good fetch of the feed: its failures are over.
func (h *Hub) succeeded(fs *feedState) {
	fs.mu.Lock()
	fs.st.LastSuccess, fs.st.LastError, fs.st.Failures = h.clock.Now(), "", 0
	fs.mu.Unlock()
}

// SetAlerts replaces the feed's alerts with those of s, fetched from a
// separate alerts source: from now on the feed's alerts come from there,
// not from its TripUpdates message.
func (h *Hub) SetAlerts(feedID string, s *Snapshot) {
	fs := h.state(feedID, true)
	fs.alerts.Store(s)
	h.succeeded(fs)
}

// Alerts returns the snapshot whose Alerts apply to the feed: the last
// one from its alerts source when it has one, else its TripUpdates
// snapshot (a message may carry both); nil when that is missing or older
// than MaxAge, so alerts expire like predictions.
func (h *Hub) Alerts(feedID string) *Snapshot {
	fs := h.state(feedID, false)
	if fs == nil {
		return nil
	}
	s := fs.alerts.Load()
	if s == nil {
		s = fs.snap.Load()
	}
	return h.fresh(s)
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
	return h.fresh(fs.snap.Load())
}

// fresh returns s, or nil when s is nil or older than MaxAge.
func (h *Hub) fresh(s *Snapshot) *Snapshot {
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
