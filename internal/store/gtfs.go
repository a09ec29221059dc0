package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/gtfs"
)

// GTFSChunkBytes is the largest chunk a feed snapshot is stored in.
const GTFSChunkBytes = 4 << 20

// ReplaceGTFSFeed stores f with its snapshot, replacing a feed with the same
// id, and returns the new version. Run it inside Write: queries of other
// instances see the old feed or the new one, never a mix.
func (q Q) ReplaceGTFSFeed(ctx context.Context, f gtfs.FeedRecord, snapshot []byte) (gtfs.FeedRecord, error) {
	var v int64
	err := q.db.QueryRowContext(ctx, `INSERT INTO gtfs_state (id, version) VALUES (1, 1)
		ON CONFLICT (id) DO UPDATE SET version = gtfs_state.version + 1 RETURNING version`).Scan(&v)
	if err != nil {
		return f, mapErr(err)
	}
	sum := sha256.Sum256(snapshot)
	f.Version, f.UpdatedAt = v, now(f.UpdatedAt)
	f.SnapshotBytes, f.SnapshotSHA = int64(len(snapshot)), hex.EncodeToString(sum[:])
	f.Chunks = (len(snapshot) + GTFSChunkBytes - 1) / GTFSChunkBytes
	if _, err := q.db.ExecContext(ctx, `DELETE FROM gtfs_feed_chunks WHERE feed_id = $1`, f.ID); err != nil {
		return f, mapErr(err)
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO gtfs_feeds (id, version, updated_at, source_name, feed_version,
		snapshot_bytes, snapshot_sha256, chunks, stops, trips, stop_times, problems, realtime_source, realtime_interval_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at,
		source_name = excluded.source_name, feed_version = excluded.feed_version, snapshot_bytes = excluded.snapshot_bytes,
		snapshot_sha256 = excluded.snapshot_sha256, chunks = excluded.chunks, stops = excluded.stops, trips = excluded.trips,
		stop_times = excluded.stop_times, problems = excluded.problems, realtime_source = excluded.realtime_source,
		realtime_interval_ms = excluded.realtime_interval_ms`,
		f.ID, f.Version, f.UpdatedAt, f.SourceName, f.FeedVersion, f.SnapshotBytes, f.SnapshotSHA, f.Chunks,
		f.Stops, f.Trips, f.StopTimes, f.Problems, f.RealtimeSource, f.RealtimeInterval.Milliseconds())
	if err != nil {
		return f, mapErr(err)
	}
	for i := 0; i < f.Chunks; i++ {
		end := min((i+1)*GTFSChunkBytes, len(snapshot))
		if _, err := q.db.ExecContext(ctx, `INSERT INTO gtfs_feed_chunks (feed_id, seq, data) VALUES ($1, $2, $3)`,
			f.ID, i, snapshot[i*GTFSChunkBytes:end]); err != nil {
			return f, mapErr(err)
		}
	}
	return f, nil
}

// GTFSFeeds lists the stored feeds by id. Every instance polls it to notice
// imports and removals.
func (q Q) GTFSFeeds(ctx context.Context) ([]gtfs.FeedRecord, error) {
	out, err := collect(ctx, q, `SELECT id, version, updated_at, source_name, feed_version, snapshot_bytes,
		snapshot_sha256, chunks, stops, trips, stop_times, problems, realtime_source, realtime_interval_ms
		FROM gtfs_feeds ORDER BY id`, nil,
		func(scan scanner) (f gtfs.FeedRecord, err error) {
			var ms int64
			if err = scan(&f.ID, &f.Version, &f.UpdatedAt, &f.SourceName, &f.FeedVersion, &f.SnapshotBytes,
				&f.SnapshotSHA, &f.Chunks, &f.Stops, &f.Trips, &f.StopTimes, &f.Problems, &f.RealtimeSource, &ms); err != nil {
				return f, err
			}
			f.UpdatedAt = f.UpdatedAt.UTC()
			f.RealtimeInterval = time.Duration(ms) * time.Millisecond
			return f, nil
		})
	if err == nil && out == nil {
		out = []gtfs.FeedRecord{} // no feeds is an empty list, not null
	}
	return out, err
}

// GTFSSnapshot reads the snapshot of feed id at version and checks its size
// and SHA-256. A feed replaced or removed since the caller listed it is
// apperr.Conflict (list again); corruption is apperr.Internal.
func (q Q) GTFSSnapshot(ctx context.Context, id string, version int64) ([]byte, error) {
	const op = "store.GTFSSnapshot"
	var size int64
	var sum string
	var chunks int
	err := q.db.QueryRowContext(ctx, `SELECT snapshot_bytes, snapshot_sha256, chunks FROM gtfs_feeds WHERE id = $1 AND version = $2`,
		id, version).Scan(&size, &sum, &chunks)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.E(op, apperr.Conflict, CodeFeedChanged, "feed "+id+" changed while it was read")
	}
	if err != nil {
		return nil, mapErr(err)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	// One query per chunk keeps every driver buffer at most a chunk large.
	for i := 0; i < chunks; i++ {
		var data []byte
		err := q.db.QueryRowContext(ctx, `SELECT c.data FROM gtfs_feed_chunks c JOIN gtfs_feeds f ON f.id = c.feed_id
			WHERE c.feed_id = $1 AND c.seq = $2 AND f.version = $3`, id, i, version).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, apperr.E(op, apperr.Conflict, CodeFeedChanged, "feed "+id+" changed while it was read")
		}
		if err != nil {
			return nil, mapErr(err)
		}
		buf.Write(data)
	}
	got := sha256.Sum256(buf.Bytes())
	if int64(buf.Len()) != size || hex.EncodeToString(got[:]) != sum {
		return nil, apperr.E(op, apperr.Internal, CodeFeedCorrupt, "stored snapshot of feed "+id+" does not match its checksum")
	}
	return buf.Bytes(), nil
}

// RemoveGTFSFeed deletes a feed and its snapshot; false when there was none.
func (q Q) RemoveGTFSFeed(ctx context.Context, id string) (bool, error) {
	if _, err := q.db.ExecContext(ctx, `DELETE FROM gtfs_feed_chunks WHERE feed_id = $1`, id); err != nil {
		return false, mapErr(err)
	}
	res, err := q.db.ExecContext(ctx, `DELETE FROM gtfs_feeds WHERE id = $1`, id)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
