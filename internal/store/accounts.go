package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
)

// CreateAccount inserts an account.
func (q Q) CreateAccount(ctx context.Context, a account.Account) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)`,
		a.ID, a.Name, now(a.CreatedAt))
	return mapErr(err)
}

// Account returns one account or apperr.NotFound.
func (q Q) Account(ctx context.Context, id string) (account.Account, error) {
	var a account.Account
	err := q.db.QueryRowContext(ctx, `SELECT id, name, created_at FROM accounts WHERE id = $1`, id).
		Scan(&a.ID, &a.Name, &a.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return a, apperr.NotFoundf("store.Account", CodeAccountNotFound)
	}
	return a, mapErr(err)
}

// Accounts lists every account, oldest first.
func (q Q) Accounts(ctx context.Context) ([]account.Account, error) {
	return collect(ctx, q, `SELECT id, name, created_at FROM accounts ORDER BY created_at, id`, nil,
		func(scan scanner) (a account.Account, err error) {
			err = scan(&a.ID, &a.Name, &a.CreatedAt)
			return
		})
}

// CreateKey stores a key's hash.
func (q Q) CreateKey(ctx context.Context, k account.Key, hash string) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, prefix, hash, environment, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, k.ID, k.AccountID, k.Prefix, hash, string(k.Environment), now(k.CreatedAt))
	return mapErr(err)
}

// PrincipalByKeyHash resolves an unrevoked key, or apperr.Unauthenticated.
func (q Q) PrincipalByKeyHash(ctx context.Context, hash string) (account.Principal, error) {
	var p account.Principal
	var env string
	err := q.db.QueryRowContext(ctx, `SELECT k.id, k.environment, a.id, a.name
		FROM api_keys k JOIN accounts a ON a.id = k.account_id
		WHERE k.hash = $1 AND k.revoked_at IS NULL`, hash).Scan(&p.KeyID, &env, &p.AccountID, &p.AccountName)
	if errors.Is(err, sql.ErrNoRows) {
		return p, apperr.E("store.PrincipalByKeyHash", apperr.Unauthenticated, CodeInvalidAPIKey, "API key unknown or revoked")
	}
	p.Environment = account.Environment(env)
	return p, mapErr(err)
}

// Keys lists the keys of one account (all accounts when accountID is empty).
func (q Q) Keys(ctx context.Context, accountID string) ([]account.Key, error) {
	return q.keys(ctx, accountID, "")
}

// KeysOfEnvironment lists the keys of one account in env, newest first
// (the dashboard's key page).
func (q Q) KeysOfEnvironment(ctx context.Context, accountID string, env account.Environment) ([]account.Key, error) {
	return q.keys(ctx, accountID, env)
}

// keys lists the keys of accountID ("" for all) in env ("" for both): in
// creation order for every environment, newest first for one.
func (q Q) keys(ctx context.Context, accountID string, env account.Environment) ([]account.Key, error) {
	order := "created_at, id"
	if env != "" {
		order = "created_at DESC, id DESC"
	}
	return collect(ctx, q, `SELECT id, account_id, prefix, environment, created_at, revoked_at, last_used_at
		FROM api_keys WHERE ($1 = '' OR account_id = $1) AND ($2 = '' OR environment = $2) ORDER BY `+order, []any{accountID, string(env)},
		func(scan scanner) (k account.Key, err error) {
			var envName string
			var revoked, used sql.NullTime
			if err = scan(&k.ID, &k.AccountID, &k.Prefix, &envName, &k.CreatedAt, &revoked, &used); err != nil {
				return k, err
			}
			k.Environment = account.Environment(envName)
			if revoked.Valid {
				t := revoked.Time
				k.RevokedAt = &t
			}
			if used.Valid {
				t := used.Time
				k.LastUsedAt = &t
			}
			return k, nil
		})
}

// RevokeKeysByPrefix revokes the unrevoked keys whose visible prefix starts
// with prefix and returns how many it revoked.
func (q Q) RevokeKeysByPrefix(ctx context.Context, prefix string, at time.Time) (int64, error) {
	n, err := q.affected(ctx, `UPDATE api_keys SET revoked_at = $1
		WHERE revoked_at IS NULL AND substr(prefix, 1, length($2)) = $2`, now(at), prefix)
	return n, mapErr(err)
}
