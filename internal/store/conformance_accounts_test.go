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
		inv := account.DashboardInvite{TokenHash: "tok-1", AccountID: fxAccount, Email: "a@example.com", CreatedAt: fxAt, ExpiresAt: fxAt.Add(time.Hour)}
		checkInsert(t, f, inv, func(q store.Q) error { return q.InsertDashboardInvite(f.ctx, inv) },
			func(q store.Q) (account.DashboardInvite, error) { return q.DashboardInvite(f.ctx, inv.TokenHash, fxAt) })
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

func TestConformanceWeb(t *testing.T) { webConformance.run(t) }

// webConformance: the web sessions of web.go (its job methods are in
// jobsConformance).
var webConformance = conformanceCases{
	"InsertWebSession": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		old := webSession("sess-old", account.WebOperator, "root")
		old.CreatedAt, old.ExpiresAt = fxAt.Add(-2*time.Hour), fxAt.Add(-time.Hour)
		f.write(func(q store.Q) error { return q.InsertWebSession(f.ctx, old) })
		sess := webSession("sess-1", account.WebOperator, "root")
		sess.Credential = "fp"
		checkInsert(t, f, sess, func(q store.Q) error { return q.InsertWebSession(f.ctx, sess) },
			func(q store.Q) (account.WebSession, error) { return q.WebSession(f.ctx, sess.IDHash, fxAt) })
		// The insert dropped the expired session.
		if n, err := f.read().CountRows(f.ctx, "web_sessions"); err != nil || n != 1 {
			t.Errorf("%d sessions (%v), want the new one alone", n, err)
		}
	},
	"WebSession": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			return q.SetDashboardUser(f.ctx, "a@example.com", fxAccount, "phc-hash-0123456789abcdef", fxAt)
		})
		op := webSession("sess-op", account.WebOperator, "root")
		dash := webSession("sess-dash", account.WebDashboard, "a@example.com")
		dash.Credential = store.PasswordFingerprint("phc-hash-0123456789abcdef")
		stale := webSession("sess-stale", account.WebDashboard, "a@example.com")
		stale.Credential = "an older password"
		gone := webSession("sess-gone", account.WebDashboard, "x@example.com")
		f.write(func(q store.Q) error {
			for _, ws := range []account.WebSession{op, dash, stale, gone} {
				if err := q.InsertWebSession(f.ctx, ws); err != nil {
					return err
				}
			}
			return nil
		})
		for _, want := range []account.WebSession{op, dash} {
			if got, err := f.read().WebSession(f.ctx, want.IDHash, fxAt.Add(time.Hour)); err != nil || !cmp.Equal(got, want) {
				t.Errorf("WebSession(%s) = %+v, %v; want %+v", want.IDHash, got, err, want)
			}
		}
		for what, c := range map[string]struct {
			id string
			at time.Time
		}{"expired": {op.IDHash, op.ExpiresAt}, "opened with another password": {stale.IDHash, fxAt},
			"of a user that is gone": {gone.IDHash, fxAt}, "unknown": {"sess-x", fxAt}} {
			_, err := f.read().WebSession(f.ctx, c.id, c.at)
			wantCode(t, what, err, apperr.NotFound, store.CodeSessionNotFound)
		}
	},
	"SetWebSessionFlash": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sess := webSession("sess-1", account.WebOperator, "root")
		f.write(func(q store.Q) error { return q.InsertWebSession(f.ctx, sess) })
		for _, flash := range []string{"first", "second"} { // replaces one not shown yet
			f.write(func(q store.Q) error { return q.SetWebSessionFlash(f.ctx, sess.IDHash, flash, fxAt) })
		}
		if got, err := f.read().WebSession(f.ctx, sess.IDHash, fxAt); err != nil || got.Flash != "second" {
			t.Errorf("flash = %q, %v; want second", got.Flash, err)
		}
		for what, c := range map[string]struct {
			id string
			at time.Time
		}{"expired": {sess.IDHash, sess.ExpiresAt}, "unknown": {"sess-x", fxAt}} {
			err := s.Write(f.ctx, func(q store.Q) error { return q.SetWebSessionFlash(f.ctx, c.id, "x", c.at) })
			wantCode(t, what, err, apperr.NotFound, store.CodeSessionNotFound)
		}
	},
	"TakeWebSessionFlash": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		sess := webSession("sess-1", account.WebOperator, "root")
		f.write(func(q store.Q) error {
			if err := q.InsertWebSession(f.ctx, sess); err != nil {
				return err
			}
			return q.SetWebSessionFlash(f.ctx, sess.IDHash, "notice", fxAt)
		})
		for _, want := range []string{"notice", ""} { // once
			var got string
			f.write(func(q store.Q) (err error) { got, err = q.TakeWebSessionFlash(f.ctx, sess.IDHash); return err })
			if got != want {
				t.Errorf("TakeWebSessionFlash = %q, want %q", got, want)
			}
		}
		f.write(func(q store.Q) error {
			if got, err := q.TakeWebSessionFlash(f.ctx, "sess-x"); got != "" || err != nil {
				t.Errorf("TakeWebSessionFlash of an unknown session = %q, %v", got, err)
			}
			return nil
		})
	},
	"DeleteWebSessionsOf": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			for _, ws := range []account.WebSession{webSession("s-1", account.WebDashboard, "a@example.com"),
				webSession("s-2", account.WebDashboard, "a@example.com"), webSession("s-3", account.WebDashboard, "a@example.com"),
				webSession("s-b", account.WebDashboard, "b@example.com"), webSession("s-op", account.WebOperator, "a@example.com")} {
				if err := q.InsertWebSession(f.ctx, ws); err != nil {
					return err
				}
			}
			return nil
		})
		var n int64
		f.write(func(q store.Q) (err error) {
			n, err = q.DeleteWebSessionsOf(f.ctx, account.WebDashboard, "a@example.com", "s-2")
			return err
		})
		if n != 2 {
			t.Errorf("DeleteWebSessionsOf = %d, want 2 (all but the one kept)", n)
		}
		if c, err := f.read().CountRows(f.ctx, "web_sessions"); err != nil || c != 3 {
			t.Errorf("%d sessions left (%v), want s-2, s-b, s-op", c, err)
		}
	},
	"DeleteWebSession": func(t *testing.T, s *store.Store) {
		f := newFixture(t, s)
		f.write(func(q store.Q) error {
			for _, id := range []string{"s-1", "s-2"} {
				if err := q.InsertWebSession(f.ctx, webSession(id, account.WebOperator, "root")); err != nil {
					return err
				}
			}
			return nil
		})
		f.write(func(q store.Q) error {
			if err := q.DeleteWebSession(f.ctx, "s-1"); err != nil {
				return err
			}
			return q.DeleteWebSession(f.ctx, "s-x") // signing out twice is no error
		})
		_, err := f.read().WebSession(f.ctx, "s-1", fxAt)
		wantCode(t, "the ended session", err, apperr.NotFound, store.CodeSessionNotFound)
		if _, err := f.read().WebSession(f.ctx, "s-2", fxAt); err != nil {
			t.Errorf("the other session: %v", err)
		}
	},
}

// webSession is a session of kind for subject opened at fxAt for two
// hours (a dashboard session of fxAccount).
func webSession(id, kind, subject string) account.WebSession {
	ws := account.WebSession{IDHash: id, Kind: kind, Subject: subject, CreatedAt: fxAt, ExpiresAt: fxAt.Add(2 * time.Hour)}
	if kind == account.WebDashboard {
		ws.AccountID = fxAccount
	}
	return ws
}
