package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/webhook"
)

// Webhook endpoints, deliveries and the delivery log (docs/webhooks.md).

const endpointCols = `id, account_id, environment, url, description, event_types, secret, old_secret, old_secret_expires,
	disabled_at, disabled_reason, failing_since, created_at, updated_at`

func scanEndpoint(scan scanner) (e webhook.Endpoint, err error) {
	var env, types string
	var old, reason sql.NullString
	var oldExp, disabled, failing sql.NullTime
	if err = scan(&e.ID, &e.AccountID, &env, &e.URL, &e.Description, &types, &e.Secret, &old, &oldExp,
		&disabled, &reason, &failing, &e.CreatedAt, &e.UpdatedAt); err != nil {
		return e, err
	}
	e.Environment = account.Environment(env)
	if err = json.Unmarshal([]byte(types), &e.EventTypes); err != nil {
		return e, err
	}
	e.OldSecret, e.DisabledReason = old.String, reason.String
	e.OldSecretExpires, e.DisabledAt, e.FailingSince = nullTime(oldExp), nullTime(disabled), nullTime(failing)
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return e, nil
}

func optStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// InsertEndpoint stores a new endpoint.
func (q Q) InsertEndpoint(ctx context.Context, e webhook.Endpoint) error {
	types, _ := json.Marshal(e.EventTypes)
	_, err := q.db.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+endpointCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		e.ID, e.AccountID, string(e.Environment), e.URL, e.Description, string(types), e.Secret, optStr(e.OldSecret),
		timePtr(e.OldSecretExpires), timePtr(e.DisabledAt), optStr(e.DisabledReason), timePtr(e.FailingSince),
		now(e.CreatedAt), now(e.UpdatedAt))
	return mapErr(err)
}

// UpdateEndpoint writes every changeable column of e.
func (q Q) UpdateEndpoint(ctx context.Context, e webhook.Endpoint) error {
	types, _ := json.Marshal(e.EventTypes)
	_, err := q.db.ExecContext(ctx, `UPDATE webhook_endpoints SET url = $1, description = $2, event_types = $3, secret = $4,
		old_secret = $5, old_secret_expires = $6, disabled_at = $7, disabled_reason = $8, failing_since = $9, updated_at = $10
		WHERE id = $11`,
		e.URL, e.Description, string(types), e.Secret, optStr(e.OldSecret), timePtr(e.OldSecretExpires), timePtr(e.DisabledAt),
		optStr(e.DisabledReason), timePtr(e.FailingSince), now(e.UpdatedAt), e.ID)
	return mapErr(err)
}

// Endpoint returns an endpoint of the account and environment; another
// account's endpoint is NotFound like an unknown one. lock takes its row
// lock on PostgreSQL (SQLite's writer is already exclusive).
func (q Q) Endpoint(ctx context.Context, accountID string, env account.Environment, id string, lock bool) (webhook.Endpoint, error) {
	query := `SELECT ` + endpointCols + ` FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND environment = $3`
	if lock && q.engine == Postgres {
		query += ` FOR UPDATE`
	}
	es, err := collect(ctx, q, query, []any{id, accountID, string(env)}, scanEndpoint)
	if err != nil {
		return webhook.Endpoint{}, err
	}
	if len(es) == 0 {
		return webhook.Endpoint{}, apperr.NotFoundf("store.Endpoint", CodeWebhookEndpointNotFound)
	}
	return es[0], nil
}

// EndpointByID returns an endpoint by id alone (the delivery job), false
// when it was deleted.
func (q Q) EndpointByID(ctx context.Context, id string) (webhook.Endpoint, bool, error) {
	es, err := collect(ctx, q, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE id = $1`, []any{id}, scanEndpoint)
	if err != nil || len(es) == 0 {
		return webhook.Endpoint{}, false, err
	}
	return es[0], true, nil
}

// Endpoints lists an account's endpoints of env, oldest first; enabled
// only the enabled ones (the fan-out of a change's events).
func (q Q) Endpoints(ctx context.Context, accountID string, env account.Environment, enabled bool) ([]webhook.Endpoint, error) {
	query := `SELECT ` + endpointCols + ` FROM webhook_endpoints WHERE account_id = $1 AND environment = $2`
	if enabled {
		query += ` AND disabled_at IS NULL`
	}
	return collect(ctx, q, query+` ORDER BY created_at, id`, []any{accountID, string(env)}, scanEndpoint)
}

// DeleteEndpoint deletes an endpoint with its deliveries and log; the
// jobs of its pending deliveries find nothing and end.
func (q Q) DeleteEndpoint(ctx context.Context, id string) error {
	for _, s := range []string{`DELETE FROM webhook_attempts WHERE endpoint_id = $1`,
		`DELETE FROM webhook_deliveries WHERE endpoint_id = $1`, `DELETE FROM webhook_endpoints WHERE id = $1`} {
		if _, err := q.db.ExecContext(ctx, s, id); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// AddDelivery stores a delivery. A chained delivery (not manual) whose
// object has an unfinished delivery to the same endpoint waits behind it;
// otherwise it is pending and the caller enqueues its job. On PostgreSQL
// the chain's tail is locked, so a completion that commits concurrently
// either sees this delivery (and starts it) or is seen finished here.
func (q Q) AddDelivery(ctx context.Context, d webhook.Delivery) (pending bool, err error) {
	d.State = webhook.StatePending
	if !d.Manual {
		tail := `SELECT n FROM webhook_deliveries WHERE endpoint_id = $1 AND object_id = $2 AND state IN ('pending', 'waiting') AND manual = $3
			ORDER BY n DESC LIMIT 1`
		if q.engine == Postgres {
			tail += ` FOR UPDATE`
		}
		var n int64
		err := q.db.QueryRowContext(ctx, tail, d.EndpointID, d.ObjectID, false).Scan(&n)
		switch {
		case err == nil:
			d.State = webhook.StateWaiting
		case !errors.Is(err, sql.ErrNoRows):
			return false, mapErr(err)
		}
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, environment, event_id, object_id,
		state, attempts, manual, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9)`,
		d.ID, d.EndpointID, d.AccountID, string(d.Environment), d.EventID, d.ObjectID, d.State, d.Manual, now(d.CreatedAt))
	return d.State == webhook.StatePending, mapErr(err)
}

// Delivery returns a delivery by id, false when it is gone (its endpoint
// was deleted).
func (q Q) Delivery(ctx context.Context, id string) (webhook.Delivery, bool, error) {
	var d webhook.Delivery
	var env string
	var first sql.NullTime
	err := q.db.QueryRowContext(ctx, `SELECT id, endpoint_id, account_id, environment, event_id, object_id, state, attempts, manual,
		created_at, first_attempt_at FROM webhook_deliveries WHERE id = $1`, id).
		Scan(&d.ID, &d.EndpointID, &d.AccountID, &env, &d.EventID, &d.ObjectID, &d.State, &d.Attempts, &d.Manual, &d.CreatedAt, &first)
	if errors.Is(err, sql.ErrNoRows) {
		return d, false, nil
	}
	if first.Valid { // the retry window runs from the first attempt
		d.CreatedAt = first.Time
	}
	d.Environment, d.CreatedAt = account.Environment(env), d.CreatedAt.UTC()
	return d, err == nil, mapErr(err)
}

// RecordAttempt logs attempt a of delivery d and moves d to state (pending
// for a retry, succeeded or failed), if d is still pending after
// a.Attempt−1 attempts: false when another worker recorded this attempt
// already (a job run twice after a lost lease), and nothing is written.
func (q Q) RecordAttempt(ctx context.Context, d webhook.Delivery, a webhook.Attempt, state string) (bool, error) {
	var fin any
	if state != webhook.StatePending {
		fin = now(a.At)
	}
	res, err := q.db.ExecContext(ctx, `UPDATE webhook_deliveries SET state = $1, attempts = $2,
		first_attempt_at = COALESCE(first_attempt_at, $3), finished_at = $4
		WHERE id = $5 AND state = 'pending' AND attempts = $6`, state, a.Attempt, now(a.At), fin, d.ID, a.Attempt-1)
	if err != nil {
		return false, mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, mapErr(err)
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO webhook_attempts (id, endpoint_id, delivery_id, event_id, event_type, attempt, at,
		status_code, latency_ms, excerpt, error, succeeded, manual, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		a.ID, a.EndpointID, a.DeliveryID, a.EventID, a.EventType, a.Attempt, now(a.At), a.StatusCode, a.Latency.Milliseconds(),
		a.Excerpt, a.Error, a.Succeeded, a.Manual, timePtr(a.NextAttemptAt))
	return true, mapErr(err)
}

// NextInChain makes the oldest waiting delivery of objectID to endpoint
// pending and returns its id, "" when none waits.
func (q Q) NextInChain(ctx context.Context, endpointID, objectID string) (string, error) {
	var id string
	err := q.db.QueryRowContext(ctx, `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND object_id = $2 AND state = 'waiting'
		ORDER BY n LIMIT 1`, endpointID, objectID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", mapErr(err)
	}
	_, err = q.db.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'pending' WHERE id = $1`, id)
	return id, mapErr(err)
}

// EndpointOutcome notes an attempt's outcome on its endpoint: a success
// clears failing_since, a failure sets it if unset. It returns the
// endpoint's failing_since after the change (nil after a success).
func (q Q) EndpointOutcome(ctx context.Context, id string, ok bool, at time.Time) (*time.Time, error) {
	if ok {
		_, err := q.db.ExecContext(ctx, `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, id)
		return nil, mapErr(err)
	}
	if _, err := q.db.ExecContext(ctx, `UPDATE webhook_endpoints SET failing_since = $1 WHERE id = $2 AND failing_since IS NULL`,
		now(at), id); err != nil {
		return nil, mapErr(err)
	}
	var since sql.NullTime
	err := q.db.QueryRowContext(ctx, `SELECT failing_since FROM webhook_endpoints WHERE id = $1`, id).Scan(&since)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return nullTime(since), mapErr(err)
}

// DisableEndpoint disables an enabled endpoint with reason.
func (q Q) DisableEndpoint(ctx context.Context, id string, at time.Time, reason string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE webhook_endpoints SET disabled_at = $1, disabled_reason = $2, updated_at = $1
		WHERE id = $3 AND disabled_at IS NULL`, now(at), reason, id)
	return mapErr(err)
}

const attemptCols = `n, id, endpoint_id, delivery_id, event_id, event_type, attempt, at, status_code, latency_ms, excerpt, error,
	succeeded, manual, next_attempt_at`

// Attempts is a page of an endpoint's delivery log, newest first: before
// (a log position, 0 for the newest) excluded, limit+1 rows so the caller
// can tell whether more follow.
func (q Q) Attempts(ctx context.Context, endpointID string, before int64, limit int) ([]webhook.Attempt, error) {
	if before <= 0 {
		before = 1 << 62
	}
	return collect(ctx, q, `SELECT `+attemptCols+` FROM webhook_attempts WHERE endpoint_id = $1 AND n < $2 ORDER BY n DESC LIMIT $3`,
		[]any{endpointID, before, limit + 1}, func(scan scanner) (a webhook.Attempt, err error) {
			var ms int64
			var next sql.NullTime
			if err = scan(&a.N, &a.ID, &a.EndpointID, &a.DeliveryID, &a.EventID, &a.EventType, &a.Attempt, &a.At, &a.StatusCode,
				&ms, &a.Excerpt, &a.Error, &a.Succeeded, &a.Manual, &next); err != nil {
				return a, err
			}
			a.At, a.Latency, a.NextAttemptAt = a.At.UTC(), time.Duration(ms)*time.Millisecond, nullTime(next)
			return a, nil
		})
}

// AttemptPosition is the log position of attempt id of endpoint, false
// when the endpoint has no such attempt.
func (q Q) AttemptPosition(ctx context.Context, endpointID, id string) (int64, bool, error) {
	var n int64
	err := q.db.QueryRowContext(ctx, `SELECT n FROM webhook_attempts WHERE id = $1 AND endpoint_id = $2`, id, endpointID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return n, err == nil, mapErr(err)
}

// Deliveries lists the deliveries of an event to an endpoint (tests and
// operations), oldest first.
func (q Q) Deliveries(ctx context.Context, endpointID string) ([]webhook.Delivery, error) {
	return collect(ctx, q, `SELECT id, endpoint_id, account_id, environment, event_id, object_id, state, attempts, manual, created_at
		FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY n`, []any{endpointID}, func(scan scanner) (d webhook.Delivery, err error) {
		var env string
		err = scan(&d.ID, &d.EndpointID, &d.AccountID, &env, &d.EventID, &d.ObjectID, &d.State, &d.Attempts, &d.Manual, &d.CreatedAt)
		d.Environment, d.CreatedAt = account.Environment(env), d.CreatedAt.UTC()
		return d, err
	})
}

// Event returns one event of an account and environment, false when it
// is unknown there (or pruned).
func (q Q) Event(ctx context.Context, accountID string, env account.Environment, id string) (event.Event, bool, error) {
	evs, err := collect(ctx, q, `SELECT `+eventCols+` FROM events WHERE id = $1 AND account_id = $2 AND environment = $3`,
		[]any{id, accountID, string(env)}, scanEvent)
	if err != nil || len(evs) == 0 {
		return event.Event{}, false, err
	}
	return evs[0], true, nil
}
