package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/store"
)

// Accounts creates the accounts ids on s, created at at, in one
// transaction (tests above the store that need an account row: event
// streams, endpoints).
func Accounts(t testing.TB, s *store.Store, at time.Time, ids ...string) {
	t.Helper()
	ctx := context.Background()
	err := s.Write(ctx, func(q store.Q) error {
		for _, id := range ids {
			if err := q.CreateAccount(ctx, account.Account{ID: id, Name: "Ω 東京 عربى " + id, CreatedAt: at}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
