package store_test

import (
	"testing"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/store"
	"github.com/google/go-cmp/cmp"
)

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
		f.write(func(q store.Q) error { return q.InsertWebSession(f.ctx, sess) })
		if got, err := f.read().WebSession(f.ctx, sess.IDHash, fxAt); err != nil || !cmp.Equal(got, sess) {
			t.Errorf("WebSession after InsertWebSession = %+v, %v; want %+v", got, err, sess)
		}
		// The insert dropped the expired session.
		if n, err := f.read().CountRows(f.ctx, "web_sessions"); err != nil || n != 1 {
			t.Errorf("%d sessions (%v), want the new one alone", n, err)
		}
		err := s.Write(f.ctx, func(q store.Q) error { return q.InsertWebSession(f.ctx, sess) })
		wantCode(t, "a second session of the id", err, apperr.Conflict, store.CodeConflict)
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
