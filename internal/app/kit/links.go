package kit

import "sync"

// Links holds the public base URL of the links answers show (invoice
// downloads, receipt PDFs), without trailing slash. It is set once the
// listener is bound (a configured address with port 0 is only known then)
// and read by every answer that shows a link; the use cases that show
// links share one.
type Links struct {
	mu   sync.RWMutex
	base string
}

// NewLinks returns links under base.
func NewLinks(base string) *Links { return &Links{base: base} }

// Base is the base URL ("" for nil links).
func (l *Links) Base() string {
	if l == nil {
		return ""
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.base
}

// SetBase sets the base URL.
func (l *Links) SetBase(base string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.base = base
}
