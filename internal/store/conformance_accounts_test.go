package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

func TestConformanceAccounts(t *testing.T) { accountsConformance.run(t) }

// accountsConformance: accounts.go and dashboard.go (accounts, API keys,
// the partner dashboard's users and invitations; CreateAccount, CreateKey,
// PrincipalByKeyHash and RevokeKeysByPrefix are tested by
// TestAccountsAndKeys).
var accountsConformance = conformanceCases{
	"Account": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		want := account.Account{ID: fxOther, Name: "Account " + fxOther, CreatedAt: fxAt}
		if got, err := f.read().Account(f.ctx, fxOther); err != nil || !got.CreatedAt.Equal(fxAt) || got.ID != want.ID || got.Name != want.Name {
			t.Errorf("Account = %+v, %v; want %+v", got, err, want)
		}
		_, err := f.read().Account(f.ctx, "acct-x")
		wantCode(t, "an unknown account", err, apperr.NotFound, store.CodeAccountNotFound)
	},
	"Accounts": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			return q.CreateAccount(f.ctx, account.Account{ID: "acct-0", Name: "Older", CreatedAt: fxAt.Add(-time.Hour)})
		})
		got, err := f.read().Accounts(f.ctx)
		var ids []string
		for _, a := range got {
			ids = append(ids, a.ID)
		}
		// Oldest first, the id breaking a tie.
		if err != nil || !cmp.Equal(ids, []string{"acct-0", fxAccount, fxOther}) {
			t.Errorf("Accounts = %v, %v", ids, err)
		}
	},
	"Keys": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		apiKeys(f)
		for acct, want := range map[string][]string{fxAccount: {"k-live-1", "k-test", "k-live-2"}, "": {"k-live-1", "k-test", "k-live-2", "k-other"}} {
			got, err := f.read().Keys(f.ctx, acct)
			if ids := keyIDs(got); err != nil || !cmp.Equal(ids, want) {
				t.Errorf("Keys(%q) = %v, %v; want %v in creation order", acct, ids, err, want)
			}
		}
	},
	"KeysOfEnvironment": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		apiKeys(f)
		got, err := f.read().KeysOfEnvironment(f.ctx, fxAccount, account.Live)
		if ids := keyIDs(got); err != nil || !cmp.Equal(ids, []string{"k-live-2", "k-live-1"}) {
			t.Errorf("KeysOfEnvironment = %v, %v; want the live keys newest first", ids, err)
		}
	},
	"TouchKey": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		apiKeys(f)
		at := fxAt.Add(time.Hour)
		f.write(func(q store.Q) error { return q.TouchKey(f.ctx, "k-live-1", at) })
		for _, k := range mustKeys(t, f) {
			if used := k.LastUsedAt != nil && k.LastUsedAt.Equal(at); used != (k.ID == "k-live-1") {
				t.Errorf("key %s last used %v after TouchKey(k-live-1)", k.ID, k.LastUsedAt)
			}
		}
	},
	"RevokeAccountKey": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		apiKeys(f)
		at := fxAt.Add(time.Hour)
		f.write(func(q store.Q) error { return q.RevokeAccountKey(f.ctx, fxAccount, account.Live, "k-live-1", at) })
		for _, k := range mustKeys(t, f) {
			if revoked := k.RevokedAt != nil && k.RevokedAt.Equal(at); revoked != (k.ID == "k-live-1") {
				t.Errorf("key %s revoked %v after RevokeAccountKey(k-live-1)", k.ID, k.RevokedAt)
			}
		}
		for what, c := range map[string]struct {
			acct string
			env  account.Environment
			id   string
		}{"revoked already": {fxAccount, account.Live, "k-live-1"}, "another account's": {fxAccount, account.Live, "k-other"},
			"another environment's": {fxAccount, account.Test, "k-live-2"}, "unknown": {fxAccount, account.Live, "k-x"}} {
			err := s.Write(f.ctx, func(q store.Q) error { return q.RevokeAccountKey(f.ctx, c.acct, c.env, c.id, at) })
			wantCode(t, what, err, apperr.NotFound, store.CodeKeyNotFound)
		}
	},
	"InsertDashboardInvite": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := invite(f, "tok-1", "a@example.com")
		if got, err := f.read().DashboardInvite(f.ctx, inv.TokenHash, fxAt); err != nil || !cmp.Equal(got, inv) {
			t.Errorf("DashboardInvite after InsertDashboardInvite = %+v, %v; want %+v", got, err, inv)
		}
		err := s.Write(f.ctx, func(q store.Q) error { return q.InsertDashboardInvite(f.ctx, inv) })
		wantCode(t, "a second invitation of the token", err, apperr.Conflict, store.CodeConflict)
	},
	"DashboardInvite": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := invite(f, "tok-1", "a@example.com")
		invite(f, "tok-used", "b@example.com")
		f.write(func(q store.Q) error { return q.UseDashboardInvite(f.ctx, "tok-used", fxAt) })
		if got, err := f.read().DashboardInvite(f.ctx, inv.TokenHash, inv.ExpiresAt.Add(-time.Second)); err != nil || !cmp.Equal(got, inv) {
			t.Errorf("DashboardInvite before it expires = %+v, %v", got, err)
		}
		for what, c := range map[string]struct {
			token string
			at    time.Time
		}{"expired": {inv.TokenHash, inv.ExpiresAt}, "used": {"tok-used", fxAt}, "unknown": {"tok-x", fxAt}} {
			_, err := f.read().DashboardInvite(f.ctx, c.token, c.at)
			wantCode(t, what, err, apperr.NotFound, store.CodeInviteNotFound)
		}
	},
	"UseDashboardInvite": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		inv := invite(f, "tok-1", "a@example.com")
		invite(f, "tok-2", "b@example.com")
		f.write(func(q store.Q) error { return q.UseDashboardInvite(f.ctx, inv.TokenHash, fxAt) })
		for what, c := range map[string]struct {
			token string
			at    time.Time
		}{"used": {inv.TokenHash, fxAt}, "expired": {"tok-2", fxAt.Add(48 * time.Hour)}, "unknown": {"tok-x", fxAt}} {
			err := s.Write(f.ctx, func(q store.Q) error { return q.UseDashboardInvite(f.ctx, c.token, c.at) }) // good once
			wantCode(t, what, err, apperr.NotFound, store.CodeInviteNotFound)
		}
		if _, err := f.read().DashboardInvite(f.ctx, "tok-2", fxAt); err != nil {
			t.Errorf("another invitation used up: %v", err)
		}
	},
	"SetDashboardUser": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error { return q.SetDashboardUser(f.ctx, "a@example.com", fxAccount, "hash-1", fxAt) })
		f.write(func(q store.Q) error {
			return q.SetDashboardUser(f.ctx, "a@example.com", fxAccount, "hash-2", fxAt.Add(time.Hour))
		})
		if acct, hash, err := f.read().DashboardUser(f.ctx, "a@example.com"); err != nil || acct != fxAccount || hash != "hash-2" {
			t.Errorf("user after setting the password = %s, %s, %v; want the new hash", acct, hash, err)
		}
		err := s.Write(f.ctx, func(q store.Q) error { return q.SetDashboardUser(f.ctx, "a@example.com", fxOther, "hash-3", fxAt) })
		wantCode(t, "the address of another account's user", err, apperr.Conflict, store.CodeDashboardUserTaken)
		users, err := f.read().DashboardUsers(f.ctx, fxAccount)
		if want := []account.DashboardUser{{Email: "a@example.com", AccountID: fxAccount, CreatedAt: fxAt}}; err != nil || !cmp.Equal(users, want) {
			t.Errorf("users = %+v, %v; want one, created when first set", users, err)
		}
	},
	"DashboardUser": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error { return q.SetDashboardUser(f.ctx, "a@example.com", fxOther, "hash-1", fxAt) })
		if acct, hash, err := f.read().DashboardUser(f.ctx, "a@example.com"); err != nil || acct != fxOther || hash != "hash-1" {
			t.Errorf("DashboardUser = %s, %s, %v", acct, hash, err)
		}
		_, _, err := f.read().DashboardUser(f.ctx, "x@example.com")
		wantCode(t, "an unknown user", err, apperr.NotFound, store.CodeDashboardUserNotFound)
	},
	"DashboardUsers": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			for _, u := range []account.DashboardUser{{Email: "c@example.com", AccountID: fxAccount, CreatedAt: fxAt},
				{Email: "b@example.com", AccountID: fxAccount, CreatedAt: fxAt}, {Email: "a@example.com", AccountID: fxAccount, CreatedAt: fxAt.Add(time.Hour)},
				{Email: "o@example.com", AccountID: fxOther, CreatedAt: fxAt}} {
				if err := q.SetDashboardUser(f.ctx, u.Email, u.AccountID, "h", u.CreatedAt); err != nil {
					return err
				}
			}
			return nil
		})
		got, err := f.read().DashboardUsers(f.ctx, fxAccount)
		var emails []string
		for _, u := range got {
			emails = append(emails, u.Email)
		}
		if err != nil || !cmp.Equal(emails, []string{"b@example.com", "c@example.com", "a@example.com"}) {
			t.Errorf("DashboardUsers = %v, %v; want the account's, oldest first", emails, err)
		}
	},
	"DeleteDashboardUser": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			for _, e := range []string{"a@example.com", "b@example.com"} {
				if err := q.SetDashboardUser(f.ctx, e, fxAccount, "h", fxAt); err != nil {
					return err
				}
			}
			return nil
		})
		invite(f, "tok-a", "a@example.com")
		invite(f, "tok-b", "b@example.com")
		f.write(func(q store.Q) error {
			return q.InsertWebSession(f.ctx, webSession("sess-a", account.WebDashboard, "a@example.com"))
		})
		f.write(func(q store.Q) error { return q.DeleteDashboardUser(f.ctx, fxAccount, "a@example.com", true) })
		// The user, its open invitation and its sessions are gone; the other user's stay.
		if _, _, err := f.read().DashboardUser(f.ctx, "a@example.com"); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("deleted user still there: %v", err)
		}
		_, err := f.read().DashboardInvite(f.ctx, "tok-a", fxAt)
		wantCode(t, "the deleted user's invitation", err, apperr.NotFound, store.CodeInviteNotFound)
		_, err = f.read().WebSession(f.ctx, "sess-a", fxAt)
		wantCode(t, "the deleted user's session", err, apperr.NotFound, store.CodeSessionNotFound)
		if _, err := f.read().DashboardInvite(f.ctx, "tok-b", fxAt); err != nil {
			t.Errorf("the other user's invitation: %v", err)
		}
		err = s.Write(f.ctx, func(q store.Q) error { return q.DeleteDashboardUser(f.ctx, fxAccount, "b@example.com", true) })
		wantCode(t, "the last user, kept", err, apperr.Conflict, store.CodeLastDashboardUser)
		err = s.Write(f.ctx, func(q store.Q) error { return q.DeleteDashboardUser(f.ctx, fxOther, "b@example.com", false) })
		wantCode(t, "another account's user", err, apperr.NotFound, store.CodeDashboardUserNotFound)
		if users, err := f.read().DashboardUsers(f.ctx, fxAccount); err != nil || len(users) != 1 {
			t.Errorf("users after refused deletions = %+v, %v; want b", users, err)
		}
		f.write(func(q store.Q) error { return q.DeleteDashboardUser(f.ctx, fxAccount, "b@example.com", false) }) // the operator may
		if users, err := f.read().DashboardUsers(f.ctx, fxAccount); err != nil || len(users) != 0 {
			t.Errorf("users after the operator's deletion = %+v, %v", users, err)
		}
	},
}

// apiKeys writes the keys the key cases read: k-live-1 (fxAccount, live,
// fxAt), k-test (test, +1m), k-live-2 (live, +2m), k-other (fxOther, live,
// +3m).
func apiKeys(f *fixture) {
	f.t.Helper()
	f.write(func(q store.Q) error {
		for i, k := range []account.Key{{ID: "k-live-1", AccountID: fxAccount, Environment: account.Live},
			{ID: "k-test", AccountID: fxAccount, Environment: account.Test}, {ID: "k-live-2", AccountID: fxAccount, Environment: account.Live},
			{ID: "k-other", AccountID: fxOther, Environment: account.Live}} {
			k.Prefix, k.CreatedAt = "fbx_"+k.ID, fxAt.Add(time.Duration(i)*time.Minute)
			if err := q.CreateKey(f.ctx, k, "hash-"+k.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

func mustKeys(t *testing.T, f *fixture) []account.Key {
	t.Helper()
	ks, err := f.read().Keys(f.ctx, "")
	if err != nil || len(ks) != 4 {
		t.Fatalf("Keys = %v, %v", ks, err)
	}
	return ks
}

func keyIDs(ks []account.Key) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.ID)
	}
	return out
}

// invite writes an invitation of fxAccount for email, valid a day from fxAt.
func invite(f *fixture, token, email string) account.DashboardInvite {
	f.t.Helper()
	inv := account.DashboardInvite{TokenHash: token, AccountID: fxAccount, Email: email, CreatedAt: fxAt, ExpiresAt: fxAt.Add(24 * time.Hour)}
	f.write(func(q store.Q) error { return q.InsertDashboardInvite(f.ctx, inv) })
	return inv
}
