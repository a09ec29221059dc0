package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// InsertSubscription writes a subscription (its cycles separately).
func (q Q) InsertSubscription(ctx context.Context, s ticketing.Subscription) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO subscriptions (`+subscriptionInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		subscriptionArgs(s)...)
	return mapErr(err)
}

// subscriptionInsertCols are the columns a new subscription is written with
// (subscriptionArgs' order); the others start NULL.
const subscriptionInsertCols = `id, account_id, environment, product_id, original_subscription_id,
	restored_subscription_id, cancel_requested_at, ends_at, created_at, test_clock_id`

// subscriptionArgs are s's values in the order of subscriptionInsertCols.
func subscriptionArgs(s ticketing.Subscription) []any {
	return []any{s.ID, s.AccountID, string(s.Environment), s.ProductID, s.OriginalSubscriptionID, s.RestoredSubscriptionID,
		timePtr(s.CancelRequestedAt), timePtr(s.EndsAt), now(s.CreatedAt), s.TestClockID}
}

// Subscription returns a subscription with its cycles. accountID "" skips
// the tenant check (SDK paths reach it through a coupon they hold).
func (q Q) Subscription(ctx context.Context, accountID string, env account.Environment, id string) (ticketing.Subscription, error) {
	s, err := scanSubscription(q.db.QueryRowContext(ctx, `SELECT `+subscriptionCols+` FROM subscriptions
		WHERE id = $1 AND ($2 = '' OR (account_id = $2 AND environment = $3))`, id, accountID, string(env)).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return s, apperr.NotFoundf("store.Subscription", CodeSubscriptionNotFound)
	}
	if err != nil {
		return s, mapErr(err)
	}
	s.Cycles, err = q.Cycles(ctx, s.ID)
	return s, err
}

const subscriptionCols = `id, account_id, environment, product_id, original_subscription_id, restored_subscription_id,
	cancel_requested_at, ends_at, created_at, test_clock_id`

// scanSubscription reads a row of subscriptionCols (without the cycles).
func scanSubscription(scan scanner) (s ticketing.Subscription, err error) {
	var e string
	var orig, rest, clk sql.NullString
	var cancel, ends sql.NullTime
	if err = scan(&s.ID, &s.AccountID, &e, &s.ProductID, &orig, &rest, &cancel, &ends, &s.CreatedAt, &clk); err != nil {
		return s, err
	}
	s.TestClockID = nullStr(clk)
	s.Environment, s.CreatedAt = account.Environment(e), s.CreatedAt.UTC()
	s.OriginalSubscriptionID, s.RestoredSubscriptionID = nullStr(orig), nullStr(rest)
	s.CancelRequestedAt, s.EndsAt = nullTime(cancel), nullTime(ends)
	return s, nil
}

// Subscriptions is a page of an account's subscriptions, newest first,
// each with its cycles. A state filter reads its partial index
// (subscriptions_list_active, _ending or _restored: docs/lists.md), no
// state the whole subscriptions_list; an ends_at range may instead read
// subscriptions_ends and sort what it finds.
func (q Q) Subscriptions(ctx context.Context, f ticketing.SubscriptionFilter) (list.Page[ticketing.Subscription], error) {
	p, err := listPage(ctx, q, subscriptionsSQL(f), f.Limit, scanSubscription)
	for i := range p.Items {
		if err != nil {
			break
		}
		p.Items[i].Cycles, err = q.Cycles(ctx, p.Items[i].ID)
	}
	return p, err
}

// subscriptionsSQL is the statement of a page of subscriptions. The
// conditions of each state repeat its partial index's predicate word for
// word, so both engines see that the index holds every candidate;
// cancelled and ended compare ends_at with each subscription's time
// (timeOfRow: its test clock's, f.Now without one).
func subscriptionsSQL(f ticketing.SubscriptionFilter) pageStmt {
	w := newListWhere(f.Query, "").inState(f.State)
	switch f.State {
	case ticketing.SubscriptionCancelled:
		w.add("ends_at > "+timeOfRow("subscriptions", "$%d"), now(f.Now))
	case ticketing.SubscriptionEnded:
		w.add("ends_at <= "+timeOfRow("subscriptions", "$%d"), now(f.Now))
	}
	if f.EndsGTE != nil || f.EndsLT != nil {
		w.conds = append(w.conds, "ends_at IS NOT NULL") // subscriptions_ends' predicate
	}
	if f.EndsGTE != nil {
		w.add("ends_at >= $%d", now(*f.EndsGTE))
	}
	if f.EndsLT != nil {
		w.add("ends_at < $%d", now(*f.EndsLT))
	}
	return w.pageSQL(`SELECT `+subscriptionCols+` FROM subscriptions`, "", f.Query)
}

// LockSubscription serialises writers of one subscription on PostgreSQL
// (a no-op update takes the row lock; SQLite has a single writer anyway).
func (q Q) LockSubscription(ctx context.Context, id string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE subscriptions SET id = id WHERE id = $1`, id)
	return mapErr(err)
}

// UpdateSubscriptionEnd records a cancellation.
func (q Q) UpdateSubscriptionEnd(ctx context.Context, s ticketing.Subscription) error {
	_, err := q.db.ExecContext(ctx, `UPDATE subscriptions SET cancel_requested_at = $1, ends_at = $2 WHERE id = $3`,
		timePtr(s.CancelRequestedAt), timePtr(s.EndsAt), s.ID)
	return mapErr(err)
}

// SetSubscriptionRestored links an old subscription to its replacement.
func (q Q) SetSubscriptionRestored(ctx context.Context, id, restoredID string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE subscriptions SET restored_subscription_id = $1 WHERE id = $2`, restoredID, id)
	return mapErr(err)
}

const cycleCols = `id, subscription_id, product_id, valid_from, valid_until, ordered, coupon_activated, billable_item_id, ticket_id, created_at`

// InsertCycle writes a cycle.
func (q Q) InsertCycle(ctx context.Context, c ticketing.Cycle) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO subscription_cycles (`+cycleCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		cycleArgs(c)...)
	return mapErr(err)
}

// cycleArgs are c's values in the order of cycleCols.
func cycleArgs(c ticketing.Cycle) []any {
	return []any{c.ID, c.SubscriptionID, c.ProductID, optTime(c.ValidFrom), optTime(c.ValidUntil), c.Ordered, c.CouponActivated,
		c.BillableItemID, c.TicketID, now(c.CreatedAt)}
}

// UpdateCycle writes a cycle's mutable fields.
func (q Q) UpdateCycle(ctx context.Context, c ticketing.Cycle) error {
	_, err := q.db.ExecContext(ctx, `UPDATE subscription_cycles SET valid_from = $1, valid_until = $2, ordered = $3, coupon_activated = $4,
		billable_item_id = $5, ticket_id = $6 WHERE id = $7`,
		optTime(c.ValidFrom), optTime(c.ValidUntil), c.Ordered, c.CouponActivated, c.BillableItemID, c.TicketID, c.ID)
	return mapErr(err)
}

// Cycles returns a subscription's cycles in chronological order.
func (q Q) Cycles(ctx context.Context, subscriptionID string) ([]ticketing.Cycle, error) {
	return collect(ctx, q, `SELECT `+cycleCols+` FROM subscription_cycles WHERE subscription_id = $1
		ORDER BY CASE WHEN valid_from IS NULL THEN 1 ELSE 0 END, valid_from, created_at, id`, []any{subscriptionID},
		func(scan scanner) (c ticketing.Cycle, err error) {
			var bill, ticket sql.NullString
			var from, until sql.NullTime
			if err = scan(&c.ID, &c.SubscriptionID, &c.ProductID, &from, &until, &c.Ordered, &c.CouponActivated, &bill, &ticket, &c.CreatedAt); err != nil {
				return c, err
			}
			if from.Valid {
				c.ValidFrom, c.ValidUntil = from.Time.UTC(), until.Time.UTC()
			}
			c.BillableItemID, c.TicketID = nullStr(bill), nullStr(ticket)
			return c, nil
		})
}

// DeleteUnorderedCycle removes a cycle that can never be ordered (it starts
// after a cancelled subscription's end). Ordered cycles are never deleted.
func (q Q) DeleteUnorderedCycle(ctx context.Context, id string) error {
	_, err := q.db.ExecContext(ctx, `DELETE FROM subscription_cycles WHERE id = $1 AND ordered = $2`, id, false)
	return mapErr(err)
}
