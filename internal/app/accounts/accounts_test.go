package accounts_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/accounts"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

func code(err error) string {
	if e := apperr.As(err); e != nil {
		return e.Code
	}
	return ""
}

// TestKeysDirectly drives the use cases on both engines without a server:
// an account and its keys resolve to their principals (every script in the
// name), a prefix too short to name a key is refused, a dashboard
// revocation is refused for another account's key and empties this
// instance's cache at once, while another instance's cache keeps a revoked
// key for its TTL of the injected clock and not a second longer.
func TestKeysDirectly(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		clk := clocktest.NewFixed(time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC))
		db := store.NewView[accounts.Queries](s)
		one := accounts.New(db, clk, "farebox", time.Minute)
		other := accounts.New(db, clk, "farebox", time.Minute)

		name := "Ω Verkehrsverbund 東京 عربى שלום 🚆"
		k, err := one.CreateAccount(ctx, name, account.Live)
		if err != nil {
			t.Fatal(err)
		}
		p, err := one.Authenticate(ctx, k.Secret)
		if err != nil || p.AccountID != k.AccountID || p.AccountName != name || p.Environment != account.Live {
			t.Fatalf("Authenticate = %+v, %v", p, err)
		}
		if _, err := one.CreateAccount(ctx, "", account.Live); code(err) != accounts.CodeNameRequired {
			t.Errorf("no name: %v", err)
		}
		if _, err := one.Authenticate(ctx, "fbx_live_nope"); code(err) != accounts.CodeInvalidAPIKey {
			t.Errorf("malformed key: %v", err)
		}
		tk, err := one.CreateKey(ctx, k.AccountID, account.Test)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := one.DashboardKeys(ctx, k.AccountID, account.Test)
		if err != nil || len(keys) != 1 || keys[0].Prefix != tk.Prefix {
			t.Fatalf("DashboardKeys = %+v, %v", keys, err)
		}

		k2, err := one.CreateAccount(ctx, "Other", account.Live)
		if err != nil {
			t.Fatal(err)
		}
		if err := one.RevokeDashboardKey(ctx, k2.AccountID, account.Test, keys[0].ID); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("revoking another account's key: %v", err)
		}
		if _, err := one.RevokeKeys(ctx, "fbx_live_"); code(err) != accounts.CodeInvalidKeyPrefix {
			t.Errorf("short prefix: %v", err)
		}

		// other caches the test key; one revokes it.
		if _, err := other.Authenticate(ctx, tk.Secret); err != nil {
			t.Fatal(err)
		}
		if _, err := one.Authenticate(ctx, tk.Secret); err != nil {
			t.Fatal(err)
		}
		if err := one.RevokeDashboardKey(ctx, k.AccountID, account.Test, keys[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := one.Authenticate(ctx, tk.Secret); code(err) != accounts.CodeInvalidAPIKey {
			t.Errorf("revoking instance still accepts the key: %v", err)
		}
		clk.Advance(time.Minute - time.Nanosecond)
		if _, err := other.Authenticate(ctx, tk.Secret); err != nil {
			t.Errorf("within the TTL another instance refuses: %v", err)
		}
		clk.Advance(time.Nanosecond)
		if _, err := other.Authenticate(ctx, tk.Secret); code(err) != accounts.CodeInvalidAPIKey {
			t.Errorf("after the TTL: %v", err)
		}
	})
}
