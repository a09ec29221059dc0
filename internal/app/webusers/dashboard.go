package webusers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"github.com/farebox/farebox/internal/idempotency"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/store"
)

// InviteTTL is how long a dashboard invitation link stays good.
const InviteTTL = 72 * time.Hour

// MinPasswordLength is the shortest dashboard password accepted (NIST SP
// 800-63B: at least 8; the form asks for 12).
const MinPasswordLength = 12

// maxPasswordBytes bounds what argon2id is asked to hash.
const maxPasswordBytes = 1024

// DashboardPath is where a dashboard invitation's link points, followed by
// the token.
const DashboardPath = "/dashboard/invite?token="

// normalEmail is the address as stored: trimmed, lower-case; Invalid
// unless it is one plain address.
func normalEmail(op, s string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(s))
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || len(e) > 254 {
		return "", apperr.Validation(op, CodeInvalidEmail, "email", "email: one address such as ops@partner.example")
	}
	return e, nil
}

// InviteDashboardUser makes a one-time sign-in link for email on account
// accountID; it returns the token (the link is DashboardPath + token). Only
// the token's SHA-256 is stored.
func (s *Service) InviteDashboardUser(ctx context.Context, claim idempotency.Claim, accountID, email string) (string, error) {
	const op = "app.InviteDashboardUser"
	e, err := normalEmail(op, email)
	if err != nil {
		return "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", apperr.Wrap(op, err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := s.Clock.Now()
	err = s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		if _, err := q.Account(ctx, accountID); err != nil {
			return err
		}
		if acc, _, err := q.DashboardUser(ctx, e); err == nil && acc != accountID {
			return apperr.E(op, apperr.Conflict, store.CodeDashboardUserTaken, "this e-mail address belongs to a user of another account")
		}
		return q.InsertDashboardInvite(ctx, account.DashboardInvite{TokenHash: WebSessionHash(token), AccountID: accountID, Email: e,
			CreatedAt: now, ExpiresAt: now.Add(InviteTTL)})
	})
	return token, err
}

// DashboardInvite returns the e-mail address an open invitation is for
// (NotFound when the token is unknown, used or expired).
func (s *Service) DashboardInvite(ctx context.Context, token string) (string, error) {
	if token == "" || len(token) > 100 {
		return "", apperr.E("app.DashboardInvite", apperr.NotFound, store.CodeInviteNotFound, "the sign-in link is unknown, used or expired")
	}
	inv, err := s.DB.Read().DashboardInvite(ctx, WebSessionHash(token), s.Clock.Now())
	return inv.Email, err
}

func checkPassword(op, password, repeat string) error {
	switch {
	case utf8.RuneCountInString(password) < MinPasswordLength:
		return apperr.Validation(op, CodePasswordTooShort, "password", "password: at least 12 characters")
	case len(password) > maxPasswordBytes:
		return apperr.Validation(op, CodePasswordTooLong, "password", "password: at most 1024 bytes")
	case password != repeat:
		return apperr.Validation(op, CodePasswordMismatch, "password_repeat", "password_repeat: the two passwords differ")
	}
	return nil
}

// AcceptDashboardInvite uses the invitation token once: it sets the user's
// password (argon2id, the console's parameters) and opens a session,
// returning its id for the cookie.
func (s *Service) AcceptDashboardInvite(ctx context.Context, claim idempotency.Claim, token, password, repeat string) (string, error) {
	const op = "app.AcceptDashboardInvite"
	email, err := s.DashboardInvite(ctx, token)
	if err != nil {
		return "", err
	}
	if err := checkPassword(op, password, repeat); err != nil {
		return "", err
	}
	hash, err := hashPassword(password)
	if err != nil {
		return "", apperr.Wrap(op, err)
	}
	now := s.Clock.Now()
	var sess account.WebSession
	var id string
	err = s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		inv, err := q.DashboardInvite(ctx, WebSessionHash(token), now)
		if err != nil {
			return err
		}
		if err := q.UseDashboardInvite(ctx, inv.TokenHash, now); err != nil {
			return err
		}
		if err := q.SetDashboardUser(ctx, inv.Email, inv.AccountID, hash, now); err != nil {
			return err
		}
		// A new password (a reset: a new invitation for an existing user)
		// ends the user's other sessions, on every instance at once.
		if _, err := q.DeleteWebSessionsOf(ctx, account.WebDashboard, inv.Email, ""); err != nil {
			return err
		}
		id, sess = newWebSession(account.WebDashboard, email, inv.AccountID, now)
		sess.Credential = store.PasswordFingerprint(hash)
		return q.InsertWebSession(ctx, sess)
	})
	return id, err
}

// newWebSession makes a session id and the row that keeps its hash.
func newWebSession(kind, subject, accountID string, now time.Time) (string, account.WebSession) {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails (Go 1.24)
	id := base64.RawURLEncoding.EncodeToString(raw)
	return id, account.WebSession{IDHash: WebSessionHash(id), Kind: kind, Subject: subject, AccountID: accountID,
		CreatedAt: now, ExpiresAt: now.Add(WebSessionTTL)}
}

// DashboardUsers lists the dashboard users of accountID, oldest first.
func (s *Service) DashboardUsers(ctx context.Context, accountID string) ([]DashboardUser, error) {
	users, err := s.DB.Read().DashboardUsers(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]DashboardUser, len(users))
	for i, u := range users {
		out[i] = DashboardUser{Email: u.Email, CreatedAt: u.CreatedAt}
	}
	return out, nil
}

// DashboardUser is a user of the partner dashboard as its user page lists
// it.
type DashboardUser struct {
	Email     string
	CreatedAt time.Time
}

// RemoveDashboardUser is the operator's removal (console, `farebox
// accounts remove-user`): the user email of accountID is deleted with its
// open invitations, and every session of the user ends at once. The
// operator may remove an account's last user (and invite a new one).
func (s *Service) RemoveDashboardUser(ctx context.Context, claim idempotency.Claim, accountID, email string) error {
	return s.removeDashboardUser(ctx, claim, accountID, email, false)
}

// RemoveDashboardUserBy is a dashboard user's removal of a user of the same
// account (itself included: it is then signed out), never of another
// account's (NotFound) and never of the account's last user (Conflict), so
// the account cannot lock itself out of its dashboard.
func (s *Service) RemoveDashboardUserBy(ctx context.Context, claim idempotency.Claim, by WebSession, email string) error {
	if by.Kind != account.WebDashboard || by.AccountID == "" {
		return apperr.NotFoundf("app.RemoveDashboardUserBy", store.CodeDashboardUserNotFound)
	}
	return s.removeDashboardUser(ctx, claim, by.AccountID, email, true)
}

func (s *Service) removeDashboardUser(ctx context.Context, claim idempotency.Claim, accountID, email string, keepOne bool) error {
	e, err := normalEmail("app.RemoveDashboardUser", email)
	if err != nil {
		return err
	}
	return s.DB.WriteClaimed(ctx, claim, func(q Queries) error { return q.DeleteDashboardUser(ctx, accountID, e, keepOne) })
}

// DashboardSignIn checks a dashboard user's address and password and opens
// a session; wrong ones are Unauthenticated (the same for an unknown
// address, after the same work).
func (s *Service) DashboardSignIn(ctx context.Context, claim idempotency.Claim, email, password string) (string, error) {
	const op = "app.DashboardSignIn"
	fail := apperr.E(op, apperr.Unauthenticated, CodeSignInFailed, "e-mail address or password is wrong")
	e := strings.ToLower(strings.TrimSpace(email))
	if len(e) > 254 || len(password) > maxPasswordBytes {
		return "", fail
	}
	accountID, phc, err := s.DB.Read().DashboardUser(ctx, e)
	if err != nil && apperr.KindOf(err) != apperr.NotFound {
		return "", err
	}
	known := err == nil
	if !known {
		phc = dummyHash
	}
	h, err := parsePHC(phc)
	if err != nil {
		return "", apperr.Wrap(op, err)
	}
	if !h.matches(password) || !known {
		return "", fail
	}
	id, ws := newWebSession(account.WebDashboard, e, accountID, s.Clock.Now())
	ws.Credential = store.PasswordFingerprint(phc)
	return id, s.DB.WriteClaimed(ctx, claim, func(q Queries) error { return q.InsertWebSession(ctx, ws) })
}

// dummyHash is checked when the address is unknown, so the answer takes
// as long as for a known one.
var dummyHash, _ = hashPassword("farebox-no-such-user")
