package httpapi

import (
	"bytes"
	"compress/gzip"
	"sync"
)

// Compressed boards (docs/departures.md, "Compressed boards"). Every client
// polling a station in the same minute gets the same board, and an alert
// on a whole line is written into every entry of it (the board is a bare
// array: the clients decode a list), so a board with alerts is several
// times as long as one without. Compressing each response would cost more
// than sending it; compressing each distinct board once and sending the
// stored bytes to every client that accepts gzip (every shipped client
// does: OkHttp, URLSession, axios and browsers ask for it) costs a map
// lookup, and the repeated alerts all but vanish from the wire.
//
// The key names the bytes (transit.BoardID: a board cache entry never changes
// once built, and a cut of it is the same bytes whenever it is asked for),
// so a hit neither encodes nor reads the board, and there is nothing to
// invalidate. A board is compressed the second time its key is asked for
// (one-off boards are never compressed, only their key is remembered),
// outside the lock; two requests compressing the same board at once store
// the same bytes. Memory is bounded by limit: when a new copy does not
// fit, everything is dropped and the cache fills again from the next
// seconds' traffic (the boards of a minute are over after it anyway).
type gzipCache[K comparable] struct {
	limit int64

	mu   sync.RWMutex
	m    map[K][]byte   // key → its body gzip-compressed
	seen map[K]struct{} // keys asked for once
	size int64          // bytes of m's values (and a key's share)
}

// DefaultGzipCacheBytes is the cache's size when Deps leave it 0.
const DefaultGzipCacheBytes = 8 << 20

// gzipSeenMax bounds the keys asked for once.
const gzipSeenMax = 1 << 16

// gzipEntryBytes is accounted per stored copy beyond its bytes (the key
// and the map's share).
const gzipEntryBytes = 64

func newGzipCache[K comparable](limit int64) *gzipCache[K] {
	if limit < 0 {
		return nil
	}
	if limit == 0 {
		limit = DefaultGzipCacheBytes
	}
	return &gzipCache[K]{limit: limit, m: map[K][]byte{}, seen: map[K]struct{}{}}
}

// get returns the stored compression of k's body, nil when there is none
// (or the cache is nil).
func (c *gzipCache[K]) get(k K) []byte {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	gz := c.m[k]
	c.mu.RUnlock()
	return gz
}

// offer is called with k's body after a get that returned nil: the second
// time k is offered, body is compressed, stored and returned; otherwise
// offer returns nil (send body as it is).
func (c *gzipCache[K]) offer(k K, body []byte) []byte {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	_, again := c.seen[k]
	if !again {
		if len(c.seen) >= gzipSeenMax {
			clear(c.seen)
		}
		c.seen[k] = struct{}{}
	}
	c.mu.Unlock()
	if !again {
		return nil
	}
	gz := gzipBytes(body)
	n := int64(len(gz) + gzipEntryBytes)
	if n > c.limit {
		return gz
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok {
		if c.size+n > c.limit {
			clear(c.m)
			c.size = 0
		}
		c.m[k] = gz
		c.size += n
		delete(c.seen, k)
	}
	return gz
}

// gzipWriters recycles compressors: a gzip.Writer holds several hundred
// KB of state at the default level.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// gzipBytes compresses b at gzip's default level (the work is done once
// per distinct board, so the smaller output is worth it).
func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(b)/4 + 64)
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&out)
	_, _ = zw.Write(b)
	_ = zw.Close()
	zw.Reset(nil)
	gzipWriters.Put(zw)
	return bytes.Clone(out.Bytes())
}
