package store_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

func blob(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestGTFSSnapshotsChunked stores snapshots larger than one chunk, replaces
// them atomically (a concurrent reader sees the old or the new snapshot or
// a Conflict, never a mix) and removes them.
func TestGTFSSnapshotsChunked(t *testing.T) {
	storetest.ForEachEngineLoaded(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		old := blob(2*store.GTFSChunkBytes+123, 1)
		put := func(id string, b []byte, rt string) gtfs.FeedRecord {
			var rec gtfs.FeedRecord
			err := s.Write(ctx, func(q store.Q) (err error) {
				rec, err = q.ReplaceGTFSFeed(ctx, gtfs.FeedRecord{ID: id, UpdatedAt: at, SourceName: id + ".zip", FeedVersion: "v",
					Stops: 3, Trips: 2, StopTimes: 1 << 33, Problems: 4, RealtimeSource: rt, RealtimeInterval: 15 * time.Second}, b)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return rec
		}
		r1 := put("nyc", old, "https://rt/x.pb")
		if r1.Chunks != 3 || r1.SnapshotBytes != int64(len(old)) || r1.Version != 1 {
			t.Errorf("first import: %+v", r1)
		}
		put("other", []byte("tiny"), "")
		feeds, err := s.Read().GTFSFeeds(ctx)
		if err != nil || len(feeds) != 2 {
			t.Fatalf("feeds %+v %v", feeds, err)
		}
		f := feeds[0]
		if f.ID != "nyc" || f.Version != 1 || !f.UpdatedAt.Equal(at) || f.SourceName != "nyc.zip" || f.StopTimes != 1<<33 ||
			f.Problems != 4 || f.RealtimeSource != "https://rt/x.pb" || f.RealtimeInterval != 15*time.Second || f.SnapshotSHA != r1.SnapshotSHA {
			t.Errorf("listed %+v", f)
		}
		got, err := s.Read().GTFSSnapshot(ctx, "nyc", 1)
		if err != nil || !bytes.Equal(got, old) {
			t.Fatalf("snapshot round trip: %d bytes, %v", len(got), err)
		}
		// Replace while readers read: each read is the old blob, the new blob or a Conflict.
		neu := blob(store.GTFSChunkBytes+7, 2)
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 5; j++ {
					fs, err := s.Read().GTFSFeeds(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					b, err := s.Read().GTFSSnapshot(ctx, "nyc", fs[0].Version)
					switch {
					case apperr.KindOf(err) == apperr.Conflict:
					case err != nil:
						t.Error(err)
					case !bytes.Equal(b, old) && !bytes.Equal(b, neu):
						t.Error("read a mix of two snapshots")
					}
				}
			}()
		}
		r2 := put("nyc", neu, "")
		wg.Wait()
		if r2.Version != 3 || r2.Chunks != 2 {
			t.Errorf("replace: %+v", r2)
		}
		if _, err := s.Read().GTFSSnapshot(ctx, "nyc", 1); apperr.KindOf(err) != apperr.Conflict {
			t.Errorf("old version readable after replace: %v", err)
		}
		if got, _ := s.Read().GTFSSnapshot(ctx, "nyc", 3); !bytes.Equal(got, neu) {
			t.Error("new snapshot differs")
		}
		var ok bool
		if err := s.Write(ctx, func(q store.Q) (err error) { ok, err = q.RemoveGTFSFeed(ctx, "nyc"); return err }); err != nil || !ok {
			t.Fatalf("remove: %v %v", ok, err)
		}
		if err := s.Write(ctx, func(q store.Q) (err error) { ok, err = q.RemoveGTFSFeed(ctx, "nyc"); return err }); err != nil || ok {
			t.Errorf("second remove: %v %v", ok, err)
		}
		if feeds, _ := s.Read().GTFSFeeds(ctx); len(feeds) != 1 || feeds[0].ID != "other" {
			t.Errorf("after remove: %+v", feeds)
		}
		// Re-import after removal gets a fresh, higher version.
		if r := put("nyc", old, ""); r.Version != 4 {
			t.Errorf("re-import version %d", r.Version)
		}
	})
}

// TestEnsureSecret: the first stored value wins for every caller.
func TestEnsureSecret(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var a, b string
		at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		if err := s.Write(ctx, func(q store.Q) (err error) { a, err = q.EnsureSecret(ctx, "k", "first", at); return err }); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, func(q store.Q) (err error) { b, err = q.EnsureSecret(ctx, "k", "second", at); return err }); err != nil {
			t.Fatal(err)
		}
		if a != "first" || b != "first" {
			t.Errorf("got %q, %q", a, b)
		}
	})
}
