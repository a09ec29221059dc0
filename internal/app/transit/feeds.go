// Package transit is the transit capability (docs/departures.md): the
// stored GTFS feeds (Feeds: import, list, remove) and one instance's
// departure index over them (Service: boards, trips, stations, map tiles,
// the realtime overlay). It reaches the database only through Queries.
package transit

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/departure"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/realtime"
)

// DefaultRealtimeInterval is how often a GTFS-RT source is polled when the
// import or the configuration names none.
const DefaultRealtimeInterval = 30 * time.Second

// Queries are the store methods the transit capability uses
// (store.Q implements them; the wiring passes store.NewView[Queries]).
type Queries interface {
	GTFSFeeds(ctx context.Context) ([]gtfs.FeedRecord, error)
	GTFSSnapshot(ctx context.Context, id string, version int64) ([]byte, error)
	ReplaceGTFSFeed(ctx context.Context, f gtfs.FeedRecord, snapshot []byte) (gtfs.FeedRecord, error)
	RemoveGTFSFeed(ctx context.Context, id string) (bool, error)
}

// DB is the database as the transit capability sees it (store.View).
type DB = kit.DB[Queries]

// Feeds are the stored GTFS feeds: what `farebox gtfs` and the operator
// console manage and what every instance's Service serves.
type Feeds struct {
	kit.Base[DB]
}

// NewFeeds returns the feeds of db; ids prefixes the ids the index makes
// (station and trip ids), c is the service clock (nil: the system clock).
func NewFeeds(db DB, c clock.Clock, ids ident.Prefix) *Feeds {
	return &Feeds{Base: kit.NewBase(db, c, ids)}
}

// Import is one feed to store: the parsed feed under its feed id, the
// zip's name and the optional GTFS-Realtime TripUpdates source.
type Import struct {
	FeedID           string
	SourceName       string
	Feed             *gtfs.Feed
	RealtimeSource   string        // http(s) URL, file:// URL or file path; "" = none
	RealtimeInterval time.Duration // 0 = DefaultRealtimeInterval
}

// ValidRealtimeSource checks a GTFS-RT source setting: an http(s) URL or a
// file (path or file:// URL).
func ValidRealtimeSource(src string) bool {
	if src == "" || strings.ContainsAny(src, "\n\r\x00") {
		return false
	}
	if i := strings.Index(src, "://"); i >= 0 {
		scheme := strings.ToLower(src[:i])
		return (scheme == "http" || scheme == "https" || scheme == "file") && len(src) > i+3
	}
	return true
}

// Import encodes the feed's snapshot and stores it, replacing a stored
// feed with the same id in one transaction. Every serving instance notices
// the new version on its next refresh.
func (f *Feeds) Import(ctx context.Context, in Import) (gtfs.FeedRecord, error) {
	const op = "app.ImportGTFS"
	if !departure.ValidFeedID(in.FeedID) {
		return gtfs.FeedRecord{}, apperr.Param(op, "feed_id", "a feed id is 1 to 64 letters, digits or hyphens")
	}
	if in.Feed == nil {
		return gtfs.FeedRecord{}, apperr.Param(op, "feed", "no feed to import")
	}
	if in.RealtimeSource != "" && !ValidRealtimeSource(in.RealtimeSource) {
		return gtfs.FeedRecord{}, apperr.Param(op, "realtime_source", "the realtime source must be an http(s) URL or a file")
	}
	if in.RealtimeInterval < 0 || (in.RealtimeInterval > 0 && in.RealtimeInterval < time.Second) {
		return gtfs.FeedRecord{}, apperr.Param(op, "realtime_interval", "the realtime interval must be at least 1s")
	}
	if in.RealtimeSource != "" && in.RealtimeInterval == 0 {
		in.RealtimeInterval = DefaultRealtimeInterval
	}
	var buf bytes.Buffer
	if err := in.Feed.Encode(&buf); err != nil {
		return gtfs.FeedRecord{}, apperr.Wrap(op, err)
	}
	feed := in.Feed
	rec := gtfs.FeedRecord{ID: in.FeedID, UpdatedAt: f.Clock.Now(), SourceName: in.SourceName, FeedVersion: feed.Version,
		Stops: len(feed.Stops.ID), Trips: len(feed.Trips.ID), StopTimes: int64(len(feed.StopTimes.Stop)), Problems: feed.ProblemCount,
		RealtimeSource: in.RealtimeSource, RealtimeInterval: in.RealtimeInterval}
	err := f.DB.Write(ctx, func(q Queries) (err error) {
		rec, err = q.ReplaceGTFSFeed(ctx, rec, buf.Bytes())
		return err
	})
	return rec, err
}

// List lists the stored feeds.
func (f *Feeds) List(ctx context.Context) ([]gtfs.FeedRecord, error) {
	return f.DB.Read().GTFSFeeds(ctx)
}

// Remove deletes a stored feed; an unknown id is apperr.NotFound.
func (f *Feeds) Remove(ctx context.Context, id string) error {
	var ok bool
	err := f.DB.Write(ctx, func(q Queries) (err error) {
		ok, err = q.RemoveGTFSFeed(ctx, id)
		return err
	})
	if err == nil && !ok {
		return apperr.NotFoundf("app.RemoveGTFS", CodeFeedNotFound)
	}
	return err
}

// AdminFeed is a GTFS feed with its realtime poller's status.
type AdminFeed struct {
	ID, SourceName, FeedVersion string
	Version                     int64 // unique over all imports
	UpdatedAt                   time.Time
	Stops, Trips                int
	RealtimeSource              string // "" without realtime
	Realtime                    *AdminRealtime
}

// AdminRealtime is the state of a feed's realtime poller on the console.
type AdminRealtime struct {
	LastSuccess time.Time // zero if never
	LastError   string    // "" after a success
	Stale       bool      // the kept snapshot is too old (or there is none)
}

// Admin lists the stored feeds and, from the running index, the status of
// their realtime pollers (t may be nil: no realtime), for the console.
func (f *Feeds) Admin(ctx context.Context, t *Service) ([]AdminFeed, error) {
	feeds, err := f.List(ctx)
	if err != nil {
		return nil, err
	}
	var st map[string]realtime.Status
	if t != nil {
		st = t.RealtimeStatus()
	}
	out := make([]AdminFeed, 0, len(feeds))
	for _, rec := range feeds {
		x := AdminFeed{ID: rec.ID, SourceName: rec.SourceName, FeedVersion: rec.FeedVersion, Version: rec.Version,
			UpdatedAt: rec.UpdatedAt, Stops: rec.Stops, Trips: rec.Trips, RealtimeSource: rec.RealtimeSource}
		if s, ok := st[rec.ID]; ok {
			x.Realtime = &AdminRealtime{LastSuccess: s.LastSuccess, LastError: s.LastError, Stale: s.Stale}
		}
		out = append(out, x)
	}
	return out, nil
}
