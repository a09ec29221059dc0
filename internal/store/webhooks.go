package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// AddDeliveries stores the deliveries of one change (in order) and says
// which are pending: the caller enqueues their first attempts. A chained
// delivery (not manual) whose object has an unfinished delivery to the
// same endpoint, stored before or earlier in ds, waits behind it, and
// that one is marked has_next. On PostgreSQL the unfinished deliveries of
// the objects are locked (FOR UPDATE), so an attempt that finishes one of
// them concurrently either sees has_next set (and starts the next) or is
// seen finished here; SQLite has one writer.
func (q Q) AddDeliveries(ctx context.Context, ds []webhook.Delivery) ([]bool, error) {
	type key struct{ ep, obj string }
	tails := map[key]string{} // unfinished tail of each chain: a delivery id
	var eps, objs []any
	seenEP, seenObj := map[string]bool{}, map[string]bool{}
	for _, d := range ds {
		if d.Manual {
			continue
		}
		if !seenEP[d.EndpointID] {
			seenEP[d.EndpointID] = true
			eps = append(eps, d.EndpointID)
		}
		if !seenObj[d.ObjectID] {
			seenObj[d.ObjectID] = true
			objs = append(objs, d.ObjectID)
		}
	}
	if len(eps) > 0 {
		query := `SELECT id, endpoint_id, object_id FROM webhook_deliveries WHERE endpoint_id IN (` + q.placeholders(1, len(eps)) +
			`) AND object_id IN (` + q.placeholders(len(eps)+1, len(objs)) + `) AND state IN ('pending', 'waiting') AND manual = FALSE ORDER BY n`
		if q.engine == Postgres {
			query += ` FOR UPDATE`
		}
		err := q.eachRow(ctx, query, append(eps, objs...), func(scan scanner) error {
			var id, ep, obj string
			if err := scan(&id, &ep, &obj); err != nil {
				return err
			}
			tails[key{ep, obj}] = id // ordered by n: the last one stays
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var marked []any // stored tails that get a successor
	pending := make([]bool, len(ds))
	inBatch := map[string]int{} // delivery id → index in ds
	for i := range ds {
		d := &ds[i]
		d.State, d.HasNext = webhook.StatePending, false
		inBatch[d.ID] = i
		if d.Manual {
			pending[i] = true
			continue
		}
		k := key{d.EndpointID, d.ObjectID}
		if tail, ok := tails[k]; ok {
			d.State = webhook.StateWaiting
			if j, ok := inBatch[tail]; ok {
				ds[j].HasNext = true
			} else {
				marked = append(marked, tail)
			}
		}
		tails[k] = d.ID
		pending[i] = d.State == webhook.StatePending
	}
	if len(marked) > 0 {
		if _, err := q.db.ExecContext(ctx, `UPDATE webhook_deliveries SET has_next = TRUE WHERE id IN (`+q.placeholders(1, len(marked))+`)`,
			marked...); err != nil {
			return nil, mapErr(err)
		}
	}
	values := func(d webhook.Delivery) []any {
		return []any{d.ID, d.EndpointID, d.AccountID, string(d.Environment), d.EventID, d.ObjectID, d.State, d.Manual, d.HasNext,
			now(d.CreatedAt)}
	}
	if q.engine == SQLite { // one prepared statement per delivery, as EnqueueJobs
		st := q.prepared(ctx, insertDeliverySQL)
		for _, d := range ds {
			if _, err := st.ExecContext(ctx, values(d)...); err != nil {
				return nil, mapErr(err)
			}
		}
		return pending, nil
	}
	rows := make([]string, len(ds))
	args := make([]any, 0, 10*len(ds))
	for i, d := range ds {
		rows[i] = "(" + q.placeholders(len(args)+1, 10) + ", 0)"
		args = append(args, values(d)...)
	}
	_, err := q.db.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, environment, event_id, object_id,
		state, manual, has_next, created_at, attempts) VALUES `+strings.Join(rows, ", "), args...)
	return pending, mapErr(err)
}

// insertDeliverySQL stores one delivery (AddDeliveries on SQLite).
const insertDeliverySQL = `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, environment, event_id, object_id,
	state, manual, has_next, created_at, attempts) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0)`

// placeholders is "$from, $from+1, …" for n parameters; on SQLite it is
// "?, ?, …" (from must then follow the statement's highest parameter so
// far, as it does in the statements built here): the driver (modernc)
// matches every named parameter against every argument by formatting the
// argument's position, quadratic in the number of parameters, which made
// binding the multi-row statements of a delivery batch cost more than
// running them. An anonymous ? takes the next position and binds by it.
func (q Q) placeholders(from, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		if q.engine == SQLite {
			b.WriteByte('?')
		} else {
			b.WriteString("$" + strconv.Itoa(from+i))
		}
	}
	return b.String()
}

// RecordAttempts logs attempts and moves their deliveries on, each only
// if its delivery is still pending at the attempt before (Attempt−1): a
// delivery another worker recorded already (a job run twice after a lost
// lease) is left alone and its attempt not logged. It returns, per
// record, whether it was applied and whether the delivery has a waiting
// successor (read in the same statement, so a successor stored
// concurrently is not missed). Two statements for the whole batch.
func (q Q) RecordAttempts(ctx context.Context, rs []webhook.AttemptRecord) (applied, hasNext []bool, err error) {
	if len(rs) == 0 {
		return nil, nil, nil
	}
	cast := func(t string) string {
		if q.engine == Postgres {
			return "::" + t
		}
		return ""
	}
	rows := make([]string, len(rs))
	args := make([]any, 0, 6*len(rs))
	for i, r := range rs {
		var fin any
		if r.State != webhook.StatePending {
			fin = now(r.Attempt.At)
		}
		n := len(args)
		rows[i] = fmt.Sprintf("($%d%s, $%d%s, $%d%s, $%d%s, $%d%s, $%d%s)", n+1, cast("text"), n+2, cast("text"), n+3, cast("integer"),
			n+4, cast("timestamptz"), n+5, cast("timestamptz"), n+6, cast("integer"))
		args = append(args, r.Attempt.DeliveryID, r.State, r.Attempt.Attempt, now(r.Attempt.At), fin, r.Attempt.Attempt-1)
	}
	ret := "RETURNING id, has_next"
	if q.engine == Postgres {
		ret = "RETURNING webhook_deliveries.id, webhook_deliveries.has_next"
	}
	done := map[string]bool{}
	next := map[string]bool{}
	if q.engine == SQLite {
		// One statement per attempt, prepared once (hotStatements):
		// SQLite's planner scans the table for an UPDATE … FROM a VALUES
		// list, and in-process statements cost no round trip.
		st := q.prepared(ctx, recordAttemptSQLite)
		for _, r := range rs {
			var fin any
			if r.State != webhook.StatePending {
				fin = now(r.Attempt.At)
			}
			var hn bool
			err := st.QueryRowContext(ctx, r.State, r.Attempt.Attempt, now(r.Attempt.At), fin, r.Attempt.DeliveryID,
				r.Attempt.Attempt-1).Scan(&hn)
			switch {
			case err == nil:
				done[r.Attempt.DeliveryID], next[r.Attempt.DeliveryID] = true, hn
			case !errors.Is(err, sql.ErrNoRows):
				return nil, nil, mapErr(err)
			}
		}
		return q.logAttempts(ctx, rs, done, next)
	}
	err = q.eachRow(ctx, `WITH v (id, state, attempts, at, fin, prev) AS (VALUES `+strings.Join(rows, ", ")+`)
		UPDATE webhook_deliveries SET state = v.state, attempts = v.attempts,
			first_attempt_at = COALESCE(webhook_deliveries.first_attempt_at, v.at), finished_at = v.fin
		FROM v WHERE webhook_deliveries.id = v.id AND webhook_deliveries.state = 'pending' AND webhook_deliveries.attempts = v.prev `+ret,
		args, func(scan scanner) error {
			var id string
			var hn bool
			if err := scan(&id, &hn); err != nil {
				return err
			}
			done[id], next[id] = true, hn
			return nil
		})
	if err != nil {
		return nil, nil, err
	}
	return q.logAttempts(ctx, rs, done, next)
}

// recordAttemptSQLite moves one delivery on (RecordAttempts on SQLite).
const recordAttemptSQLite = `UPDATE webhook_deliveries SET state = $1, attempts = $2,
	first_attempt_at = COALESCE(first_attempt_at, $3), finished_at = $4
	WHERE id = $5 AND state = 'pending' AND attempts = $6 RETURNING has_next`

// insertAttemptSQL logs one attempt; attemptValues are its arguments.
const insertAttemptSQL = `INSERT INTO webhook_attempts (id, endpoint_id, delivery_id, event_id, event_type, attempt, at,
	status_code, latency_ms, excerpt, error, succeeded, manual, next_attempt_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`

func attemptValues(a webhook.Attempt) []any {
	return []any{a.ID, a.EndpointID, a.DeliveryID, a.EventID, a.EventType, a.Attempt, now(a.At), a.StatusCode,
		a.Latency.Milliseconds(), a.Excerpt, a.Error, a.Succeeded, a.Manual, timePtr(a.NextAttemptAt)}
}

// logAttempts inserts the applied attempts of rs: in one statement on
// PostgreSQL (one round trip), one prepared statement per attempt on
// SQLite (no parse of a statement that differs with every batch size).
func (q Q) logAttempts(ctx context.Context, rs []webhook.AttemptRecord, done, next map[string]bool) (applied, hasNext []bool, err error) {
	applied, hasNext = make([]bool, len(rs)), make([]bool, len(rs))
	var ins []string
	var args []any
	var st stmtOrTx
	if q.engine == SQLite {
		st = q.prepared(ctx, insertAttemptSQL)
	}
	for i, r := range rs {
		a := r.Attempt
		applied[i], hasNext[i] = done[a.DeliveryID], next[a.DeliveryID]
		if !applied[i] {
			continue
		}
		if q.engine == SQLite {
			if _, err := st.ExecContext(ctx, attemptValues(a)...); err != nil {
				return nil, nil, mapErr(err)
			}
			continue
		}
		ins = append(ins, "("+q.placeholders(len(args)+1, 14)+")")
		args = append(args, attemptValues(a)...)
	}
	if len(ins) > 0 {
		_, err = q.db.ExecContext(ctx, `INSERT INTO webhook_attempts (id, endpoint_id, delivery_id, event_id, event_type, attempt, at,
			status_code, latency_ms, excerpt, error, succeeded, manual, next_attempt_at) VALUES `+strings.Join(ins, ", "), args...)
	}
	return applied, hasNext, mapErr(err)
}

// DeliveriesWork reads what the attempts of the deliveries ids need (a
// delivery worker's claim): the deliveries with their endpoints in one
// query, their events in a second. A delivery that is gone (its endpoint
// was deleted) is missing from the map. (The events are read apart: a
// join of a list of deliveries to events let PostgreSQL hash the whole
// events table when its statistics were young.)
func (q Q) DeliveriesWork(ctx context.Context, ids []string) (map[string]webhook.Work, error) {
	out := make(map[string]webhook.Work, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := anys(ids)
	var evIDs []any
	err := q.eachRow(ctx, `SELECT d.id, d.endpoint_id, d.account_id, d.environment, d.event_id, d.object_id, d.state,
		d.attempts, d.manual, d.created_at, d.first_attempt_at,
		w.id, w.account_id, w.environment, w.url, w.description, w.event_types, w.secret, w.old_secret, w.old_secret_expires,
		w.disabled_at, w.disabled_reason, w.failing_since, w.created_at, w.updated_at
		FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
		WHERE d.id IN (`+q.placeholders(1, len(ids))+`)`, args, func(scan scanner) error {
		var w webhook.Work
		d, ep := &w.Delivery, &w.Endpoint
		var env, epEnv, types string
		var first, oldExp, disabled, failing sql.NullTime
		var old, reason sql.NullString
		if err := scan(&d.ID, &d.EndpointID, &d.AccountID, &env, &d.EventID, &d.ObjectID, &d.State, &d.Attempts, &d.Manual,
			&d.CreatedAt, &first,
			&ep.ID, &ep.AccountID, &epEnv, &ep.URL, &ep.Description, &types, &ep.Secret, &old, &oldExp, &disabled, &reason, &failing,
			&ep.CreatedAt, &ep.UpdatedAt); err != nil {
			return err
		}
		if first.Valid { // the retry window runs from the first attempt
			d.CreatedAt = first.Time
		}
		d.Environment, d.CreatedAt = account.Environment(env), d.CreatedAt.UTC()
		ep.Environment = account.Environment(epEnv)
		if err := json.Unmarshal([]byte(types), &ep.EventTypes); err != nil {
			return err
		}
		ep.OldSecret, ep.DisabledReason = old.String, reason.String
		ep.OldSecretExpires, ep.DisabledAt, ep.FailingSince = nullTime(oldExp), nullTime(disabled), nullTime(failing)
		ep.CreatedAt, ep.UpdatedAt = ep.CreatedAt.UTC(), ep.UpdatedAt.UTC()
		out[d.ID] = w
		evIDs = append(evIDs, d.EventID)
		return nil
	})
	if err != nil || len(evIDs) == 0 {
		return out, err
	}
	// By the unique event id alone (a condition on the account as well let
	// PostgreSQL walk the account's primary key range instead); an event
	// of another account or environment is not the delivery's.
	evs, err := collect(ctx, q, `SELECT `+eventCols+` FROM events WHERE id IN (`+q.placeholders(1, len(evIDs))+`)`, evIDs, scanEvent)
	if err != nil {
		return out, err
	}
	byID := make(map[string]event.Event, len(evs))
	for _, e := range evs {
		byID[e.ID] = e
	}
	for id, w := range out {
		if e, ok := byID[w.Delivery.EventID]; ok && e.AccountID == w.Delivery.AccountID && e.Environment == w.Delivery.Environment {
			w.Event, w.EventFound = e, true
			out[id] = w
		}
	}
	return out, nil
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
