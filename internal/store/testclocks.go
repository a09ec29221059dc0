package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// Test clocks (docs/test-clocks.md).

const testClockCols = `id, account_id, environment, name, frozen_time, status, created_at`

func scanTestClock(scan scanner) (c ticketing.TestClock, err error) {
	var env string
	var name sql.NullString
	if err = scan(&c.ID, &c.AccountID, &env, &name, &c.FrozenTime, &c.Status, &c.CreatedAt); err != nil {
		return c, err
	}
	c.Environment, c.Name = account.Environment(env), nullStr(name)
	c.FrozenTime, c.CreatedAt = c.FrozenTime.UTC(), c.CreatedAt.UTC()
	return c, nil
}

// InsertTestClock writes a new clock.
func (q Q) InsertTestClock(ctx context.Context, c ticketing.TestClock) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO test_clocks (`+testClockCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.ID, c.AccountID, string(c.Environment), c.Name, now(c.FrozenTime), c.Status, now(c.CreatedAt))
	return mapErr(err)
}

// TestClock is a clock of one account and environment that is not
// deleted; any other is apperr.NotFound.
func (q Q) TestClock(ctx context.Context, accountID string, env account.Environment, id string) (ticketing.TestClock, error) {
	cs, err := collect(ctx, q, `SELECT `+testClockCols+` FROM test_clocks
		WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL`, []any{id, accountID, string(env)}, scanTestClock)
	return single(cs, err, "store.TestClock", CodeTestClockNotFound)
}

// TestClockTime is the time clock id stands at, deleted or not: the one
// read behind the time of a clock-bound object.
func (q Q) TestClockTime(ctx context.Context, id string) (time.Time, error) {
	var t time.Time
	err := q.db.QueryRowContext(ctx, `SELECT frozen_time FROM test_clocks WHERE id = $1`, id).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return t, apperr.NotFoundf("store.TestClockTime", CodeTestClockNotFound)
	}
	return t.UTC(), mapErr(err)
}

// timeOfRow is TestClockTime in SQL, for the rows of table (which has a
// test_clock_id column) in a statement: the frozen time of the row's
// clock, or serviceNow (a placeholder holding the service's time) for a
// row without one. It is app.timeOf for a filter over many rows.
func timeOfRow(table, serviceNow string) string {
	return `COALESCE((SELECT frozen_time FROM test_clocks WHERE test_clocks.id = ` + table + `.test_clock_id), ` + serviceNow + `)`
}

// LockTestClock serialises advances and deletes of one clock on
// PostgreSQL (SQLite has a single writer anyway).
func (q Q) LockTestClock(ctx context.Context, id string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE test_clocks SET id = id WHERE id = $1`, id)
	return mapErr(err)
}

// SetTestClock moves a clock to frozen and sets its status.
func (q Q) SetTestClock(ctx context.Context, id string, frozen time.Time, status string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE test_clocks SET frozen_time = $1, status = $2 WHERE id = $3`, now(frozen), status, id)
	return mapErr(err)
}

// SetTestClockStatus sets a clock's status only.
func (q Q) SetTestClockStatus(ctx context.Context, id, status string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE test_clocks SET status = $1 WHERE id = $2`, status, id)
	return mapErr(err)
}

// DeleteTestClock marks a clock deleted; its row stays for the time of
// the objects created on it.
func (q Q) DeleteTestClock(ctx context.Context, id string, at time.Time) error {
	_, err := q.db.ExecContext(ctx, `UPDATE test_clocks SET deleted_at = $1 WHERE id = $2`, now(at), id)
	return mapErr(err)
}

// TestClocks is a page of an account's clocks that are not deleted,
// newest first (one range of test_clocks_list).
func (q Q) TestClocks(ctx context.Context, f ticketing.TestClockFilter) (list.Page[ticketing.TestClock], error) {
	return listPage(ctx, q, testClocksSQL(f), f.Limit, scanTestClock)
}

func testClocksSQL(f ticketing.TestClockFilter) pageStmt {
	w := newListWhere(f.Query, "")
	w.conds = append(w.conds, "deleted_at IS NULL") // test_clocks_list's predicate
	return w.pageSQL(`SELECT `+testClockCols+` FROM test_clocks`, "", f.Query)
}

// ClockTicketsStarted lists the tickets of the coupons on clock clockID
// whose validity starts after from and not after to (the cycles an
// advance of the clock from from to to reaches), by id.
func (q Q) ClockTicketsStarted(ctx context.Context, clockID string, from, to time.Time) ([]string, error) {
	return collect(ctx, q, `SELECT t.id FROM coupons c JOIN tickets t ON t.coupon_id = c.id
		WHERE c.test_clock_id = $1 AND t.valid_from > $2 AND t.valid_from <= $3 ORDER BY t.id`, []any{clockID, now(from), now(to)},
		func(scan scanner) (id string, err error) { return id, scan(&id) })
}
