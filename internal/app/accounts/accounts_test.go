package accounts_test

import (
	"context"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/accounts"
	"github.com/farebox/farebox/internal/idempotency"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
	"github.com/farebox/farebox/internal/testtool"
)

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
		k, err := one.CreateAccount(ctx, idempotency.Claim{}, name, account.Live)
		if err != nil {
			t.Fatal(err)
		}
		p, err := one.Authenticate(ctx, k.Secret)
		if err != nil || p.AccountID != k.AccountID || p.AccountName != name || p.Environment != account.Live {
			t.Fatalf("Authenticate = %+v, %v", p, err)
		}
		if _, err := one.CreateAccount(ctx, idempotency.Claim{}, "", account.Live); testtool.Code(err) != accounts.CodeNameRequired {
			t.Errorf("no name: %v", err)
		}
		if _, err := one.Authenticate(ctx, "fbx_live_nope"); testtool.Code(err) != accounts.CodeInvalidAPIKey {
			t.Errorf("malformed key: %v", err)
		}
		tk, err := one.CreateKey(ctx, idempotency.Claim{}, k.AccountID, account.Test)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := one.DashboardKeys(ctx, k.AccountID, account.Test)
		if err != nil || len(keys) != 1 || keys[0].Prefix != tk.Prefix {
			t.Fatalf("DashboardKeys = %+v, %v", keys, err)
		}

		k2, err := one.CreateAccount(ctx, idempotency.Claim{}, "Other", account.Live)
		if err != nil {
			t.Fatal(err)
		}
		if err := one.RevokeDashboardKey(ctx, idempotency.Claim{}, k2.AccountID, account.Test, keys[0].ID); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("revoking another account's key: %v", err)
		}
		if _, err := one.RevokeKeys(ctx, idempotency.Claim{}, "fbx_live_"); testtool.Code(err) != accounts.CodeInvalidKeyPrefix {
			t.Errorf("short prefix: %v", err)
		}

		// other caches the test key; one revokes it.
		if _, err := other.Authenticate(ctx, tk.Secret); err != nil {
			t.Fatal(err)
		}
		if _, err := one.Authenticate(ctx, tk.Secret); err != nil {
			t.Fatal(err)
		}
		if err := one.RevokeDashboardKey(ctx, idempotency.Claim{}, k.AccountID, account.Test, keys[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := one.Authenticate(ctx, tk.Secret); testtool.Code(err) != accounts.CodeInvalidAPIKey {
			t.Errorf("revoking instance still accepts the key: %v", err)
		}
		clk.Advance(time.Minute - time.Nanosecond)
		if _, err := other.Authenticate(ctx, tk.Secret); err != nil {
			t.Errorf("within the TTL another instance refuses: %v", err)
		}
		clk.Advance(time.Nanosecond)
		if _, err := other.Authenticate(ctx, tk.Secret); testtool.Code(err) != accounts.CodeInvalidAPIKey {
			t.Errorf("after the TTL: %v", err)
		}
	})
}

// keys is the accounts of a fresh database with two accounts whose keys
// share a visible prefix (as two random prefixes may).
type keys struct {
	ctx    context.Context
	svc    *accounts.Service
	clk    *clocktest.Fixed
	a, b   string // account ids
	secret map[string]string
}

// twoAccounts makes the accounts a ("عربى שלום") and b ("東京 🚆") with
// keys fbx_test_SHARED01a and …02a of a, fbx_test_SHARED01b of b (secrets
// by prefix).
func twoAccounts(t *testing.T, s *store.Store) *keys {
	t.Helper()
	k := &keys{ctx: context.Background(), clk: clocktest.NewFixed(time.Date(2026, 6, 15, 10, 0, 30, 0, time.UTC)), secret: map[string]string{}}
	k.svc = accounts.New(store.NewView[accounts.Queries](s), k.clk, "farebox", 0)
	for _, name := range []string{"عربى שלום", "東京 🚆"} {
		c, err := k.svc.CreateAccount(k.ctx, idempotency.Claim{}, name, account.Live)
		if err != nil {
			t.Fatal(err)
		}
		k.a, k.b = k.b, c.AccountID
	}
	for i, own := range map[string]string{"fbx_test_SHARED01a": k.a, "fbx_test_SHARED02a": k.a, "fbx_test_SHARED01b": k.b} {
		secret, _, hash := account.NewKey(account.Test)
		if err := s.Write(k.ctx, func(q store.Q) error {
			return q.CreateKey(k.ctx, account.Key{ID: "key_" + i, AccountID: own, Prefix: i, Environment: account.Test, CreatedAt: k.clk.Now()}, hash)
		}); err != nil {
			t.Fatal(err)
		}
		k.secret[i] = secret
	}
	return k
}

// TestRevokeKeysByPrefix: a prefix names keys only with at least
// MinKeyPrefixChars characters after the environment; one naming keys of
// two accounts revokes nothing unless the account is named; the keys
// revoked stop working at once on an instance without a cache; a prefix
// of revoked keys only, or of the other environment, names nothing. The
// instance revoking forgets the keys it cached at once.
func TestRevokeKeysByPrefix(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		k := twoAccounts(t, s)
		cached := accounts.New(store.NewView[accounts.Queries](s), k.clk, "farebox", time.Hour)
		if _, err := cached.Authenticate(k.ctx, k.secret["fbx_test_SHARED02a"]); err != nil {
			t.Fatal(err)
		}
		if m, err := k.svc.KeysWithPrefix(k.ctx, "fbx_test_SHARED0", ""); testtool.Code(err) != accounts.CodeInvalidKeyPrefix {
			t.Errorf("seven characters: %+v, %v", m, err)
		}
		m, err := k.svc.KeysWithPrefix(k.ctx, "fbx_test_SHARED01", "")
		if err != nil || len(m) != 2 {
			t.Fatalf("KeysWithPrefix = %+v, %v", m, err)
		}
		for _, x := range m {
			if want := map[string]string{k.a: "عربى שלום", k.b: "東京 🚆"}[x.AccountID]; x.AccountName != want || x.Environment != account.Test {
				t.Errorf("match %+v", x)
			}
		}
		for _, c := range []struct {
			prefix, account string
			n               int64
			code            string
		}{
			{"fbx_test_SHARED01", "", 0, accounts.CodeKeyPrefixAmbiguous},
			{"fbx_live_SHARED01", "", 0, accounts.CodeKeyNotFound},
			{"fbx_test_SHARED0", k.a, 0, accounts.CodeInvalidKeyPrefix},
			{"fbx_test_SHARED0", "", 0, accounts.CodeInvalidKeyPrefix},
			{"fbx_test_SHARED01b", "", 1, ""},
			{"fbx_test_SHARED01", k.b, 0, accounts.CodeKeyNotFound},
			{"fbx_test_SHARED0", k.a, 0, accounts.CodeInvalidKeyPrefix},
			{"fbx_test_SHARED", k.a, 0, accounts.CodeInvalidKeyPrefix},
			{"fbx_test_SHAREDxx", k.a, 0, accounts.CodeKeyNotFound},
			{"fbx_test_SHARED01", "", 1, ""},
			{"fbx_test_SHARED02", k.a, 1, ""}, // by cached
			{"fbx_test_SHARED02", k.a, 0, accounts.CodeKeyNotFound},
		} {
			by := k.svc
			if c.prefix == "fbx_test_SHARED02" {
				by = cached
			}
			n, err := by.RevokeKeysOf(k.ctx, idempotency.Claim{}, c.prefix, c.account)
			if n != c.n || testtool.Code(err) != c.code {
				t.Errorf("revoke %s of %q: %d, %v; want %d, %q", c.prefix, c.account, n, err, c.n, c.code)
			}
		}
		for prefix, secret := range k.secret {
			if _, err := cached.Authenticate(k.ctx, secret); testtool.Code(err) != accounts.CodeInvalidAPIKey {
				t.Errorf("the revoked key %s: %v", prefix, err)
			}
		}
	})
}

// TestRevokeKeyTwins: one key revoked twice at once (two operators, or a
// double click): one revocation succeeds, the other finds no active key.
func TestRevokeKeyTwins(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		k := twoAccounts(t, s)
		done := make(chan error)
		for range 2 {
			go func() {
				done <- k.svc.RevokeDashboardKey(k.ctx, idempotency.Claim{}, k.a, account.Test, "key_fbx_test_SHARED01a")
			}()
		}
		won, lost := 0, 0
		for _, err := range []error{<-done, <-done} {
			switch {
			case err == nil:
				won++
			case apperr.KindOf(err) == apperr.NotFound:
				lost++
			}
		}
		if won != 1 || lost != 1 {
			t.Errorf("%d twin revocations won, %d found no active key", won, lost)
		}
		if _, err := k.svc.CreateKey(k.ctx, idempotency.Claim{}, "account_unknown", account.Live); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("a key for an unknown account: %v", err)
		}
	})
}

// TestKeyLastUse: a key's last use is kept to the minute and written at
// most once a minute per instance: a use 59 s after the last write is not
// written, one a full minute after is; a clock set back writes at once.
func TestKeyLastUse(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) {
		k := twoAccounts(t, s)
		lastUse := func() time.Time {
			t.Helper()
			ks, err := k.svc.DashboardKeys(k.ctx, k.b, account.Test)
			if err != nil || len(ks) != 1 {
				t.Fatalf("DashboardKeys = %+v, %v", ks, err)
			}
			if ks[0].LastUsedAt == nil {
				return time.Time{}
			}
			return ks[0].LastUsedAt.UTC()
		}
		if !lastUse().IsZero() {
			t.Fatalf("unused key used at %s", lastUse())
		}
		minute := func(h, m int) time.Time { return time.Date(2026, 6, 15, h, m, 0, 0, time.UTC) }
		for _, c := range []struct {
			step time.Duration
			want time.Time
		}{
			{0, minute(10, 0)},                // 10:00:30
			{59 * time.Second, minute(10, 0)}, // 10:01:29
			{time.Second, minute(10, 1)},      // 10:01:30
			{-2 * time.Minute, minute(9, 59)}, // 09:59:30, the clock set back
			{30 * time.Second, minute(9, 59)}, // 10:00:00
		} {
			k.clk.Advance(c.step)
			if _, err := k.svc.Authenticate(k.ctx, k.secret["fbx_test_SHARED01b"]); err != nil {
				t.Fatal(err)
			}
			if got := lastUse(); !got.Equal(c.want) {
				t.Errorf("at %s: last use %s, want %s", k.clk.Now().Format(time.TimeOnly), got, c.want)
			}
		}
	})
}
