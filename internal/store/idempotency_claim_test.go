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

// TestIdempotencyClaimCommitted: a claim whose request committed its change
// (WriteClaimed with the claim) but never stored its response, because its
// instance died, is not taken over after the lease and not released; a
// claim that committed nothing is taken over, and so is one whose request
// committed only with Write: the claim is marked by the parameter of the
// write that commits the change, never by what the context carries.
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
		for _, key := range []string{"did-write", "wrote-nothing", "wrote-unclaimed"} {
			if ok, _ := claim(key, at); !ok {
				t.Fatalf("%s: first claim refused", key)
			}
		}
		// The request of "did-write" commits a business write, then its instance dies.
		did := idempotency.Claim{Scope: "account:a", Key: "did-write"}
		if err := s.WriteClaimed(ctx, did, func(q store.Q) error {
			return q.CreateAccount(ctx, account.Account{ID: "acc-1", Name: "X", CreatedAt: at})
		}); err != nil {
			t.Fatal(err)
		}
		// The request of "wrote-unclaimed" commits with a plain Write: it
		// names no claim, so nothing marks it.
		if err := s.Write(ctx, func(q store.Q) error {
			return q.CreateAccount(ctx, account.Account{ID: "acc-2", Name: "Y", CreatedAt: at})
		}); err != nil {
			t.Fatal(err)
		}
		// Through a View as through the Store.
		vdid := idempotency.Claim{Scope: "account:a", Key: "view-write"}
		if ok, _ := claim(vdid.Key, at); !ok {
			t.Fatal("view-write: first claim refused")
		}
		v := store.NewView[interface {
			CreateAccount(context.Context, account.Account) error
		}](s)
		if err := v.WriteClaimed(ctx, vdid, func(q interface {
			CreateAccount(context.Context, account.Account) error
		}) error {
			return q.CreateAccount(ctx, account.Account{ID: "acc-3", Name: "Z", CreatedAt: at})
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
		if ok, rec := claim("view-write", later); ok || !rec.Committed {
			t.Errorf("claim committed through a View after the lease: claimed %v, %+v", ok, rec)
		}
		if ok, _ := claim("wrote-nothing", later); !ok {
			t.Error("an abandoned claim without writes was not taken over")
		}
		if ok, rec := claim("wrote-unclaimed", later); !ok || rec.Committed {
			t.Errorf("a claim only the context carried was marked by a plain Write: claimed %v, %+v", ok, rec)
		}
	})
}
