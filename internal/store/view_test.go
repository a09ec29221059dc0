package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/gtfs"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// secrets is a narrow interface over store.Q, as a use-case package
// declares it.
type secrets interface {
	EnsureSecret(ctx context.Context, name, value string, at time.Time) (string, error)
	GTFSFeeds(ctx context.Context) ([]gtfs.FeedRecord, error)
}

// TestViewNarrowsTheStore: a View reads and writes through the narrow
// interface on both engines (a failing fn rolls back), and NewView refuses
// an interface that store.Q does not implement.
func TestViewNarrowsTheStore(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		v := store.NewView[secrets](s)
		boom := errors.New("boom")
		if err := v.Write(ctx, func(q secrets) error {
			if _, err := q.EnsureSecret(ctx, "view-test", "rolled-back", at); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("Write = %v, want boom", err)
		}
		var got string
		if err := v.Write(ctx, func(q secrets) (err error) {
			got, err = q.EnsureSecret(ctx, "view-test", "kept", at)
			return err
		}); err != nil || got != "kept" {
			t.Fatalf("Write = %q, %v; want the first committed value kept (the rolled-back one gone)", got, err)
		}
		if feeds, err := v.Read().GTFSFeeds(ctx); err != nil || len(feeds) != 0 {
			t.Fatalf("Read().GTFSFeeds = %v, %v; want none on a fresh store", feeds, err)
		}
	})
	defer func() {
		if recover() == nil {
			t.Error("NewView accepted an interface store.Q does not implement")
		}
	}()
	store.NewView[interface{ NoSuchMethod() }](nil)
}
