package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/event"
)

// InsertEvents appends events to their account's stream, in order, and
// says whether the account and environment has an enabled webhook
// endpoint (then the caller reads them, Endpoints, and fans the events
// out; without one that is all an event costs besides its row). The
// events of one call share one account and environment (one change); app
// writes them as the last step of a change's transaction. On PostgreSQL
// the numbers come from the event_numbers sequence: no lock, so concurrent
// changes of one account never wait for each other, and two of them may
// commit in the other order than their numbers. Changes of one object hold
// its row lock, so its events are numbered in the order of the changes.
// SQLite has one writer at a time: the next number is the account's
// largest plus one (gap-free, in commit order; pruning keeps an account's
// newest event, so numbering never restarts).
//
// The endpoint check is part of the insert statement (one statement and,
// on PostgreSQL, one round trip for the events of a change), and it reads
// the table each time: an endpoint another instance created is seen by
// the next change committed after it, as a separate query inside the
// transaction would.
func (q Q) InsertEvents(ctx context.Context, evs []event.Event) (hooks bool, err error) {
	if len(evs) == 0 {
		return false, nil
	}
	acc, env := evs[0].AccountID, evs[0].Environment
	for _, e := range evs[1:] {
		if e.AccountID != acc || e.Environment != env {
			return false, errors.New("store.InsertEvents: events of one change belong to one account and environment")
		}
	}
	if q.engine == SQLite {
		// Prepared statements (hotStatements): parsing is most of what a
		// small insert costs SQLite, and a statement of its own for the
		// endpoint check would cost about as much as the insert (the
		// driver's per-statement work, not the index probe). So the first
		// event's insert happens only without an enabled endpoint: it
		// inserted its row, or there is an endpoint and it is inserted
		// again unconditionally. The single writer keeps the answer valid
		// for the rest of the change.
		for i, e := range evs {
			args := []any{acc, string(env), e.ID, string(e.Type), e.ObjectID, e.APIVersion, now(e.CreatedAt), string(e.Object)}
			if i == 0 {
				res, err := q.execPrepared(ctx, insertEventNoHooksSQLite, args...)
				if err != nil {
					return false, mapErr(err)
				}
				n, err := res.RowsAffected()
				if err != nil {
					return false, mapErr(err)
				}
				if hooks = n == 0; !hooks {
					continue
				}
			}
			if _, err := q.execPrepared(ctx, insertEventSQLite, args...); err != nil {
				return false, mapErr(err)
			}
		}
		return hooks, nil
	}
	var b strings.Builder
	b.WriteString("WITH ")
	args := eventsCTE(&b, []any{acc, string(env)}, evs, false)
	b.WriteString(" SELECT " + hasEnabledEndpoint)
	err = q.db.QueryRowContext(ctx, b.String(), args...).Scan(&hooks)
	return hooks, mapErr(err)
}

// hasEnabledEndpoint is the endpoint check of the event inserts ($1 the
// account, $2 the environment): an index probe of webhook_endpoints_account.
const hasEnabledEndpoint = `EXISTS (SELECT 1 FROM webhook_endpoints WHERE account_id = $1 AND environment = $2 AND disabled_at IS NULL)`

// insertEventSQLite appends one event on SQLite, numbered after the
// account's newest (the single writer makes that safe).
const insertEventSQLite = `INSERT INTO events (account_id, environment, seq, id, type, object_id, api_version, created_at, object)
	VALUES ($1, $2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE account_id = $1 AND environment = $2), $3, $4, $5, $6, $7, $8)`

// insertEventNoHooksSQLite is insertEventSQLite when the account and
// environment has no enabled endpoint; otherwise it inserts nothing.
const insertEventNoHooksSQLite = `INSERT INTO events (account_id, environment, seq, id, type, object_id, api_version, created_at, object)
	SELECT $1, $2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE account_id = $1 AND environment = $2), $3, $4, $5, $6, $7, $8
	WHERE NOT ` + hasEnabledEndpoint

// eventsCTE writes, for PostgreSQL, the data-modifying WITH item "e" that
// appends evs numbered in their order ($1 and $2 in args are their
// account and environment), and returns args with the events' values
// appended. A data-modifying WITH runs exactly once whether or not the
// main query reads it; InsertEvents and InsertOrderRows make the endpoint
// check their main query. gated, the rows join the CTE g of
// orderRowsSQL: none is inserted when g is empty. The text depends on the
// number of events and their first parameter only, so the driver's
// statement cache serves it like any other.
//
// Before it draws its numbers the statement takes the stream's lock
// (eventStreamLock) shared, until the transaction ends: changes of one
// account never wait for each other, and SettledEventSeq, which takes it
// exclusively, knows when every number drawn so far has committed or
// rolled back.
func eventsCTE(b *strings.Builder, args []any, evs []event.Event, gated bool) []any {
	b.WriteString(`el AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(` + eventStreamLock + `)),
	e AS (INSERT INTO events (account_id, environment, seq, id, type, object_id, api_version, created_at, object)
	SELECT $1, $2, nextval('event_numbers_n_seq'), v.id, v.type, v.object_id, v.api_version, v.created_at, v.object
	FROM el, (SELECT * FROM (VALUES `)
	for i, e := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		k := len(args)
		fmt.Fprintf(b, "(%d, $%d, $%d, $%d, $%d, $%d::timestamptz, $%d)", i+1, k+1, k+2, k+3, k+4, k+5, k+6)
		args = append(args, e.ID, string(e.Type), e.ObjectID, e.APIVersion, now(e.CreatedAt), string(e.Object))
	}
	b.WriteString(`) AS r (n, id, type, object_id, api_version, created_at, object) ORDER BY n) AS v`)
	if gated {
		b.WriteString(`, g`)
	}
	b.WriteString(`)`)
	return args
}

// eventStreamLock is the arguments of PostgreSQL's advisory lock of one
// account's and environment's event stream ($1 the account, $2 the
// environment): the class 0x65766e74 ("evnt", apart from the one-key
// locks of migrations and tests) and a hash of the stream.
const eventStreamLock = `1702260340, hashtext($1 || '/' || $2)`

// SettledEventSeq is the sequence number up to which an account's event
// stream is settled: every event numbered up to it has committed or
// rolled back, so a list that shows no event above it never skips one
// that commits later (docs/events.md, "Order and numbering"). On
// PostgreSQL numbers are drawn before their transaction commits and two
// changes may commit in the other order; taking the stream's lock
// exclusively waits for the changes drawing numbers now (they hold it
// shared until they end) and then reads the stream's largest number
// (a statement of its own, so its snapshot sees those commits). Later
// changes draw larger numbers. settled is false on SQLite, whose single
// writer numbers in commit order: there every committed event is settled.
func (s *Store) SettledEventSeq(ctx context.Context, accountID string, env account.Environment) (seq int64, settled bool, err error) {
	if s.engine != Postgres {
		return 0, false, nil
	}
	ctx = settledCtx(ctx)
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, mapErr(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+eventStreamLock+`)`, accountID, string(env)); err != nil {
		return 0, false, mapErr(err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events WHERE account_id = $1 AND environment = $2`,
		accountID, string(env)).Scan(&seq); err != nil {
		return 0, false, mapErr(err)
	}
	return seq, true, mapErr(tx.Commit())
}

// EventSeq is the sequence number of one of an account's events, false
// when the id is unknown in that account and environment (another
// account's event looks the same as none).
func (q Q) EventSeq(ctx context.Context, accountID string, env account.Environment, id string) (int64, bool, error) {
	var seq int64
	err := q.db.QueryRowContext(ctx, `SELECT seq FROM events WHERE id = $1 AND account_id = $2 AND environment = $3`,
		id, accountID, string(env)).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return seq, err == nil, mapErr(err)
}

const eventCols = `id, account_id, environment, seq, type, object_id, api_version, created_at, object`

// Events returns a page of an account's events, newest first. after and
// before are the sequence numbers of the cursor events (0: none; at most
// one is set): after pages towards older events, before towards newer.
// Both walk the unique (account_id, environment, seq) index (or, with a
// type filter, the (…, type, seq) one).
func (q Q) Events(ctx context.Context, f event.Query, after, before int64) (event.Page, error) {
	where := []string{"account_id = $1", "environment = $2"}
	args := []any{f.AccountID, string(f.Environment)}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Type != "" {
		add("type = $%d", string(f.Type))
	}
	if f.CreatedGTE != nil {
		add("created_at >= $%d", now(*f.CreatedGTE))
	}
	if f.CreatedLT != nil {
		add("created_at < $%d", now(*f.CreatedLT))
	}
	if f.Settled != nil {
		add("seq <= $%d", *f.Settled)
	}
	order := "DESC"
	switch {
	case after > 0:
		add("seq < $%d", after)
	case before > 0:
		add("seq > $%d", before)
		order = "ASC"
	}
	args = append(args, f.Limit+1)
	query := fmt.Sprintf(`SELECT %s FROM events WHERE %s ORDER BY seq %s LIMIT $%d`, eventCols, strings.Join(where, " AND "), order, len(args))
	evs, err := collect(ctx, q, query, args, scanEvent)
	if err != nil {
		return event.Page{}, err
	}
	var p event.Page
	p.Events, p.HasMore = trimPage(evs, f.Limit, order == "ASC")
	return p, nil
}

func scanEvent(scan scanner) (e event.Event, err error) {
	var env, typ, obj string
	if err = scan(&e.ID, &e.AccountID, &env, &e.Seq, &typ, &e.ObjectID, &e.APIVersion, &e.CreatedAt, &obj); err != nil {
		return e, err
	}
	e.Environment, e.Type, e.Object = account.Environment(env), event.Type(typ), []byte(obj)
	e.CreatedAt = e.CreatedAt.UTC()
	return e, nil
}

// EventsOf returns the events about one object, oldest first (tests and
// the operator's inspection).
func (q Q) EventsOf(ctx context.Context, objectID string) ([]event.Event, error) {
	return collect(ctx, q, `SELECT `+eventCols+` FROM events WHERE object_id = $1 ORDER BY account_id, environment, seq`,
		[]any{objectID}, scanEvent)
}

// EventStreams are the accounts and environments that may have events.
func (q Q) EventStreams(ctx context.Context) ([][2]string, error) {
	return collect(ctx, q, `SELECT a.id, e.environment FROM accounts a
		CROSS JOIN (SELECT 'live' AS environment UNION ALL SELECT 'test') e ORDER BY 1, 2`, nil,
		func(scan scanner) (s [2]string, err error) { return s, scan(&s[0], &s[1]) })
}

// PruneEvents deletes up to limit of the oldest events of one account and
// environment created before cutoff, never the newest (numbering goes on
// from it), and says how many it deleted. Numbers follow creation, so the
// old events are a prefix of the primary key: the statement walks it from
// the oldest and stops at the first recent event.
func (q Q) PruneEvents(ctx context.Context, accountID string, env account.Environment, cutoff time.Time, limit int) (int64, error) {
	n, err := q.affected(ctx, `DELETE FROM events WHERE account_id = $1 AND environment = $2
		AND seq < COALESCE(
			(SELECT seq FROM events WHERE account_id = $1 AND environment = $2 AND created_at >= $3 ORDER BY seq LIMIT 1),
			(SELECT MAX(seq) FROM events WHERE account_id = $1 AND environment = $2))
		AND seq < (SELECT MIN(seq) FROM events WHERE account_id = $1 AND environment = $2) + $4`,
		accountID, string(env), now(cutoff), limit)
	return n, mapErr(err)
}

// EndedSubscriptions are up to limit subscriptions whose end has passed at
// t and whose subscription.ended event is not written yet (restored
// subscriptions excluded: their replacement carries on). clockID "" reads
// the subscriptions of the service's time, another id those of that test
// clock (docs/test-clocks.md): each ends when its own clock passes ends_at.
func (q Q) EndedSubscriptions(ctx context.Context, clockID string, t time.Time, limit int) ([]string, error) {
	clk := "test_clock_id IS NULL AND $3 = ''"
	if clockID != "" {
		clk = "test_clock_id = $3"
	}
	return collect(ctx, q, `SELECT id FROM subscriptions WHERE `+clk+` AND ends_at <= $1 AND ended_event_at IS NULL
		AND restored_subscription_id IS NULL ORDER BY ends_at, id LIMIT $2`, []any{now(t), limit, clockID},
		func(scan scanner) (id string, err error) { return id, scan(&id) })
}

// MarkSubscriptionEnded records that subscription.ended was written; false
// when another instance did it first (the caller then writes nothing).
func (q Q) MarkSubscriptionEnded(ctx context.Context, id string, at time.Time) (bool, error) {
	n, err := q.affected(ctx, `UPDATE subscriptions SET ended_event_at = $1 WHERE id = $2 AND ended_event_at IS NULL`, now(at), id)
	return n == 1, mapErr(err)
}

// PutEventParts stores shared parts of event objects (hash → JSON), each
// once: a part already there is left as it is.
func (q Q) PutEventParts(ctx context.Context, parts map[string][]byte) error {
	for h, body := range parts {
		if _, err := q.db.ExecContext(ctx, `INSERT INTO event_parts (hash, body) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING`,
			h, string(body)); err != nil {
			return mapErr(err)
		}
	}
	return nil
}

// EventParts returns the stored parts among hashes.
func (q Q) EventParts(ctx context.Context, hashes []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, h := range hashes {
		var body string
		err := q.db.QueryRowContext(ctx, `SELECT body FROM event_parts WHERE hash = $1`, h).Scan(&body)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, mapErr(err)
		}
		out[h] = []byte(body)
	}
	return out, nil
}

// EventsAbout returns up to limit of the account's events of env about
// the given object ids, oldest first, without their objects (the
// dashboard's timelines; the events_object index, migration 00044).
func (q Q) EventsAbout(ctx context.Context, accountID string, env account.Environment, ids []string, limit int) ([]event.Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	in, args := idList([]any{accountID, string(env)}, ids)
	args = append(args, limit)
	return collect(ctx, q, `SELECT id, type, object_id, created_at FROM events WHERE account_id = $1 AND environment = $2
		AND object_id IN (`+in+fmt.Sprintf(`) ORDER BY seq LIMIT $%d`, len(args)), args,
		func(scan scanner) (e event.Event, err error) {
			var typ string
			err = scan(&e.ID, &typ, &e.ObjectID, &e.CreatedAt)
			e.AccountID, e.Environment, e.Type, e.CreatedAt = accountID, env, event.Type(typ), e.CreatedAt.UTC()
			return e, err
		})
}
