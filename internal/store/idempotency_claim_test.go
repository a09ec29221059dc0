package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// TestIdempotencyClaimCommitted: a claim whose request committed writes
// (under WithIdempotencyClaim) but never stored its response, because its
// instance died, is not taken over after the lease and not released; a
// claim that committed nothing is taken over.
func TestIdempotencyClaimCommitted(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)
		claim := func(key string, when time.Time) (bool, idempotency.Record) {
			var ok bool
			var rec idempotency.Record
			if err := s.Write(ctx, func(q store.Q) (err error) {
				ok, rec, err = q.ClaimIdempotencyKey(ctx, "account:a", key, "h", when, time.Second)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return ok, rec
		}
		for _, key := range []string{"did-write", "wrote-nothing"} {
			if ok, _ := claim(key, at); !ok {
				t.Fatalf("%s: first claim refused", key)
			}
		}
		// The request of "did-write" commits a business write, then its instance dies.
		wctx := store.WithIdempotencyClaim(ctx, "account:a", "did-write")
		if err := s.Write(wctx, func(q store.Q) error {
			return q.CreateAccount(wctx, account.Account{ID: "acc-1", Name: "X", CreatedAt: at})
		}); err != nil {
			t.Fatal(err)
		}
		// A failure answer would release the claim; a committed one stays.
		mustWrite(t, s, func(q store.Q) error { return q.ReleaseIdempotencyKey(ctx, "account:a", "did-write") })
		later := at.Add(5 * time.Second)
		ok, rec := claim("did-write", later)
		if ok || !rec.Committed || rec.Status != 0 {
			t.Errorf("committed claim after the lease: claimed %v, %+v", ok, rec)
		}
		if ok, _ := claim("wrote-nothing", later); !ok {
			t.Error("an abandoned claim without writes was not taken over")
		}
	})
}
