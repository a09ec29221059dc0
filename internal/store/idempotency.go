package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/idempotency"
)

// markClaim marks claim committed inside a write transaction (WriteClaimed);
// the zero claim marks nothing.
func (q Q) markClaim(ctx context.Context, claim idempotency.Claim) error {
	if !claim.Held() {
		return nil
	}
	_, err := q.db.ExecContext(ctx, markClaimStatement, claim.Scope, claim.Key)
	return err
}

// markClaimStatement is markClaim's statement, built once.
var markClaimStatement = markClaimSQL(1, 2)

// markClaimSQL marks a running claim committed, its scope and key being
// the parameters $scope and $key (markClaim; InsertOrderAlone's statement).
func markClaimSQL(scope, key int) string {
	return fmt.Sprintf(`UPDATE idempotency_keys SET committed = TRUE WHERE scope = $%d AND key = $%d AND status = 0`, scope, key)
}

// ClaimIdempotencyKey tries to become the request that executes (scope, key).
// It returns claimed=true when this caller must run the request: the key was
// new, or its earlier owner died (its lease expired without a response)
// before committing anything.
// Otherwise it returns the stored record.
func (q Q) ClaimIdempotencyKey(ctx context.Context, scope, key, hash string, at time.Time, lease time.Duration) (claimed bool, rec idempotency.Record, err error) {
	at = now(at)
	res, err := q.db.ExecContext(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, locked_until, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (scope, key) DO NOTHING`, scope, key, hash, at.Add(lease), at)
	if err != nil {
		return false, rec, mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, rec, nil
	}
	// Take over an abandoned claim: no response and the lease ran out.
	res, err = q.db.ExecContext(ctx, `UPDATE idempotency_keys SET locked_until = $1
		WHERE scope = $2 AND key = $3 AND status = 0 AND NOT committed AND request_hash = $4 AND locked_until < $5`,
		at.Add(lease), scope, key, hash, at)
	if err != nil {
		return false, rec, mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, rec, nil
	}
	err = q.db.QueryRowContext(ctx, `SELECT request_hash, status, content_type, body, locked_until, committed
		FROM idempotency_keys WHERE scope = $1 AND key = $2`, scope, key).
		Scan(&rec.RequestHash, &rec.Status, &rec.ContentType, &rec.Body, &rec.LockedUntil, &rec.Committed)
	if errors.Is(err, sql.ErrNoRows) {
		// Purged between the two statements: let the caller retry as new.
		return false, rec, mapErr(err)
	}
	return false, rec, mapErr(err)
}

// CompleteIdempotencyKey stores the response of a claimed key.
func (q Q) CompleteIdempotencyKey(ctx context.Context, scope, key string, status int, contentType string, body []byte) error {
	_, err := q.db.ExecContext(ctx, `UPDATE idempotency_keys SET status = $1, content_type = $2, body = $3
		WHERE scope = $4 AND key = $5`, status, contentType, body, scope, key)
	return mapErr(err)
}

// ReleaseIdempotencyKey forgets a claim whose request produced no response
// to keep, unless the request committed writes (then a retry must not run
// it again).
func (q Q) ReleaseIdempotencyKey(ctx context.Context, scope, key string) error {
	_, err := q.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status = 0 AND NOT committed`, scope, key)
	return mapErr(err)
}

// NewestIdempotencyKey is the greatest key of scope that has an answer
// ("" when none has): the newest day the scheduled records export wrote,
// its keys being days (YYYY-MM-DD sorts as it reads).
func (q Q) NewestIdempotencyKey(ctx context.Context, scope string) (string, error) {
	var key string
	err := q.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(key), '') FROM idempotency_keys WHERE scope = $1 AND status <> 0`, scope).Scan(&key)
	return key, mapErr(err)
}

// KeptScopes is the scope prefix of the claims PurgeIdempotencyKeys keeps:
// the scheduled exports' (scope "records-export:daily", one row a day),
// which are the record of the days written (records.Service.ExportDue).
const KeptScopes = "records-export:"

// PurgeIdempotencyKeys deletes keys created before cutoff, except the
// claims of KeptScopes.
func (q Q) PurgeIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := q.db.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1 AND scope NOT LIKE $2`, now(cutoff), KeptScopes+"%")
	if err != nil {
		return 0, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// AnswersNaming returns the completed Idempotency-Key answers of scope (an
// account's and environment's) and of keyless requests (path scopes)
// whose path or body names one of ids: the answers an erasure of those
// records must look at (docs/privacy.md). The table holds one TTL of
// answers (24 h) and erasures are rare: it is read without an index. The
// byte search in the body is the one place the engines spell differently.
func (q Q) AnswersNaming(ctx context.Context, scope string, ids []string) ([]idempotency.Answer, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{scope}
	var names []string
	for _, id := range ids {
		args = append(args, id)
		n := len(args)
		in := fmt.Sprintf("position(convert_to($%d, 'UTF8') IN body) > 0", n)
		if q.engine == SQLite {
			in = fmt.Sprintf("instr(body, CAST($%d AS BLOB)) > 0", n)
		}
		names = append(names, fmt.Sprintf("(scope LIKE 'path:%%' || $%d || '%%' OR %s)", n, in))
	}
	return collect(ctx, q, `SELECT scope, key, body FROM idempotency_keys WHERE status <> 0
		AND (scope = $1 OR scope LIKE 'path:%') AND (`+strings.Join(names, " OR ")+`)`, args,
		func(scan scanner) (a idempotency.Answer, err error) { return a, scan(&a.Scope, &a.Key, &a.Body) })
}

// ErasedAnswer is the content_type of an answer removed by an erasure
// (EraseAnswer).
const ErasedAnswer = "erased"

// EraseAnswer removes a completed answer and keeps the key as a request
// that was carried out and whose answer is gone: committed, no status,
// content_type ErasedAnswer, lease over. A retry with the key is then
// refused (idempotency_key_outcome_unknown), never run again: running it
// again could store the erased data anew.
func (q Q) EraseAnswer(ctx context.Context, scope, key string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE idempotency_keys SET status = 0, committed = TRUE, content_type = $3, body = NULL,
		locked_until = created_at WHERE scope = $1 AND key = $2`, scope, key, ErasedAnswer)
	return mapErr(err)
}
