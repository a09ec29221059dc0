package realtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/clock"
)

// MaxFeedBytes bounds one fetched GTFS-RT message.
const MaxFeedBytes = 64 << 20

// Poller fetches one feed's TripUpdates source into a Hub every Interval.
type Poller struct {
	FeedID   string
	Source   string // http:// or https:// URL, or a file path (file:// prefix optional)
	Interval time.Duration
	Hub      *Hub
	// Alerts: the source is the feed's service alerts (Hub.SetAlerts);
	// otherwise its TripUpdates (Hub.Set; alerts in the same message count too).
	Alerts bool
	Client *http.Client // nil: a client with a 20 s timeout
	Clock  clock.Clock  // nil: clock.System
	// Stored, when set, is called after each good snapshot is stored in the
	// Hub (transit resolves new alerts against its timetable there, not in
	// the first request that sees them).
	Stored func(feedID string)
	// After returns a channel that fires after d; nil means time.After.
	// Tests inject their own to drive polls deterministically.
	After func(d time.Duration) <-chan time.Time
}

// Run polls immediately and then every Interval until ctx ends; it returns
// ctx.Err(). Failures are recorded in the Hub, never returned.
func (p *Poller) Run(ctx context.Context) error {
	after := p.After
	if after == nil {
		after = time.After
	}
	iv := p.Interval
	if iv <= 0 {
		iv = 30 * time.Second
	}
	for {
		_ = p.PollOnce(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-after(iv):
		}
	}
}

// PollOnce fetches and parses the source once; on success the Hub gets the
// new snapshot, on failure the Hub keeps the old one and records the error,
// which is also returned.
func (p *Poller) PollOnce(ctx context.Context) error {
	c := p.Clock
	if c == nil {
		c = clock.System{}
	}
	data, err := p.fetch(ctx)
	if err == nil {
		var s *Snapshot
		if s, err = Parse(data, c.Now()); err == nil {
			if p.Alerts {
				p.Hub.SetAlerts(p.FeedID, s)
			} else {
				p.Hub.Set(p.FeedID, s)
			}
			if p.Stored != nil {
				p.Stored(p.FeedID)
			}
			return nil
		}
	}
	err = fmt.Errorf("realtime feed %s from %s: %w", p.FeedID, p.Source, err)
	p.Hub.Fail(p.FeedID, err)
	return err
}

func (p *Poller) fetch(ctx context.Context) ([]byte, error) {
	src := p.Source
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		f, err := os.Open(strings.TrimPrefix(src, "file://"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readLimited(f)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/x-protobuf, application/octet-stream")
	cl := p.Client
	if cl == nil {
		cl = &http.Client{Timeout: 20 * time.Second}
	}
	resp, err := cl.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	return readLimited(resp.Body)
}

func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFeedBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFeedBytes {
		return nil, errors.New("message larger than 64 MiB")
	}
	return data, nil
}
