package webusers_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/app/webusers"
	"github.com/farebox/farebox/internal/idempotency"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock/clocktest"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/store/storetest"
)

// start is where the service clock of every test here starts.
var start = time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC)

// password is a dashboard password of exactly MinPasswordLength
// characters, one of each script (31 bytes).
const password = "Ωש東ع🚆aB3$xYz"

// web is the web users of a fresh database with the accounts acc_1 and
// acc_2.
type web struct {
	ctx context.Context
	s   *store.Store
	svc *webusers.Service
	clk *clocktest.Fixed
}

// eachWeb runs fn on the web users of a fresh database on each engine.
func eachWeb(t *testing.T, fn func(t *testing.T, w *web)) {
	storetest.ForEachEngine(t, func(t *testing.T, s *store.Store) { fn(t, newWeb(t, s)) })
}

func newWeb(t *testing.T, s *store.Store) *web {
	t.Helper()
	w := &web{ctx: context.Background(), s: s, clk: clocktest.NewFixed(start)}
	for _, id := range []string{"acc_1", "acc_2"} {
		if err := s.Write(w.ctx, func(q store.Q) error {
			return q.CreateAccount(w.ctx, account.Account{ID: id, Name: "Verkehrsverbund " + id, CreatedAt: start})
		}); err != nil {
			t.Fatal(err)
		}
	}
	w.svc = webusers.New(store.NewView[webusers.Queries](s), w.clk, "farebox")
	return w
}

// invite invites email to accountID and returns the token.
func (w *web) invite(t *testing.T, accountID, email string) string {
	t.Helper()
	tok, err := w.svc.InviteDashboardUser(w.ctx, idempotency.Claim{}, accountID, email)
	if err != nil {
		t.Fatalf("invite %s: %v", email, err)
	}
	return tok
}

// user invites email to accountID, accepts with password and returns the
// session the acceptance opened.
func (w *web) user(t *testing.T, accountID, email string) string {
	t.Helper()
	id, err := w.svc.AcceptDashboardInvite(w.ctx, idempotency.Claim{}, w.invite(t, accountID, email), password, password)
	if err != nil {
		t.Fatalf("accept %s: %v", email, err)
	}
	return id
}

// alive tells whether the session id is live.
func (w *web) alive(t *testing.T, id string) bool {
	t.Helper()
	_, err := w.svc.WebSession(w.ctx, id)
	if err != nil && apperr.KindOf(err) != apperr.NotFound {
		t.Fatal(err)
	}
	return err == nil
}

// session is the live session id.
func (w *web) session(t *testing.T, id string) webusers.WebSession {
	t.Helper()
	ws, err := w.svc.WebSession(w.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// take takes the session's one-time notice.
func (w *web) take(t *testing.T, id string) string {
	t.Helper()
	n, err := w.svc.TakeWebFlash(w.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// is reports whether err is of kind with code.
func is(err error, kind apperr.Kind, code string) bool {
	e := apperr.As(err)
	return e != nil && e.Kind == kind && e.Code == code
}

// TestInviteAddresses: an invitation is for one plain address (of up to
// 254 bytes, in any script), kept trimmed and lower-case; anything else
// is refused naming the field, and so is an address of another account's
// user or an unknown account.
func TestInviteAddresses(t *testing.T) {
	local := strings.Repeat("a", 64)
	longest := local + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61) // 254 bytes
	eachWeb(t, func(t *testing.T, w *web) {
		for _, c := range []struct{ in, want string }{
			{"  Ops@Partner.Example\t", "ops@partner.example"},
			{"ÖFFI@Verbund.Example", "öffi@verbund.example"},
			{"مستخدم@مثال.مصر", "مستخدم@مثال.مصر"},
			{"משתמש@דוגמה.ישראל", "משתמש@דוגמה.ישראל"},
			{"用户@例子.中国", "用户@例子.中国"},
			{longest, longest},
		} {
			tok := w.invite(t, "acc_1", c.in)
			if got, err := w.svc.DashboardInvite(w.ctx, tok); err != nil || got != c.want {
				t.Errorf("invite of %q is for %q, %v; want %q", c.in, got, err, c.want)
			}
		}
		for _, bad := range []string{"", "ops", "ops@", "a@b, c@d", "Ops <ops@partner.example>", "ops@partner.example.",
			longest[:60] + "a" + longest[60:]} {
			_, err := w.svc.InviteDashboardUser(w.ctx, idempotency.Claim{}, "acc_1", bad)
			if e := apperr.As(err); e == nil || e.Code != webusers.CodeInvalidEmail || len(e.Details) != 1 || e.Details[0].Field != "email" {
				t.Errorf("address %q: %v", bad, err)
			}
		}
		if _, err := w.svc.InviteDashboardUser(w.ctx, idempotency.Claim{}, "acc_unknown", "ops@partner.example"); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("unknown account: %v", err)
		}
		w.user(t, "acc_1", "taken@partner.example")
		if _, err := w.svc.InviteDashboardUser(w.ctx, idempotency.Claim{}, "acc_2", "Taken@Partner.Example"); !is(err, apperr.Conflict, store.CodeDashboardUserTaken) {
			t.Errorf("another account's user: %v", err)
		}
	})
}

// TestAcceptInvite: a link is good until InviteTTL has passed to the
// microsecond and once; the password has MinPasswordLength characters
// (not bytes) to 1024 bytes and is typed twice alike; a refused password
// keeps the link good. A second link for the same user sets a new
// password and ends the sessions opened with the old one.
func TestAcceptInvite(t *testing.T) {
	eachWeb(t, func(t *testing.T, w *web) {
		tok := w.invite(t, "acc_1", "ops@partner.example")
		for _, c := range []struct{ pw, repeat, code string }{
			{"東京東京東京東京東京東", "東京東京東京東京東京東", webusers.CodePasswordTooShort}, // 11 characters, 33 bytes
			{"", "", webusers.CodePasswordTooShort},
			{strings.Repeat("🚆", 257), strings.Repeat("🚆", 257), webusers.CodePasswordTooLong}, // 1028 bytes
			{strings.Repeat("x", 1025), strings.Repeat("x", 1025), webusers.CodePasswordTooLong},
			{password, password + " ", webusers.CodePasswordMismatch},
		} {
			if _, err := w.svc.AcceptDashboardInvite(w.ctx, idempotency.Claim{}, tok, c.pw, c.repeat); !is(err, apperr.Unprocessable, c.code) && !is(err, apperr.Invalid, c.code) {
				t.Errorf("password of %d bytes: %v, want %s", len(c.pw), err, c.code)
			}
		}
		w.clk.Advance(webusers.InviteTTL - time.Microsecond)
		first, err := w.svc.AcceptDashboardInvite(w.ctx, idempotency.Claim{}, tok, password, password)
		if err != nil || !w.alive(t, first) {
			t.Fatalf("accept a microsecond before the link expires: %v", err)
		}
		if _, err := w.svc.AcceptDashboardInvite(w.ctx, idempotency.Claim{}, tok, password, password); !is(err, apperr.NotFound, store.CodeInviteNotFound) {
			t.Errorf("a used link: %v", err)
		}
		expired := w.invite(t, "acc_1", "late@partner.example")
		w.clk.Advance(webusers.InviteTTL)
		if _, err := w.svc.DashboardInvite(w.ctx, expired); !is(err, apperr.NotFound, store.CodeInviteNotFound) {
			t.Errorf("a link at its expiry: %v", err)
		}
		for _, tok := range []string{"", strings.Repeat("x", 101), "unknown"} {
			if _, err := w.svc.DashboardInvite(w.ctx, tok); !is(err, apperr.NotFound, store.CodeInviteNotFound) {
				t.Errorf("token %.10q: %v", tok, err)
			}
		}

		longest := strings.Repeat("🚆", 256) // 1024 bytes
		second, err := w.svc.AcceptDashboardInvite(w.ctx, idempotency.Claim{}, w.invite(t, "acc_1", "OPS@partner.example"), longest, longest)
		if err != nil || w.alive(t, first) || !w.alive(t, second) {
			t.Fatalf("a new password: %v; the old session alive %v, the new %v", err, w.alive(t, first), w.alive(t, second))
		}
		if _, err := w.svc.DashboardSignIn(w.ctx, idempotency.Claim{}, "ops@partner.example", password); !is(err, apperr.Unauthenticated, webusers.CodeSignInFailed) {
			t.Errorf("the old password: %v", err)
		}
		if id, err := w.svc.DashboardSignIn(w.ctx, idempotency.Claim{}, " Ops@Partner.Example ", longest); err != nil || !w.alive(t, id) {
			t.Errorf("the new password of 1024 bytes: %v", err)
		}
	})
}

// TestDashboardSignIn: a wrong password, an unknown address and an
// address too long all fail alike; the address is matched trimmed and
// lower-case, in any script; a session lasts WebSessionTTL to the
// microsecond; signing out ends it.
func TestDashboardSignIn(t *testing.T) {
	eachWeb(t, func(t *testing.T, w *web) {
		w.user(t, "acc_1", "مستخدم@مثال.مصر")
		for _, c := range []struct{ email, pw string }{
			{"مستخدم@مثال.مصر", password + "x"},
			{"nobody@partner.example", password},
			{strings.Repeat("a", 255), password},
			{"مستخدم@مثال.مصر", strings.Repeat("x", 1025)},
		} {
			if id, err := w.svc.DashboardSignIn(w.ctx, idempotency.Claim{}, c.email, c.pw); id != "" || !is(err, apperr.Unauthenticated, webusers.CodeSignInFailed) {
				t.Errorf("sign-in of %.20q: %q, %v", c.email, id, err)
			}
		}
		id, err := w.svc.DashboardSignIn(w.ctx, idempotency.Claim{}, "  مستخدم@مثال.مصر ", password)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := w.svc.WebSession(w.ctx, id)
		if err != nil || ws != (webusers.WebSession{Kind: webusers.WebDashboard, AccountID: "acc_1", Subject: "مستخدم@مثال.مصر"}) {
			t.Fatalf("session %+v, %v", ws, err)
		}
		if row, err := w.s.Read().WebSession(w.ctx, webusers.WebSessionHash(id), start); err != nil || !row.ExpiresAt.Equal(start.Add(webusers.WebSessionTTL)) {
			t.Fatalf("stored session %+v, %v", row, err)
		}
		w.clk.Advance(webusers.WebSessionTTL - time.Microsecond)
		if !w.alive(t, id) {
			t.Error("the session ended before its TTL")
		}
		w.clk.Advance(time.Microsecond)
		if w.alive(t, id) {
			t.Error("the session outlived its TTL")
		}
		late, err := w.svc.DashboardSignIn(w.ctx, idempotency.Claim{}, "مستخدم@مثال.مصر", password)
		if err != nil || !w.alive(t, late) {
			t.Fatalf("sign-in again: %v", err)
		}
		if err := w.svc.SignOut(w.ctx, idempotency.Claim{}, late); err != nil || w.alive(t, late) {
			t.Errorf("signed out: %v, alive %v", err, w.alive(t, late))
		}
		for _, bad := range []string{"", strings.Repeat("x", 101)} {
			if w.alive(t, bad) {
				t.Errorf("session id %.10q", bad)
			}
		}
	})
}

// TestWebFlash: a notice in any script is shown once on the session's
// next page, never to another session; a second notice replaces one not
// shown; a session that ended keeps none; of two pages taking it at once
// exactly one shows it.
func TestWebFlash(t *testing.T) {
	eachWeb(t, func(t *testing.T, w *web) {
		id := w.user(t, "acc_1", "ops@partner.example")
		other := w.user(t, "acc_2", "ops@other.example")
		notice := "Ω 東京 عربى שלום 🚆 fbx_live_secret\x00"
		for _, n := range []string{"replaced", notice} {
			if err := w.svc.SetWebFlash(w.ctx, id, n); err != nil {
				t.Fatal(err)
			}
		}
		if got := w.take(t, other); got != "" {
			t.Errorf("another session shows %q", got)
		}
		if got := w.take(t, id); got != notice {
			t.Errorf("notice %q, want %q", got, notice)
		}
		if got := w.take(t, id); got != "" {
			t.Errorf("shown twice: %q", got)
		}
		if err := w.svc.SetWebFlash(w.ctx, id, strings.Repeat("🚆", 4096)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		got := make([]string, 2)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = w.take(t, id)
			}()
		}
		wg.Wait()
		if (got[0] == "") == (got[1] == "") || got[0]+got[1] != strings.Repeat("🚆", 4096) {
			t.Errorf("twin takes showed %d and %d bytes", len(got[0]), len(got[1]))
		}
		if err := w.svc.SignOut(w.ctx, idempotency.Claim{}, id); err != nil {
			t.Fatal(err)
		}
		if err := w.svc.SetWebFlash(w.ctx, id, "late"); !is(err, apperr.NotFound, store.CodeSessionNotFound) {
			t.Errorf("notice for an ended session: %v", err)
		}
	})
}

// TestRemoveDashboardUser: a user removes another of its account (whose
// sessions end at once) but never the account's last user, nor a user of
// another account, and a session not of the dashboard removes nobody;
// the operator removes the last user too, with its open invitation.
func TestRemoveDashboardUser(t *testing.T) {
	eachWeb(t, func(t *testing.T, w *web) {
		a := w.user(t, "acc_1", "a@partner.example")
		b := w.user(t, "acc_1", "用户@例子.中国")
		x := w.user(t, "acc_2", "x@other.example")
		sa, sx := w.session(t, a), w.session(t, x)
		if err := w.svc.RemoveDashboardUserBy(w.ctx, idempotency.Claim{}, sx, "a@partner.example"); !is(err, apperr.NotFound, store.CodeDashboardUserNotFound) {
			t.Errorf("a user of another account: %v", err)
		}
		op := webusers.WebSession{Kind: webusers.WebOperator, Subject: "ops", AccountID: "acc_1"}
		if err := w.svc.RemoveDashboardUserBy(w.ctx, idempotency.Claim{}, op, "a@partner.example"); !is(err, apperr.NotFound, store.CodeDashboardUserNotFound) {
			t.Errorf("an operator session on the dashboard: %v", err)
		}
		if err := w.svc.RemoveDashboardUserBy(w.ctx, idempotency.Claim{}, sa, "not an address"); !is(err, apperr.Unprocessable, webusers.CodeInvalidEmail) && !is(err, apperr.Invalid, webusers.CodeInvalidEmail) {
			t.Errorf("no address: %v", err)
		}
		if err := w.svc.RemoveDashboardUserBy(w.ctx, idempotency.Claim{}, sa, " 用户@例子.中国 "); err != nil || w.alive(t, b) || !w.alive(t, a) {
			t.Fatalf("removing the other user: %v; its session alive %v", err, w.alive(t, b))
		}
		if err := w.svc.RemoveDashboardUserBy(w.ctx, idempotency.Claim{}, sa, "a@partner.example"); !is(err, apperr.Conflict, store.CodeLastDashboardUser) || !w.alive(t, a) {
			t.Errorf("removing the last user: %v", err)
		}
		tok := w.invite(t, "acc_1", "a@partner.example")
		if err := w.svc.RemoveDashboardUser(w.ctx, idempotency.Claim{}, "acc_1", "a@partner.example"); err != nil || w.alive(t, a) {
			t.Fatalf("the operator removes the last user: %v", err)
		}
		if _, err := w.svc.DashboardInvite(w.ctx, tok); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("the removed user's open link: %v", err)
		}
		if users, err := w.svc.DashboardUsers(w.ctx, "acc_1"); err != nil || len(users) != 0 {
			t.Errorf("users left %+v, %v", users, err)
		}
		if err := w.svc.RemoveDashboardUser(w.ctx, idempotency.Claim{}, "acc_1", "a@partner.example"); !is(err, apperr.NotFound, store.CodeDashboardUserNotFound) {
			t.Errorf("removing twice: %v", err)
		}
	})
}

// TestOperatorSignIn: the operator signs in with the credentials of the
// password file (a user name in any script); other credentials, a name
// too long and no file are refused; a session counts only with the
// credential it was opened with, so a new password file ends it.
func TestOperatorSignIn(t *testing.T) {
	line, err := webusers.HashOperatorPassword("מפעיל 東京", "correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	creds, err := webusers.ParseOperatorCredentials(line)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := webusers.HashOperatorPassword("מפעיל 東京", "correct horse battery staple")
	renewed, err := webusers.ParseOperatorCredentials(again)
	if err != nil {
		t.Fatal(err)
	}
	eachWeb(t, func(t *testing.T, w *web) {
		if _, err := w.svc.OperatorSignIn(w.ctx, idempotency.Claim{}, nil, "מפעיל 東京", "correct horse battery staple"); !is(err, apperr.Unavailable, webusers.CodeConsoleNotConfigured) {
			t.Errorf("no password file: %v", err)
		}
		for _, c := range []struct{ user, pw string }{
			{"מפעיל 東京", "correct horse battery staplE"},
			{"admin", "correct horse battery staple"},
			{strings.Repeat("x", 201), "correct horse battery staple"},
			{"מפעיל 東京", strings.Repeat("x", 1025)},
		} {
			if _, err := w.svc.OperatorSignIn(w.ctx, idempotency.Claim{}, creds, c.user, c.pw); !is(err, apperr.Unauthenticated, webusers.CodeSignInFailed) {
				t.Errorf("%.20q: %v", c.user, err)
			}
		}
		id, err := w.svc.OperatorSignIn(w.ctx, idempotency.Claim{}, creds, "מפעיל 東京", "correct horse battery staple")
		if err != nil {
			t.Fatal(err)
		}
		ws, err := w.svc.OperatorSession(w.ctx, creds, id)
		if err != nil || ws.Kind != webusers.WebOperator || ws.Subject != creds.User || ws.AccountID != "" {
			t.Fatalf("OperatorSession = %+v, %v", ws, err)
		}
		dash := w.user(t, "acc_1", "ops@partner.example")
		for name, c := range map[string]struct {
			creds *webusers.OperatorCredentials
			id    string
		}{"a new password file": {renewed, id}, "no password file": {nil, id}, "a dashboard session": {creds, dash}} {
			if _, err := w.svc.OperatorSession(w.ctx, c.creds, c.id); !is(err, apperr.NotFound, webusers.CodeNotFound) {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}
