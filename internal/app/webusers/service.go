// Package webusers is who may use the web pages and how they stay signed
// in (docs/web.md): the operator of the console (the credentials of
// --admin-password-file), the partner dashboard's users (invitations,
// passwords, sign-in, removal), and the cookie sessions of both with the
// one-time notice a session carries to its next page. It reaches the
// database only through Queries.
package webusers

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/records"
)

// Queries are the store methods of the web users and sessions (store.Q
// implements them; the wiring passes store.NewView[Queries]).
type Queries interface {
	Account(ctx context.Context, id string) (account.Account, error)
	DashboardInvite(ctx context.Context, tokenHash string, at time.Time) (account.DashboardInvite, error)
	DashboardUser(ctx context.Context, email string) (accountID, hash string, err error)
	DashboardUsers(ctx context.Context, accountID string) ([]account.DashboardUser, error)
	DeleteDashboardUser(ctx context.Context, accountID, email string, keepOne bool) error
	DeleteWebSession(ctx context.Context, idHash string) error
	DeleteWebSessionsOf(ctx context.Context, kind, subject, keep string) (int64, error)
	InsertDashboardInvite(ctx context.Context, inv account.DashboardInvite) error
	InsertWebSession(ctx context.Context, s account.WebSession) error
	InspectorByName(ctx context.Context, name string) (records.Inspector, error)
	SetInspectorPassword(ctx context.Context, nameOrID, phc string) (bool, error)
	SetDashboardUser(ctx context.Context, email, accountID, hash string, at time.Time) error
	SetWebSessionFlash(ctx context.Context, idHash, flash string, at time.Time) error
	TakeWebSessionFlash(ctx context.Context, idHash string) (string, error)
	UseDashboardInvite(ctx context.Context, tokenHash string, at time.Time) error
	WebSession(ctx context.Context, idHash string, at time.Time) (account.WebSession, error)
}

// DB is the database as the web users see it (store.View).
type DB = kit.DB[Queries]

// Service holds the use cases of the web users and sessions.
type Service struct {
	kit.Base[DB]
}

// New returns the web users of db; c is the service clock (nil: the
// system clock), ids the id prefix.
func New(db DB, c clock.Clock, ids ident.Prefix) *Service {
	return &Service{Base: kit.NewBase(db, c, ids)}
}
