package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/usage"
)

// The partner dashboard's users, their invitations, the keys' last use and
// the usage counters of one environment (docs/web.md "Partner dashboard").

// InsertDashboardInvite stores an invitation.
func (q Q) InsertDashboardInvite(ctx context.Context, inv account.DashboardInvite) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO dashboard_invites (token_hash, account_id, email, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, inv.TokenHash, inv.AccountID, inv.Email, now(inv.CreatedAt), now(inv.ExpiresAt))
	return mapErr(err)
}

// DashboardInvite returns the unused, unexpired invitation with the token
// hash; NotFound otherwise.
func (q Q) DashboardInvite(ctx context.Context, tokenHash string, at time.Time) (account.DashboardInvite, error) {
	var inv account.DashboardInvite
	err := q.db.QueryRowContext(ctx, `SELECT token_hash, account_id, email, created_at, expires_at FROM dashboard_invites
		WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2`, tokenHash, now(at)).
		Scan(&inv.TokenHash, &inv.AccountID, &inv.Email, &inv.CreatedAt, &inv.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return inv, apperr.E("store.DashboardInvite", apperr.NotFound, CodeInviteNotFound, "the sign-in link is unknown, used or expired")
	}
	return inv, mapErr(err)
}

// UseDashboardInvite marks the invitation used; NotFound when another
// request used it first (the link is good once).
func (q Q) UseDashboardInvite(ctx context.Context, tokenHash string, at time.Time) error {
	res, err := q.db.ExecContext(ctx, `UPDATE dashboard_invites SET used_at = $2
		WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2`, tokenHash, now(at))
	if err != nil {
		return mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return apperr.E("store.UseDashboardInvite", apperr.NotFound, CodeInviteNotFound, "the sign-in link is unknown, used or expired")
	}
	return nil
}

// SetDashboardUser creates the user email of accountID with the password
// hash, or sets the password of the existing user of that account; a user
// of another account with the address is a Conflict.
func (q Q) SetDashboardUser(ctx context.Context, email, accountID, hash string, at time.Time) error {
	res, err := q.db.ExecContext(ctx, `INSERT INTO dashboard_users (email, account_id, password_hash, created_at)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (email) DO UPDATE SET password_hash = excluded.password_hash
		WHERE dashboard_users.account_id = excluded.account_id`, email, accountID, hash, now(at))
	if err != nil {
		return mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return apperr.E("store.SetDashboardUser", apperr.Conflict, CodeDashboardUserTaken, "this e-mail address belongs to a user of another account")
	}
	return nil
}

// DashboardUser returns the account and password hash of the user email;
// NotFound when there is none.
func (q Q) DashboardUser(ctx context.Context, email string) (accountID, hash string, err error) {
	err = q.db.QueryRowContext(ctx, `SELECT account_id, password_hash FROM dashboard_users WHERE email = $1`, email).Scan(&accountID, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", apperr.NotFoundf("store.DashboardUser", CodeDashboardUserNotFound)
	}
	return accountID, hash, mapErr(err)
}

// DashboardUsers lists the dashboard users of accountID, oldest first.
func (q Q) DashboardUsers(ctx context.Context, accountID string) ([]account.DashboardUser, error) {
	return collect(ctx, q, `SELECT email, account_id, created_at FROM dashboard_users WHERE account_id = $1 ORDER BY created_at, email`,
		[]any{accountID}, func(scan scanner) (u account.DashboardUser, err error) {
			err = scan(&u.Email, &u.AccountID, &u.CreatedAt)
			return u, err
		})
}

// DeleteDashboardUser removes the user email of accountID with the
// account's open invitations for that address (an unused link must not
// bring the user back) and every session of the user; NotFound when the
// account has no such user. When keepOne, the account's last user is not
// removed (Conflict): on PostgreSQL the account's row is locked first, so
// two users removing each other at once cannot both succeed.
func (q Q) DeleteDashboardUser(ctx context.Context, accountID, email string, keepOne bool) error {
	const op = "store.DeleteDashboardUser"
	if q.engine == Postgres {
		if _, err := q.db.ExecContext(ctx, `SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, accountID); err != nil {
			return mapErr(err)
		}
	}
	var n int
	if err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM dashboard_users WHERE account_id = $1`, accountID).Scan(&n); err != nil {
		return mapErr(err)
	}
	res, err := q.db.ExecContext(ctx, `DELETE FROM dashboard_users WHERE email = $1 AND account_id = $2`, email, accountID)
	if err != nil {
		return mapErr(err)
	}
	if d, err := res.RowsAffected(); err != nil || d != 1 {
		return apperr.E(op, apperr.NotFound, CodeDashboardUserNotFound, "this account has no dashboard user with this e-mail address")
	}
	if keepOne && n <= 1 {
		return apperr.E(op, apperr.Conflict, CodeLastDashboardUser, "the account's last dashboard user cannot be removed from the dashboard; the operator can remove it")
	}
	if _, err := q.db.ExecContext(ctx, `DELETE FROM dashboard_invites WHERE account_id = $1 AND email = $2 AND used_at IS NULL`, accountID, email); err != nil {
		return mapErr(err)
	}
	_, err = q.DeleteWebSessionsOf(ctx, "dashboard", email, "")
	return err
}

// TouchKey records that the key id authenticated a request at at.
func (q Q) TouchKey(ctx context.Context, id string, at time.Time) error {
	_, err := q.db.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE id = $2`, now(at), id)
	return mapErr(err)
}

// RevokeAccountKey revokes the active key id of accountID in env;
// NotFound when the account has no such active key.
func (q Q) RevokeAccountKey(ctx context.Context, accountID string, env account.Environment, id string, at time.Time) error {
	res, err := q.db.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $1
		WHERE id = $2 AND account_id = $3 AND environment = $4 AND revoked_at IS NULL`, now(at), id, accountID, string(env))
	if err != nil {
		return mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return apperr.E("store.RevokeAccountKey", apperr.NotFound, CodeKeyNotFound, "no active key of this account and environment has this id")
	}
	return nil
}

// UsageOfEnvironment reads the per-day counters (usage_daily and the rows
// staged in usage_pending, the ledger's roll-up: one row per day and
// endpoint, never the ledger itself) of one account and environment for
// days in [fromDay, toDay].
func (q Q) UsageOfEnvironment(ctx context.Context, accountID string, env account.Environment, fromDay, toDay string) ([]usage.Row, error) {
	return collect(ctx, q, `SELECT day, endpoint, SUM(counted), SUM(uncounted), SUM(refused) FROM (`+usageCountsSQL+`) u
		WHERE account_id = $1 AND environment = $2 AND day >= $3 AND day <= $4 GROUP BY day, endpoint ORDER BY day, endpoint`,
		[]any{accountID, string(env), fromDay, toDay}, func(scan scanner) (r usage.Row, err error) {
			err = scan(&r.Day, &r.Endpoint, &r.Counted, &r.Uncounted, &r.Refused)
			return r, err
		})
}
