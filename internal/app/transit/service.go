package transit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/departure"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/realtime"
)

// Options configure Feeds.Serve.
type Options struct {
	// Refresh is how often Run polls the stored feed versions (default 10 s).
	Refresh time.Duration
	// Realtime overrides the stored GTFS-RT source per feed id (from the
	// configuration); "" switches a stored source off.
	Realtime map[string]string
	// RealtimeAlerts are GTFS-RT service alerts sources per feed id (from
	// the configuration), polled every RealtimeInterval; a feed without
	// one shows the alerts of its TripUpdates message.
	RealtimeAlerts map[string]string
	// RealtimeInterval is the poll interval of configured sources (default 30 s).
	RealtimeInterval time.Duration
	// RealtimeMaxAge expires predictions older than this (default 5 min).
	RealtimeMaxAge time.Duration
	// BoardCacheBytes caps each index's board cache
	// (departure.Options.BoardCacheBytes: 0 the default, negative off).
	BoardCacheBytes int64
	// HTTPClient fetches realtime URLs (nil: a client with a 20 s timeout).
	HTTPClient *http.Client
	Log        *slog.Logger
}

// Service is one instance's view of the stored GTFS feeds: a departure
// index rebuilt and swapped atomically whenever a stored feed version
// changes, and the realtime pollers feeding its overlay.
type Service struct {
	feeds *Feeds
	o     Options
	hub   *realtime.Hub
	cur   atomic.Pointer[transitState]

	mu      sync.Mutex // serialises Refresh and the pollers
	base    context.Context
	pollers map[string]*pollerRun
	loadErr atomic.Pointer[string]
}

type transitState struct {
	ix    *departure.Index
	feeds map[string]loadedFeed
	// seen is every stored (id, version) this state accounts for: the
	// loaded feeds and those whose snapshot could not be decoded (kept at
	// their previous version, or left out), so a corrupt snapshot is not
	// re-read on every refresh.
	seen map[string]int64
}

type loadedFeed struct {
	rec  gtfs.FeedRecord
	feed *gtfs.Feed
}

// alertsPoller prefixes the poller key of a feed's alerts source (feed ids
// never contain a colon).
const alertsPoller = "alerts:"

type pollerRun struct {
	source   string
	interval time.Duration
	alerts   bool
	cancel   context.CancelFunc
	done     chan struct{}
}

// Serve returns a Service over the stored feeds with nothing loaded;
// call Refresh (or Run).
func (f *Feeds) Serve(o Options) *Service {
	if o.Refresh <= 0 {
		o.Refresh = 10 * time.Second
	}
	if o.RealtimeInterval <= 0 {
		o.RealtimeInterval = DefaultRealtimeInterval
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{feeds: f, o: o, hub: realtime.NewHub(f.Clock, o.RealtimeMaxAge),
		base: context.Background(), pollers: map[string]*pollerRun{}}
}

// Index returns the current departure index; before the first load it is
// apperr.Unavailable (the instance is still reading the feeds).
func (t *Service) Index() (*departure.Index, error) {
	if st := t.cur.Load(); st != nil {
		return st.ix, nil
	}
	return nil, apperr.E("transit", apperr.Unavailable, CodeTransitLoading, "timetables are still loading; retry shortly")
}

// Ready is nil once the feeds have been loaded (for /readyz).
func (t *Service) Ready(context.Context) error {
	if t.cur.Load() != nil {
		return nil
	}
	if msg := t.loadErr.Load(); msg != nil {
		return errors.New("transit data not loaded: " + *msg)
	}
	return errors.New("transit data still loading")
}

// Hub is the realtime overlay of this instance.
func (t *Service) Hub() *realtime.Hub { return t.hub }

// Feeds lists the feeds the current index serves.
func (t *Service) Feeds() []gtfs.FeedRecord {
	st := t.cur.Load()
	if st == nil {
		return nil
	}
	out := make([]gtfs.FeedRecord, 0, len(st.feeds))
	for _, f := range st.feeds {
		out = append(out, f.rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Refresh compares the stored feed versions with the loaded ones and, when
// any differ, decodes the changed feeds, builds a new index over all of
// them and swaps it in. Queries keep using the old index until the swap.
// It also starts, restarts or stops realtime pollers to match the feeds.
func (t *Service) Refresh(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	recs, err := t.feeds.DB.Read().GTFSFeeds(ctx)
	if err != nil {
		return err
	}
	old := t.cur.Load()
	if old != nil && sameVersions(old.seen, recs) {
		t.syncPollers(recs)
		return nil
	}
	feeds := make(map[string]loadedFeed, len(recs))
	seen := make(map[string]int64, len(recs))
	in := make([]departure.FeedInput, 0, len(recs))
	var bad []error
	for _, rec := range recs {
		seen[rec.ID] = rec.Version
		prev, had := loadedFeed{}, false
		if old != nil {
			prev, had = old.feeds[rec.ID]
		}
		lf := prev
		if !had || prev.rec.Version != rec.Version {
			if old != nil && old.seen[rec.ID] == rec.Version {
				// Rejected before: keep serving the previous version, if any.
				if had {
					feeds[rec.ID] = prev
					in = append(in, departure.FeedInput{ID: rec.ID, Feed: prev.feed})
				}
				continue
			}
			f, n, err := t.decode(ctx, rec)
			if err != nil {
				if k := apperr.KindOf(err); k != apperr.Internal && k != apperr.Invalid {
					return err // the database or a concurrent import: retry on the next refresh
				}
				t.o.Log.Error("gtfs feed not loaded: snapshot unreadable", "feed_id", rec.ID, "version", rec.Version, "error", err.Error())
				bad = append(bad, fmt.Errorf("feed %s version %d: %w", rec.ID, rec.Version, err))
				if had {
					feeds[rec.ID] = prev
					in = append(in, departure.FeedInput{ID: rec.ID, Feed: prev.feed})
				}
				continue
			}
			t.o.Log.Info("gtfs feed loaded", "feed_id", rec.ID, "version", rec.Version, "bytes", n, "stop_times", rec.StopTimes)
			lf = loadedFeed{feed: f}
		}
		lf.rec = rec
		feeds[rec.ID] = lf
		in = append(in, departure.FeedInput{ID: rec.ID, Feed: lf.feed})
	}
	ix, err := departure.New(in, departure.Options{Prefix: string(t.feeds.IDs), Realtime: t.hub, BoardCacheBytes: t.o.BoardCacheBytes})
	if err != nil {
		return apperr.Wrap("transit.Refresh", err)
	}
	t.cur.Store(&transitState{ix: ix, feeds: feeds, seen: seen})
	t.syncPollers(recs)
	return errors.Join(bad...)
}

// decode reads and decodes one stored snapshot.
func (t *Service) decode(ctx context.Context, rec gtfs.FeedRecord) (*gtfs.Feed, int, error) {
	blob, err := t.feeds.DB.Read().GTFSSnapshot(ctx, rec.ID, rec.Version)
	if err != nil {
		return nil, 0, err
	}
	f, err := gtfs.Decode(bytes.NewReader(blob))
	if err != nil {
		return nil, 0, err
	}
	return f, len(blob), nil
}

func sameVersions(seen map[string]int64, recs []gtfs.FeedRecord) bool {
	if len(seen) != len(recs) {
		return false
	}
	for _, r := range recs {
		if v, ok := seen[r.ID]; !ok || v != r.Version {
			return false
		}
	}
	return true
}

// Run loads the feeds (retrying until it succeeds), then refreshes every
// Refresh interval until ctx ends; it stops the realtime pollers on return.
func (t *Service) Run(ctx context.Context) {
	t.mu.Lock()
	t.base = ctx
	t.mu.Unlock()
	defer t.Close()
	tick := time.NewTicker(t.o.Refresh)
	defer tick.Stop()
	for {
		start := time.Now()
		if err := t.Refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			msg := err.Error()
			t.loadErr.Store(&msg)
			t.o.Log.Warn("gtfs refresh failed", "error", msg)
		} else if d := time.Since(start); d > time.Second {
			t.o.Log.Info("gtfs index ready", "feeds", len(t.Feeds()), "duration", d)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Close stops every realtime poller and waits for them.
func (t *Service) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, p := range t.pollers {
		p.cancel()
		<-p.done
		delete(t.pollers, id)
	}
}

// syncPollers makes the running pollers match the feeds' sources: a
// configured source wins over the one stored at import. Called with t.mu held.
func (t *Service) syncPollers(recs []gtfs.FeedRecord) {
	want := map[string]pollerRun{}
	for _, r := range recs {
		if src := t.o.RealtimeAlerts[r.ID]; src != "" {
			want[alertsPoller+r.ID] = pollerRun{source: src, interval: t.o.RealtimeInterval, alerts: true}
		}
		src, interval := r.RealtimeSource, r.RealtimeInterval
		if o, ok := t.o.Realtime[r.ID]; ok {
			src, interval = o, t.o.RealtimeInterval
		}
		if interval <= 0 {
			interval = DefaultRealtimeInterval
		}
		if src != "" {
			want[r.ID] = pollerRun{source: src, interval: interval}
		}
	}
	for id, p := range t.pollers {
		if w, ok := want[id]; !ok || w.source != p.source || w.interval != p.interval {
			p.cancel()
			<-p.done
			delete(t.pollers, id)
		}
	}
	for id, w := range want {
		if _, ok := t.pollers[id]; ok {
			continue
		}
		ctx, cancel := context.WithCancel(t.base)
		p := &pollerRun{source: w.source, interval: w.interval, alerts: w.alerts, cancel: cancel, done: make(chan struct{})}
		t.pollers[id] = p
		rp := &realtime.Poller{FeedID: strings.TrimPrefix(id, alertsPoller), Source: w.source, Interval: w.interval, Hub: t.hub,
			Alerts: w.alerts, Client: t.o.HTTPClient, Clock: t.feeds.Clock, Stored: t.prepareAlerts}
		go func() {
			defer close(p.done)
			_ = rp.Run(ctx)
		}()
		t.o.Log.Info("realtime source polled", "feed_id", rp.FeedID, "alerts", w.alerts, "source", w.source, "interval", w.interval)
	}
}

// prepareAlerts resolves a feed's newly polled alerts against the current
// index in the poller's goroutine, so no board request pays for it.
func (t *Service) prepareAlerts(feedID string) {
	if st := t.cur.Load(); st != nil {
		st.ix.PrepareAlerts(feedID)
	}
}

// RealtimeStatus reports each polled feed's realtime source state.
func (t *Service) RealtimeStatus() map[string]realtime.Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]realtime.Status{}
	for id := range t.pollers {
		if strings.HasPrefix(id, alertsPoller) {
			continue // shares the feed's status
		}
		out[id] = t.hub.Status(id)
	}
	return out
}
