// Package clocktest gives tests a clock they set and advance.
package clocktest

import (
	"sync"
	"time"
)

// Fixed is a settable clock (a clock.Clock); safe for concurrent use.
type Fixed struct {
	mu sync.Mutex
	t  time.Time
}

// NewFixed returns a clock standing at t.
func NewFixed(t time.Time) *Fixed { return &Fixed{t: t.UTC()} }

func (f *Fixed) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }

// Set moves the clock to t.
func (f *Fixed) Set(t time.Time) { f.mu.Lock(); f.t = t.UTC(); f.mu.Unlock() }

// Advance moves the clock forward by d.
func (f *Fixed) Advance(d time.Duration) { f.mu.Lock(); f.t = f.t.Add(d); f.mu.Unlock() }
