package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// Lists (docs/lists.md). Every list of an account's records is newest
// first by (created_at, id); a cursor is a record of the same account and
// environment, and a page is the records strictly after (starting_after,
// older) or before (ending_before, newer) it in that order. Each list has
// an index (account_id, environment, [filter,] created_at, id), so a page
// is one range of it read in order, whatever the table's size.

// listTables are the tables a list reads (ListCursor takes a table name),
// each with the column of its time order.
var listTables = map[string]string{"orders": "created_at", "subscriptions": "created_at", "coupons": "created_at",
	"tickets": "created_at", "customers": "created_at", "invoices": "created_at", "test_clocks": "created_at",
	"billable_items": "ordered_at", "billable_collections": "created_at", "audit_log": "created_at"}

// ListCursor is the position of record id of table in the account's
// environment, false when there is no such record there (another
// account's or environment's record looks the same as none).
func (q Q) ListCursor(ctx context.Context, table, accountID string, env account.Environment, id string) (list.Cursor, bool, error) {
	at, ok := listTables[table]
	if !ok {
		return list.Cursor{}, false, fmt.Errorf("store.ListCursor: %q is no list", table)
	}
	c := list.Cursor{ID: id}
	err := q.db.QueryRowContext(ctx, `SELECT `+at+` FROM `+table+` WHERE id = $1 AND account_id = $2 AND environment = $3`,
		id, accountID, string(env)).Scan(&c.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return list.Cursor{}, false, nil
	}
	return c, err == nil, mapErr(err)
}

// listWhere builds the WHERE clause of a list: the account and
// environment first, then the conditions a list adds.
type listWhere struct {
	conds []string
	args  []any
	at    string // the column of the time order (created_at unless set)
}

func newListWhere(lq list.Query, alias string) *listWhere {
	w := &listWhere{at: "created_at"}
	w.add(alias+"account_id = $%d", lq.AccountID)
	w.add(alias+"environment = $%d", string(lq.Environment))
	return w
}

// add appends cond with v as its one parameter (cond has one %d).
func (w *listWhere) add(cond string, v any) {
	w.args = append(w.args, v)
	w.conds = append(w.conds, fmt.Sprintf(cond, len(w.args)))
}

// single is the row of a lookup by id (rows and err as the query returned
// them): apperr.NotFound with code when there is none.
func single[T any](rows []T, err error, op, code string) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	if len(rows) == 0 {
		return zero, apperr.NotFoundf(op, code)
	}
	return rows[0], nil
}

// inState adds the predicate of state's partial index, word for word so
// that both engines see the index holds every candidate; a state without
// one (no state) adds nothing.
func (w *listWhere) inState(state any) *listWhere {
	if p, ok := statePredicates[state]; ok {
		w.conds = append(w.conds, p)
	}
	return w
}

// statePredicates are the predicates of the lists' partial indexes by
// state: coupons_list_new, _activated, _restored; subscriptions' (cancelled
// and ended share one, split by the time); tickets_list_valid, _invalidated.
var statePredicates = map[any]string{
	ticketing.CouponNotActivated:    "NOT activated AND restored_coupon_id IS NULL",
	ticketing.CouponActivated:       "activated AND restored_coupon_id IS NULL",
	ticketing.CouponRestored:        "restored_coupon_id IS NOT NULL",
	ticketing.SubscriptionActive:    "restored_subscription_id IS NULL AND ends_at IS NULL",
	ticketing.SubscriptionCancelled: "restored_subscription_id IS NULL AND ends_at IS NOT NULL",
	ticketing.SubscriptionEnded:     "restored_subscription_id IS NULL AND ends_at IS NOT NULL",
	ticketing.SubscriptionRestored:  "restored_subscription_id IS NOT NULL",
	ticketing.TicketValid:           "invalidated_at IS NULL",
	ticketing.TicketInvalidated:     "invalidated_at IS NOT NULL",
}

// pageSQL completes a list's statement, which selects from table (alias)
// with w: the created range, the cursor, the order and the limit (one
// row more than the page, to know whether there is more). ascending says
// the rows come oldest first (ending_before).
func (w *listWhere) pageSQL(sel, alias string, lq list.Query) pageStmt {
	if lq.CreatedGTE != nil {
		w.add(alias+w.at+" >= $%d", now(*lq.CreatedGTE))
	}
	if lq.CreatedLT != nil {
		w.add(alias+w.at+" < $%d", now(*lq.CreatedLT))
	}
	order, cur, cmp := "DESC", lq.After, "<"
	if lq.Before != nil {
		order, cur, cmp = "ASC", lq.Before, ">"
	}
	if cur != nil {
		// The row comparison is a range of the index on both engines.
		w.args = append(w.args, now(cur.CreatedAt), cur.ID)
		w.conds = append(w.conds, fmt.Sprintf("(%s%s, %sid) %s ($%d, $%d)", alias, w.at, alias, cmp, len(w.args)-1, len(w.args)))
	}
	args := append(w.args, lq.Limit+1)
	query := fmt.Sprintf(`%s WHERE %s ORDER BY %s%s %s, %sid %s LIMIT $%d`,
		sel, strings.Join(w.conds, " AND "), alias, w.at, order, alias, order, len(args))
	return pageStmt{query: query, args: args, ascending: order == "ASC"}
}

// pageStmt is the statement of one page of a list, as pageSQL makes it.
type pageStmt struct {
	query     string
	args      []any
	ascending bool
}

// listPage runs a statement of pageSQL and reads its rows with scan.
func listPage[T any](ctx context.Context, q Q, s pageStmt, limit int, scan func(scanner) (T, error)) (list.Page[T], error) {
	items, err := collect(ctx, q, s.query, s.args, scan)
	if err != nil {
		return list.Page[T]{}, err
	}
	var p list.Page[T]
	p.Items, p.HasMore = trimPage(items, limit, s.ascending)
	return p, nil
}

// ExplainList is the engine's plan of the statement a list runs for
// filter f (a ticketing.OrderFilter, SubscriptionFilter, CouponFilter,
// TicketFilter, invoicing.CustomerFilter or InvoiceFilter):
// docs/lists.md shows them, TestListPlans checks them.
func (q Q) ExplainList(ctx context.Context, f any) ([]string, error) {
	for _, stmt := range listStmts {
		if s, ok := stmt(f); ok {
			return q.explain(ctx, s.query, s.args)
		}
	}
	return nil, fmt.Errorf("store.ExplainList: no list has filter %T", f)
}

// listStmts are the statements of the lists, each for its filter type.
var listStmts = []func(f any) (pageStmt, bool){
	stmtOf(ordersSQL), stmtOf(subscriptionsSQL), stmtOf(couponsSQL),
	stmtOf(ticketsSQL), stmtOf(customersSQL), stmtOf(invoicesSQL), stmtOf(auditSQL),
	stmtOf(billableItemsSQL), stmtOf(collectionsSQL), stmtOf(testClocksSQL),
}

// stmtOf is sql as a statement of any filter: false unless f is an F.
func stmtOf[F any](sql func(F) pageStmt) func(f any) (pageStmt, bool) {
	return func(f any) (pageStmt, bool) {
		g, ok := f.(F)
		if !ok {
			return pageStmt{}, false
		}
		return sql(g), true
	}
}

// explain is the plan of query on q's engine, one line per step
// (docs/lists.md shows them; tests check that lists read their index).
func (q Q) explain(ctx context.Context, query string, args []any) ([]string, error) {
	if q.engine == SQLite {
		return collect(ctx, q, "EXPLAIN QUERY PLAN "+query, args, func(scan scanner) (string, error) {
			var id, parent, unused int
			var detail string
			return detail, scan(&id, &parent, &unused, &detail)
		})
	}
	return collect(ctx, q, "EXPLAIN "+query, args, func(scan scanner) (line string, err error) { return line, scan(&line) })
}

// trimPage cuts a list read with one row more than limit to the page and
// says whether there was more; rows read oldest first (ending_before) are
// turned newest first. The page is never nil.
func trimPage[T any](rows []T, limit int, ascending bool) ([]T, bool) {
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	if ascending {
		slices.Reverse(rows)
	}
	if rows == nil {
		rows = []T{}
	}
	return rows, more
}
