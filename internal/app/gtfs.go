package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/departure"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/store"
)

// DefaultRealtimeInterval is how often a GTFS-RT source is polled when the
// import or the configuration names none.
const DefaultRealtimeInterval = 30 * time.Second

// GTFSImport is one feed to store: the parsed feed under its feed id, the
// zip's name and the optional GTFS-Realtime TripUpdates source.
type GTFSImport struct {
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

// ImportGTFS encodes the feed's snapshot and stores it, replacing a stored
// feed with the same id in one transaction. Every serving instance notices
// the new version on its next refresh.
func (a *App) ImportGTFS(ctx context.Context, in GTFSImport) (gtfs.FeedRecord, error) {
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
	f := in.Feed
	rec := gtfs.FeedRecord{ID: in.FeedID, UpdatedAt: a.clock.Now(), SourceName: in.SourceName, FeedVersion: f.Version,
		Stops: len(f.Stops.ID), Trips: len(f.Trips.ID), StopTimes: int64(len(f.StopTimes.Stop)), Problems: f.ProblemCount,
		RealtimeSource: in.RealtimeSource, RealtimeInterval: in.RealtimeInterval}
	err := a.store.Write(ctx, func(q store.Q) (err error) {
		rec, err = q.ReplaceGTFSFeed(ctx, rec, buf.Bytes())
		return err
	})
	return rec, err
}

// GTFSFeeds lists the stored feeds.
func (a *App) GTFSFeeds(ctx context.Context) ([]gtfs.FeedRecord, error) {
	return a.store.Read().GTFSFeeds(ctx)
}

// RemoveGTFS deletes a stored feed; an unknown id is apperr.NotFound.
func (a *App) RemoveGTFS(ctx context.Context, id string) error {
	var ok bool
	err := a.store.Write(ctx, func(q store.Q) (err error) {
		ok, err = q.RemoveGTFSFeed(ctx, id)
		return err
	})
	if err == nil && !ok {
		return apperr.NotFoundf("app.RemoveGTFS", CodeFeedNotFound)
	}
	return err
}

// sessionKeySecret names the generated session-token key in service_secrets.
const sessionKeySecret = "session-token-hmac"

// SessionKey returns the HMAC key of session tokens: configured when set
// (--session-key), otherwise a random 32-byte key generated once and kept in
// the database, so every instance on one database signs and checks with the
// same key.
func (a *App) SessionKey(ctx context.Context, configured string) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, apperr.Wrap("app.SessionKey", err)
	}
	var v string
	err := a.store.Write(ctx, func(q store.Q) (err error) {
		v, err = q.EnsureSecret(ctx, sessionKeySecret, hex.EncodeToString(b), a.clock.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(v)
	if err != nil || len(key) < 16 {
		return nil, apperr.E("app.SessionKey", apperr.Internal, CodeSecretCorrupt, "stored session key is not a hex key")
	}
	return key, nil
}
