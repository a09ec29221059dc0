package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// InsertOrder writes an order row (its coupons are inserted separately).
func (q Q) InsertOrder(ctx context.Context, o ticketing.Order) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO orders (`+orderCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, o.ID, o.AccountID, string(o.Environment), o.OptionalOrderReference, o.RestoreSecret, now(o.CreatedAt), o.TestClockID)
	return mapErr(err)
}

// InsertOrderRows writes the rows a new order writes: the order o with
// its coupons, its new subscriptions subs with their cycles, the billable
// items (a subscription's cycle item too) and the events of the change
// (its order.created; none in the bare-insert baseline of tools/loadgen).
// It says, as InsertEvents does, whether the account and environment has
// an enabled webhook endpoint (then the caller fans the events out), and
// refuses events of another account or environment. On PostgreSQL it is one
// statement and one round trip whatever the order holds: data-modifying
// CTEs insert the subscriptions, cycles, order, coupons, items and events
// (each multi-row) and the main query is the endpoint check; the foreign
// keys are checked at the statement's end, when all rows are there.
// SQLite, in the process, has no round trips to save and runs the single
// inserts (the events through InsertEvents' prepared statements).
func (q Q) InsertOrderRows(ctx context.Context, o ticketing.Order, subs []ticketing.Subscription, items []ticketing.BillableItem,
	evs []event.Event) (hooks bool, err error) {
	if err := orderEvents("store.InsertOrderRows", o, evs); err != nil {
		return false, err
	}
	if q.engine != Postgres {
		for _, s := range subs {
			if err := q.InsertSubscription(ctx, s); err != nil {
				return false, err
			}
			for _, c := range s.Cycles {
				if err := q.InsertCycle(ctx, c); err != nil {
					return false, err
				}
			}
		}
		if err := q.InsertOrder(ctx, o); err != nil {
			return false, err
		}
		for _, c := range o.Coupons {
			if err := q.InsertCoupon(ctx, c); err != nil {
				return false, err
			}
		}
		for _, it := range items {
			if err := q.InsertBillableItem(ctx, it); err != nil {
				return false, err
			}
		}
		return q.InsertEvents(ctx, evs)
	}
	query, args := orderRowsSQL(o, subs, items, evs, false, idempotency.Claim{})
	err = q.db.QueryRowContext(ctx, query, args...).Scan(&hooks)
	return hooks, mapErr(err)
}

// InsertOrderAlone writes what InsertOrderRows writes as one autocommitted
// statement, without BEGIN and COMMIT (two round trips and two statements
// PostgreSQL does not need for one atomic statement), when the account
// and environment has no enabled webhook endpoint; with one it writes
// nothing and says so (written false), and the caller writes the rows in
// a transaction with their deliveries (InsertOrderRows, then the fan-out).
// The endpoint check is the statement's own, so it answers as of the
// statement's snapshot, as InsertOrderRows' does: an endpoint another
// instance creates counts from the next change committed after it. On
// SQLite it writes nothing either (written false): in the process a
// transaction costs no round trips. Serialization failures and deadlocks
// are retried as Store.Write retries them. With a held Idempotency-Key
// claim the statement marks it committed, as WriteClaimed does.
func (s *Store) InsertOrderAlone(ctx context.Context, claim idempotency.Claim, o ticketing.Order, subs []ticketing.Subscription, items []ticketing.BillableItem,
	evs []event.Event) (written bool, err error) {
	if s.engine != Postgres {
		return false, nil
	}
	if err := orderEvents("store.InsertOrderAlone", o, evs); err != nil {
		return false, err
	}
	// What markClaim does inside WriteClaimed: the statement that commits
	// the request's effects marks its Idempotency-Key claim committed, so a
	// retry after a crash between the commit and the stored answer gets
	// idempotency_key_outcome_unknown, not a second order.
	query, args := orderRowsSQL(o, subs, items, evs, true, claim)
	ctx = settledCtx(ctx)
	err = s.retrying(ctx, func() error {
		return s.pgAutocommit(ctx, func(run context.Context, conn *sql.Conn) error {
			return conn.QueryRowContext(run, query, args...).Scan(&written)
		})
	})
	if err == nil && written {
		noteCommit(ctx)
	}
	return written, mapErr(err)
}

// orderEvents refuses events written with order o that belong to another
// account or environment (the endpoint check and the numbering are the
// order's).
func orderEvents(op string, o ticketing.Order, evs []event.Event) error {
	for _, e := range evs {
		if e.AccountID != o.AccountID || e.Environment != o.Environment {
			return errors.New(op + ": the events belong to the order's account and environment")
		}
	}
	return nil
}

// orderRowsSQL is PostgreSQL's statement of an order's rows: data-modifying
// CTEs for the subscriptions, cycles, order, coupons, items and events,
// and as the main query the endpoint check (hasEnabledEndpoint). With
// events, or gated, $1 and $2 are the order's account and environment.
// Gated, the CTE g holds a row only without an enabled endpoint, every row
// is inserted from it (so with an endpoint nothing is, and no event number
// is drawn) and the main query says whether g had its row. A gated row is
// its own INSERT … SELECT of its parameters (PostgreSQL types them from the
// target columns, which a VALUES list feeding a SELECT would not do); the
// events are typed in eventsCTE and join g. Gated with a claim, the CTE
// ik marks that Idempotency-Key claim committed when g has its row.
func orderRowsSQL(o ticketing.Order, subs []ticketing.Subscription, items []ticketing.BillableItem, evs []event.Event, gated bool,
	claim idempotency.Claim) (string, []any) {
	var args []any
	if len(evs) > 0 || gated {
		args = []any{o.AccountID, string(o.Environment)}
	}
	var b strings.Builder
	if gated {
		b.WriteString("WITH g AS (SELECT WHERE NOT " + hasEnabledEndpoint + ")")
		if claim.Held() {
			args = append(args, claim.Scope, claim.Key)
			b.WriteString(", ik AS (" + markClaimSQL(len(args)-1, len(args)) + " AND EXISTS (SELECT FROM g))")
		}
	}
	params := func(row ...any) {
		for i, v := range row {
			if i > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			fmt.Fprintf(&b, "$%d", len(args))
		}
	}
	next := func() { // the next CTE
		if b.Len() == 0 {
			b.WriteString("WITH ")
		} else {
			b.WriteString(", ")
		}
	}
	cte := func(name, table, cols string, rows int, row func(i int) []any) {
		if rows == 0 {
			return
		}
		if gated {
			for i := range rows {
				next()
				fmt.Fprintf(&b, "%s%d AS (INSERT INTO %s (%s) SELECT ", name, i, table, cols)
				params(row(i)...)
				b.WriteString(" FROM g)")
			}
			return
		}
		next()
		b.WriteString(name + " AS (INSERT INTO " + table + " (" + cols + ") VALUES ")
		for i := range rows {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(")
			params(row(i)...)
			b.WriteString(")")
		}
		b.WriteString(")")
	}
	var cycles []ticketing.Cycle
	for _, s := range subs {
		cycles = append(cycles, s.Cycles...)
	}
	cte("s", "subscriptions", subscriptionInsertCols, len(subs), func(i int) []any { return subscriptionArgs(subs[i]) })
	cte("cy", "subscription_cycles", cycleCols, len(cycles), func(i int) []any { return cycleArgs(cycles[i]) })
	cte("o", "orders", orderCols, 1, func(int) []any {
		return []any{o.ID, o.AccountID, string(o.Environment), o.OptionalOrderReference, o.RestoreSecret, now(o.CreatedAt), o.TestClockID}
	})
	cte("c", "coupons", couponCols, len(o.Coupons), func(i int) []any { return couponArgs(o.Coupons[i]) })
	cte("b", "billable_items", billableItemCols, len(items), func(i int) []any { return billableItemArgs(items[i]) })
	if len(evs) > 0 {
		b.WriteString(", ")
		args = eventsCTE(&b, args, evs, gated)
	}
	switch {
	case gated:
		b.WriteString(" SELECT EXISTS (SELECT FROM g)")
	case len(evs) > 0:
		b.WriteString(" SELECT " + hasEnabledEndpoint)
	default:
		b.WriteString(" SELECT false")
	}
	return b.String(), args
}

// Order returns an order of one account and environment with its coupons;
// another tenant's order is apperr.NotFound.
func (q Q) Order(ctx context.Context, accountID string, env account.Environment, id string) (ticketing.Order, error) {
	o, err := scanOrder(q.db.QueryRowContext(ctx, `SELECT `+orderCols+`
		FROM orders WHERE id = $1 AND account_id = $2 AND environment = $3`, id, accountID, string(env)).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return o, apperr.NotFoundf("store.Order", CodeOrderNotFound)
	}
	if err != nil {
		return o, mapErr(err)
	}
	o.Coupons, err = q.couponsWhere(ctx, `order_id = $1 ORDER BY position`, o.ID)
	return o, err
}

const orderCols = `id, account_id, environment, optional_order_reference, restore_secret, created_at, test_clock_id`

// scanOrder reads a row of orderCols (without the coupons).
func scanOrder(scan scanner) (o ticketing.Order, err error) {
	var e string
	var ref, clk sql.NullString
	if err = scan(&o.ID, &o.AccountID, &e, &ref, &o.RestoreSecret, &o.CreatedAt, &clk); err != nil {
		return o, err
	}
	o.Environment, o.OptionalOrderReference, o.CreatedAt, o.TestClockID = account.Environment(e), nullStr(ref), o.CreatedAt.UTC(), nullStr(clk)
	return o, nil
}

const couponCols = `id, order_id, position, account_id, environment, product_id, subscription_id, billable_item_id,
	original_coupon_id, restored_coupon_id, tariff_settings, activated, created_at, test_clock_id`

// InsertCoupon writes a coupon.
func (q Q) InsertCoupon(ctx context.Context, c ticketing.Coupon) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO coupons (`+couponCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, couponArgs(c)...)
	return mapErr(err)
}

// couponArgs are c's values in the order of couponCols.
func couponArgs(c ticketing.Coupon) []any {
	return []any{c.ID, c.OrderID, c.Position, c.AccountID, string(c.Environment), c.ProductID, c.SubscriptionID, c.BillableItemID,
		c.OriginalCouponID, c.RestoredCouponID, jsonText(c.TariffSettings), c.Activated, now(c.CreatedAt), c.TestClockID}
}

// Coupon returns a coupon by id (the id is the credential: no tenant filter).
func (q Q) Coupon(ctx context.Context, id string) (ticketing.Coupon, error) {
	cs, err := q.couponsWhere(ctx, `id = $1`, id)
	return single(cs, err, "store.Coupon", CodeCouponNotFound)
}

func (q Q) couponsWhere(ctx context.Context, where string, args ...any) ([]ticketing.Coupon, error) {
	return collect(ctx, q, `SELECT `+couponCols+` FROM coupons WHERE `+where, args, scanCoupon)
}

// scanCoupon reads a row of couponCols.
func scanCoupon(scan scanner) (c ticketing.Coupon, err error) {
	var env string
	var sub, bill, orig, rest, ts, clk sql.NullString
	if err = scan(&c.ID, &c.OrderID, &c.Position, &c.AccountID, &env, &c.ProductID, &sub, &bill, &orig, &rest, &ts, &c.Activated, &c.CreatedAt, &clk); err != nil {
		return c, err
	}
	c.TestClockID = nullStr(clk)
	c.Environment, c.CreatedAt = account.Environment(env), c.CreatedAt.UTC()
	c.SubscriptionID, c.BillableItemID, c.OriginalCouponID, c.RestoredCouponID = nullStr(sub), nullStr(bill), nullStr(orig), nullStr(rest)
	if ts.Valid {
		c.TariffSettings = json.RawMessage(ts.String)
	}
	return c, nil
}

// SetCouponTariffSettings stores validated tariff settings on a coupon.
func (q Q) SetCouponTariffSettings(ctx context.Context, id string, ts json.RawMessage) error {
	_, err := q.db.ExecContext(ctx, `UPDATE coupons SET tariff_settings = $1 WHERE id = $2`, jsonText(ts), id)
	return mapErr(err)
}

// MarkCouponActivated flips activated to true.
func (q Q) MarkCouponActivated(ctx context.Context, id string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE coupons SET activated = $1 WHERE id = $2`, true, id)
	return mapErr(err)
}

// SetCouponRestored links an old coupon to its replacement.
func (q Q) SetCouponRestored(ctx context.Context, id, restoredID string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE coupons SET restored_coupon_id = $1 WHERE id = $2`, restoredID, id)
	return mapErr(err)
}

// InsertBillableItem writes a billable item.
func (q Q) InsertBillableItem(ctx context.Context, b ticketing.BillableItem) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO billable_items (`+billableItemCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, billableItemArgs(b)...)
	return mapErr(err)
}

const billableItemCols = `id, account_id, environment, product_id, description, amount_cents,
	currency, vat_rate_bp, coupon_id, subscription_id, cycle_id, ordered_at, test_clock_id`

// billableItemArgs are b's values in the order of billableItemCols.
func billableItemArgs(b ticketing.BillableItem) []any {
	return []any{b.ID, b.AccountID, string(b.Environment), b.ProductID, b.Description, int64(b.AmountCents), b.Currency, b.VATRateBP,
		b.CouponID, b.SubscriptionID, b.CycleID, now(b.OrderedAt), b.TestClockID}
}

// CountRows counts a table's rows (tests check that failures write nothing).
func (q Q) CountRows(ctx context.Context, table string) (int, error) {
	switch table {
	case "orders", "coupons", "billable_items", "subscriptions", "subscription_cycles", "tickets",
		"customers", "billable_collections", "billable_item_assignments", "invoices", "invoice_claims", "invoice_files", "jobs", "revocations", "events", "web_sessions",
		"webhook_endpoints", "webhook_deliveries", "webhook_attempts", "invoice_deliveries", "inspection_records",
		"test_clocks", "blocklist_entries", "blocklist_sources":
	default:
		return 0, errors.New("store.CountRows: unknown table " + table)
	}
	var n int
	err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n)
	return n, mapErr(err)
}

func nullStr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time.UTC()
	return &v
}

func timePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return now(*t)
}

// optTime stores the zero time as NULL.
func optTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return now(t)
}

// jsonText stores JSON as text (SQLite would store a RawMessage as a BLOB).
func jsonText(j json.RawMessage) any {
	if len(j) == 0 {
		return nil
	}
	return string(j)
}

// LockCoupon serialises writers of one coupon (activations) on PostgreSQL:
// a no-op update takes the row lock until the transaction ends, so a
// concurrent activation reads the winner's committed state. SQLite has a
// single writer anyway.
func (q Q) LockCoupon(ctx context.Context, id string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE coupons SET id = id WHERE id = $1`, id)
	return mapErr(err)
}

// LockedCoupon is Coupon holding the coupon's row lock until the
// transaction ends (LockCoupon and the read in one round trip): on
// PostgreSQL SELECT … FOR NO KEY UPDATE, the lock LockCoupon's no-op
// update takes, without writing a new row version; after waiting for a
// concurrent holder it reads the row as that one committed it. SQLite,
// one writer at a time, reads.
func (q Q) LockedCoupon(ctx context.Context, id string) (ticketing.Coupon, error) {
	where := `id = $1`
	if q.engine == Postgres {
		where += ` FOR NO KEY UPDATE`
	}
	cs, err := q.couponsWhere(ctx, where, id)
	return single(cs, err, "store.LockedCoupon", CodeCouponNotFound)
}

// Orders is a page of an account's orders, newest first, each with its
// coupons. It reads one range of orders_list (orders_list_reference with
// a reference) and the page's coupons by order.
func (q Q) Orders(ctx context.Context, f ticketing.OrderFilter) (list.Page[ticketing.Order], error) {
	p, err := listPage(ctx, q, ordersSQL(f), f.Limit, scanOrder)
	if err != nil || len(p.Items) == 0 {
		return p, err
	}
	ids := make([]any, len(p.Items))
	marks := make([]string, len(p.Items))
	at := map[string]int{}
	for i, o := range p.Items {
		ids[i], marks[i], at[o.ID] = o.ID, fmt.Sprintf("$%d", i+1), i
	}
	cs, err := q.couponsWhere(ctx, `order_id IN (`+strings.Join(marks, ", ")+`) ORDER BY order_id, position`, ids...)
	if err != nil {
		return p, err
	}
	for _, c := range cs {
		p.Items[at[c.OrderID]].Coupons = append(p.Items[at[c.OrderID]].Coupons, c)
	}
	return p, nil
}

// ordersSQL is the statement of a page of orders.
func ordersSQL(f ticketing.OrderFilter) pageStmt {
	w := newListWhere(f.Query, "")
	if f.OptionalOrderReference != nil {
		w.add("optional_order_reference = $%d", *f.OptionalOrderReference)
	}
	return w.pageSQL(`SELECT `+orderCols+` FROM orders`, "", f.Query)
}

// Coupons is a page of an account's coupons, newest first (coupons of one
// order share its creation time: the id breaks the tie). A state filter
// reads its partial index (coupons_list_new, _activated, _restored), no
// state the whole coupons_list.
func (q Q) Coupons(ctx context.Context, f ticketing.CouponFilter) (list.Page[ticketing.Coupon], error) {
	return listPage(ctx, q, couponsSQL(f), f.Limit, scanCoupon)
}

// couponsSQL is the statement of a page of coupons; each state repeats its
// partial index's predicate word for word.
func couponsSQL(f ticketing.CouponFilter) pageStmt {
	return newListWhere(f.Query, "").inState(f.State).pageSQL(`SELECT `+couponCols+` FROM coupons`, "", f.Query)
}
