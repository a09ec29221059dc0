package httpapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sync"
	"testing"
)

// gunzip inflates b (nil when it is not gzip).
func gunzip(b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil
	}
	return out
}

// body is a board-like body for key k: long and repetitive, as a board
// whose entries repeat the same alerts.
func body(k int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf(`{"trip":%d,"alerts":[{"header":"Weather delays on the whole line"}]},`, k)), 200)
}

// TestGzipCache: a key is compressed the second time it is offered, kept
// (get returns the same bytes) and inflates to its body; a nil cache
// (--gzip-cache-mb 0) never compresses; the byte limit holds (the cache
// is emptied when a copy does not fit); the keys seen once are bounded.
func TestGzipCache(t *testing.T) {
	t.Parallel()
	var off *gzipCache[int]
	if off.get(1) != nil || off.offer(1, body(1)) != nil || off.offer(1, body(1)) != nil {
		t.Fatal("a nil cache compressed")
	}
	c := newGzipCache[int](0)
	if c.limit != DefaultGzipCacheBytes {
		t.Fatalf("limit %d", c.limit)
	}
	if c.get(1) != nil || c.offer(1, body(1)) != nil {
		t.Fatal("compressed at the first offer")
	}
	gz := c.offer(1, body(1))
	if gz == nil || !bytes.Equal(gunzip(gz), body(1)) || len(gz) >= len(body(1))/10 {
		t.Fatalf("second offer: %d bytes of %d", len(gz), len(body(1)))
	}
	if got := c.get(1); !bytes.Equal(got, gz) {
		t.Fatal("get does not return the stored copy")
	}
	if c.bytes() != int64(len(gz)+gzipEntryBytes) {
		t.Fatalf("accounted %d", c.bytes())
	}

	// The limit: room for about three copies; the fourth empties the cache.
	small := newGzipCache[int](int64(3*(len(gz)+gzipEntryBytes) + 10))
	for k := 1; k <= 4; k++ {
		small.offer(k, body(k))
		if small.offer(k, body(k)) == nil {
			t.Fatalf("key %d not compressed", k)
		}
		if small.bytes() > small.limit {
			t.Fatalf("%d bytes over the limit %d", small.bytes(), small.limit)
		}
	}
	if small.get(1) != nil || small.get(4) == nil {
		t.Fatal("the full cache was not emptied for the new copy")
	}
	// A copy larger than the whole cache is sent, not stored.
	tiny := newGzipCache[int](8)
	tiny.offer(1, body(1))
	if gz := tiny.offer(1, body(1)); gz == nil || tiny.bytes() != 0 {
		t.Fatalf("oversize copy: %d bytes returned, %d stored", len(gz), tiny.bytes())
	}

	// Ten thousand distinct boards, each asked for twice, through a cache
	// with room for about forty: it never holds more than its limit, and
	// the last copies are there.
	flood := newGzipCache[int](40 * int64(len(gz)+gzipEntryBytes))
	for k := 0; k < 10000; k++ {
		flood.offer(k, body(k))
		if flood.offer(k, body(k)) == nil {
			t.Fatalf("board %d not compressed", k)
		}
		if flood.bytes() > flood.limit {
			t.Fatalf("board %d: %d bytes held, limit %d", k, flood.bytes(), flood.limit)
		}
	}
	if got := flood.get(9999); !bytes.Equal(gunzip(got), body(9999)) {
		t.Fatal("the newest board is not stored")
	}

	// Keys seen once are bounded: a flood of one-off keys never grows it
	// past gzipSeenMax.
	for k := 0; k < 3*gzipSeenMax; k++ {
		c.offer(1000+k, nil)
	}
	if len(c.seen) > gzipSeenMax {
		t.Fatalf("%d keys remembered", len(c.seen))
	}
}

// TestGzipCacheConcurrent: many goroutines offering and getting the same
// and different keys (run with -race) always get a compression of the
// right body.
func TestGzipCacheConcurrent(t *testing.T) {
	t.Parallel()
	c := newGzipCache[int](64 << 10) // small: it empties itself now and then
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 400; i++ {
				k := (i*7 + g) % 23
				gz := c.get(k)
				if gz == nil {
					gz = c.offer(k, body(k))
				}
				if gz != nil && !bytes.Equal(gunzip(gz), body(k)) {
					t.Errorf("key %d: wrong body", k)
					return
				}
			}
		}()
	}
	wg.Wait()
	if c.bytes() > c.limit {
		t.Fatalf("%d bytes over %d", c.bytes(), c.limit)
	}
}

// BenchmarkGzipBoard: compressing a board-like body once (what a miss
// costs) against finding its stored copy (what every later request
// costs): go test ./internal/httpapi -run '^$' -bench GzipBoard
func BenchmarkGzipBoard(b *testing.B) {
	raw := body(1) // 14 KB, as a 10-entry board with alerts
	b.Run("compress", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			gzipBytes(raw)
		}
	})
	b.Run("stored", func(b *testing.B) {
		c := newGzipCache[int](0)
		c.offer(1, raw)
		c.offer(1, raw)
		for b.Loop() {
			if c.get(1) == nil {
				b.Fatal("not stored")
			}
		}
	})
}

// bytes is what the cache holds now (tests).
func (c *gzipCache[K]) bytes() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.size
}
