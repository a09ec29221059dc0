package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clearing"
	"github.com/farebox/farebox/internal/money"
)

// ClearingSources is a page of at most limit ticket months (docs/clearing.md)
// of the live environment: the billable items of products whose cycle
// starts in [from, to), after the position after, in order of start and
// item id. Each comes with the tariff settings of the newest ticket of any
// copy of its cycle (a restore copies cycles with their item), of the
// newest coupon of those cycles' subscriptions, and what the reports said
// of it last. Two statements per page: the page itself, then the tickets
// and coupons of all its ticket months at once (clearingTariffs).
func (q Q) ClearingSources(ctx context.Context, products []string, from, to time.Time, after clearing.After, limit int) ([]clearing.Source, error) {
	if len(products) == 0 {
		return nil, nil
	}
	if after.BillableItemID == "" { // the first page
		if err := q.refreshClearingStatistics(ctx); err != nil {
			return nil, err
		}
	}
	// The position is the keyset's only lower bound: with a separate
	// valid_from >= from SQLite seeks by valid_from alone and, every
	// ticket month of a month starting at the same instant, scanned the
	// whole month up to the position for each page (quadratic; EXPLAIN
	// QUERY PLAN: valid_from>? instead of (valid_from,billable_item_id)>(?,?)).
	pos := after
	if pos.ValidFrom.Before(from) {
		pos = clearing.After{ValidFrom: from} // ("" is before every id)
	}
	args := []any{now(to), now(pos.ValidFrom), pos.BillableItemID, string(account.Live), limit}
	marks := make([]string, len(products))
	for i, p := range products {
		args = append(args, p)
		marks[i] = fmt.Sprintf("$%d", len(args))
	}
	joins := clearingJoinsSQLite
	if q.engine == Postgres {
		joins = clearingJoinsPostgres
	}
	page, err := collect(ctx, q, `SELECT b.id, b.account_id, b.product_id, b.description, b.amount_cents, b.vat_rate_bp, b.currency, c.valid_from, c.valid_until,
		ci.postal_code, ci.state, ci.gross_cents, ci.month
		FROM subscription_cycles c `+joins+`
		WHERE (c.valid_from, c.billable_item_id) > ($2, $3) AND c.valid_from < $1
		AND b.cycle_id = c.id AND b.environment = $4 AND b.product_id IN (`+strings.Join(marks, ", ")+`)
		ORDER BY c.valid_from, c.billable_item_id LIMIT $5`, args, scanClearingSource)
	if err != nil || len(page) == 0 {
		return page, err
	}
	return page, q.clearingTariffs(ctx, page)
}

// How ClearingSources reaches, from each cycle c of the period (read in
// order from subscription_cycles_clearing), its billable item b and what
// the reports said of it (ci). The plan must not depend on the
// statistics: a report reads what a month of sales just wrote, before
// autovacuum has looked at it, and on PostgreSQL stale statistics made
// the planner scan all clearing_items (or all coupons, or all tickets into
// a hash) once per ticket month (docs/clearing.md "Measured"). On
// PostgreSQL both are therefore LATERAL subqueries with a LIMIT, which the
// planner does not flatten into a join: each runs once per row through its
// primary key. SQLite plans without statistics (farebox gathers none: no
// ANALYZE) and runs the plain joins through the same keys (EXPLAIN QUERY
// PLAN: a SEARCH by index for each).
const (
	clearingJoinsPostgres = `CROSS JOIN LATERAL (SELECT b.id, b.account_id, b.product_id, b.description, b.amount_cents, b.vat_rate_bp,
			b.currency, b.cycle_id, b.environment FROM billable_items b WHERE b.id = c.billable_item_id LIMIT 1) b
		LEFT JOIN LATERAL (SELECT ci.postal_code, ci.state, ci.gross_cents, ci.month FROM clearing_items ci
			WHERE ci.billable_item_id = b.id LIMIT 1) ci ON true`
	clearingJoinsSQLite = `JOIN billable_items b ON b.id = c.billable_item_id
		LEFT JOIN clearing_items ci ON ci.billable_item_id = b.id`
)

// clearingTariffs sets the tariff settings of the newest ticket and the
// newest coupon of each ticket month of page, in one statement for the
// whole page keyed by its billable item ids, instead of two correlated
// lookups per ticket month (most of a report's reading time: the
// subqueries' sorts, one pair per row). The statement reads every cycle
// cc of the page's items (a restore's copies share the item), the ticket
// each points to and the coupons of each one's subscription
// (coupons_subscription_newest, migration 00045), newest first; the first
// row of each kind and item is its newest, in the engine's own order of
// (created_at, id) as before, and a newest whose settings are erased
// (NULL) stays NULL.
func (q Q) clearingTariffs(ctx context.Context, page []clearing.Source) error {
	at := make(map[string]int, len(page))
	ids := make([]string, len(page))
	for i, s := range page {
		at[s.BillableItemID], ids[i] = i, s.BillableItemID
	}
	query, arg := clearingTariffsPostgres, any(ids)
	if q.engine != Postgres {
		js, err := json.Marshal(ids)
		if err != nil {
			return apperr.Wrap("store.ClearingSources", err)
		}
		query, arg = clearingTariffsSQLite, string(js)
	}
	seen := make([][2]bool, len(page))
	return q.eachRow(ctx, query, []any{arg}, func(scan scanner) error {
		var kind int
		var item string
		var ts sql.NullString
		var created, id any // the order's columns, not needed here
		if err := scan(&kind, &item, &ts, &created, &id); err != nil {
			return err
		}
		i, ok := at[item]
		if !ok || kind < 0 || kind > 1 || seen[i][kind] {
			return nil
		}
		seen[i][kind] = true
		if ts.Valid && kind == 0 {
			page[i].TicketTariff = []byte(ts.String)
		} else if ts.Valid {
			page[i].CouponTariff = []byte(ts.String)
		}
		return nil
	})
}

// The statement of clearingTariffs: the page's cycles (pc, by
// subscription_cycles_billable), then per cycle its ticket (kind 0, by
// primary key) and its subscription's coupons (kind 1). PostgreSQL reaches
// each through a LATERAL subquery that is not flattened (LIMIT, OFFSET 0),
// so each is an index lookup per id or cycle whatever the statistics say
// (with them, a hash join over all coupons is cheaper in the planner's
// estimate for 1,000 ids, and the ids' number is unknown to it); SQLite
// plans the plain joins as a SEARCH by index each.
const (
	clearingTariffsPostgres = `WITH pc AS (SELECT cc.billable_item_id, cc.ticket_id, cc.subscription_id FROM unnest($1::text[]) ids (id)
			CROSS JOIN LATERAL (SELECT cc.billable_item_id, cc.ticket_id, cc.subscription_id FROM subscription_cycles cc
				WHERE cc.billable_item_id = ids.id OFFSET 0) cc)
		SELECT 0, cc.billable_item_id, t.tariff_settings, t.created_at, t.id FROM pc cc
			CROSS JOIN LATERAL (SELECT t.tariff_settings, t.created_at, t.id FROM tickets t WHERE t.id = cc.ticket_id LIMIT 1) t
		UNION ALL
		SELECT 1, cc.billable_item_id, co.tariff_settings, co.created_at, co.id FROM pc cc
			CROSS JOIN LATERAL (SELECT co.tariff_settings, co.created_at, co.id FROM coupons co
				WHERE co.subscription_id = cc.subscription_id OFFSET 0) co
		ORDER BY 1, 4 DESC, 5 DESC`
	clearingTariffsSQLite = `WITH pc AS (SELECT cc.billable_item_id, cc.ticket_id, cc.subscription_id FROM subscription_cycles cc
			WHERE cc.billable_item_id IN (SELECT value FROM json_each($1)))
		SELECT 0, cc.billable_item_id, t.tariff_settings, t.created_at, t.id FROM pc cc JOIN tickets t ON t.id = cc.ticket_id
		UNION ALL
		SELECT 1, cc.billable_item_id, co.tariff_settings, co.created_at, co.id FROM pc cc JOIN coupons co ON co.subscription_id = cc.subscription_id
		ORDER BY 1, 4 DESC, 5 DESC`
)

func scanClearingSource(scan scanner) (s clearing.Source, err error) {
	var postal, state, month sql.NullString
	var gross sql.NullInt64
	var amount int64
	if err = scan(&s.BillableItemID, &s.AccountID, &s.ProductID, &s.Description, &amount, &s.VATRateBP, &s.Currency,
		&s.ValidFrom, &s.ValidUntil, &postal, &state, &gross, &month); err != nil {
		return s, err
	}
	s.Gross, s.ValidFrom, s.ValidUntil = money.Cents(amount), s.ValidFrom.UTC(), s.ValidUntil.UTC()
	if postal.Valid {
		m, err := clearing.ParseMonth(month.String)
		if err != nil {
			return s, err
		}
		s.Reported = &clearing.Reported{PostalCode: postal.String, State: clearing.State(state.String), Gross: money.Cents(gross.Int64), Month: m}
	}
	return s, nil
}

// ClearingReport is the frozen report of month m; false when m is not
// reported.
func (q Q) ClearingReport(ctx context.Context, m clearing.Month) (clearing.Report, bool, error) {
	r := clearing.Report{Month: m}
	var gross int64
	err := q.db.QueryRowContext(ctx, `SELECT issuer, reported_at, row_count, gross_cents FROM clearing_reports WHERE month = $1`,
		m.String()).Scan(&r.Issuer, &r.ReportedAt, &r.Rows, &gross)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	r.Gross, r.ReportedAt = money.Cents(gross), r.ReportedAt.UTC()
	return r, err == nil, mapErr(err)
}

// ClearingReportMonths are the months of the first and the newest
// report; false when there is none.
func (q Q) ClearingReportMonths(ctx context.Context) (first, last clearing.Month, ok bool, err error) {
	var lo, hi sql.NullString
	if err = q.db.QueryRowContext(ctx, `SELECT MIN(month), MAX(month) FROM clearing_reports`).Scan(&lo, &hi); err != nil || !lo.Valid {
		return first, last, false, mapErr(err)
	}
	if first, err = clearing.ParseMonth(lo.String); err != nil {
		return first, last, false, err
	}
	last, err = clearing.ParseMonth(hi.String)
	return first, last, err == nil, err
}

// ClearingBillableTotals counts the live billable items of products whose
// cycle starts in [from, to) and sums their amounts, independently of the
// clearing's own reading (farebox clearing verify).
func (q Q) ClearingBillableTotals(ctx context.Context, products []string, from, to time.Time) (int, money.Cents, error) {
	args := []any{now(from), now(to), string(account.Live)}
	marks := make([]string, len(products))
	for i, p := range products {
		args = append(args, p)
		marks[i] = fmt.Sprintf("$%d", len(args))
	}
	if len(products) == 0 {
		return 0, 0, nil
	}
	if err := q.refreshClearingStatistics(ctx); err != nil {
		return 0, 0, err
	}
	var n int
	var sum sql.NullInt64
	err := q.db.QueryRowContext(ctx, `SELECT COUNT(*), SUM(b.amount_cents) FROM billable_items b
		JOIN subscription_cycles c ON c.id = b.cycle_id
		WHERE c.valid_from >= $1 AND c.valid_from < $2 AND b.environment = $3
		AND b.product_id IN (`+strings.Join(marks, ", ")+`)`, args...).Scan(&n, &sum)
	return n, money.Cents(sum.Int64), mapErr(err)
}

// refreshClearingStatistics gives PostgreSQL fresh statistics of the
// tables a clearing reads, before a report's first page and before the
// totals it is reconciled with. A report reads what a month of sales wrote,
// often before autovacuum has looked at it: the lookups of ClearingSources
// keep to their indexes without statistics (LATERAL, LIMIT 1), but the
// totals' join of a month of cycles with their billable items does not
// (measured: more than 8 minutes at 100,000 ticket months on never-analysed
// tables, against seconds after an ANALYZE). ANALYZE samples a bounded
// number of rows per table (a few hundred milliseconds here), once per
// report or verify. SQLite plans by its indexes and needs nothing.
func (q Q) refreshClearingStatistics(ctx context.Context) error {
	if q.engine != Postgres {
		return nil
	}
	_, err := q.db.ExecContext(ctx, `ANALYZE subscription_cycles, billable_items, coupons, tickets, clearing_items`)
	return mapErr(err)
}

// InsertClearingReport writes a report's head (its totals are set by
// FinishClearingReport in the same transaction).
func (q Q) InsertClearingReport(ctx context.Context, r clearing.Report) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO clearing_reports (month, issuer, reported_at, row_count, gross_cents)
		VALUES ($1, $2, $3, $4, $5)`, r.Month.String(), r.Issuer, now(r.ReportedAt), r.Rows, int64(r.Gross))
	return mapErr(err)
}

// FinishClearingReport sets a report's row count and gross total.
func (q Q) FinishClearingReport(ctx context.Context, r clearing.Report) error {
	_, err := q.db.ExecContext(ctx, `UPDATE clearing_reports SET row_count = $1, gross_cents = $2 WHERE month = $3`,
		r.Rows, int64(r.Gross), r.Month.String())
	return mapErr(err)
}

const clearingRowCols = `month, seq, kind, billable_item_id, period, valid_from, valid_until, postal_code, state,
	product_id, product_name, account_id, issuer, count, gross_cents, net_cents, vat_cents, vat_rate_bp, currency`

// InsertClearingRows writes rows of a report (a page of them) and records
// the ticket months' attribution they report (clearing_items) for the next
// report's corrections. PostgreSQL takes the page in two statements (one
// round trip each: the columns as arrays, unnested); SQLite, in process,
// runs one prepared statement of clearingChunk rows per chunk with
// anonymous ? parameters (q.placeholders: the driver binds $n parameters
// in time quadratic in their number).
func (q Q) InsertClearingRows(ctx context.Context, rows []clearing.Row) error {
	if len(rows) == 0 {
		return nil
	}
	if q.engine == Postgres {
		return q.insertClearingRowsPostgres(ctx, rows)
	}
	return q.insertClearingRowsSQLite(ctx, rows)
}

const insertClearingItemsHead = `INSERT INTO clearing_items (billable_item_id, postal_code, state, gross_cents, month) `

const upsertClearingItemsTail = ` ON CONFLICT (billable_item_id) DO UPDATE SET postal_code = excluded.postal_code,
	state = excluded.state, gross_cents = excluded.gross_cents, month = excluded.month`

// insertClearingRowsPostgres writes the page as 19 and 5 arrays. A report
// holds a ticket month at most once with count 1 (sale, or the correction
// as it is now), so no item is upserted twice in one statement.
func (q Q) insertClearingRowsPostgres(ctx context.Context, rows []clearing.Row) error {
	n := len(rows)
	month, kind, item, period, postal, state := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	product, name, account, issuer, currency := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	seq, count, gross, net, vat, rate := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	from, until := make([]time.Time, n), make([]time.Time, n)
	var iItem, iPostal, iState, iMonth []string
	var iGross []int64
	for i, r := range rows {
		month[i], seq[i], kind[i], item[i], period[i], from[i], until[i] = r.Month.String(), r.Seq, r.Kind, r.BillableItemID, r.Period.String(), now(r.ValidFrom), now(r.ValidUntil)
		postal[i], state[i], product[i], name[i], account[i], issuer[i] = r.PostalCode, string(r.State), r.ProductID, r.ProductName, r.AccountID, r.Issuer
		count[i], gross[i], net[i], vat[i], rate[i], currency[i] = int64(r.Count), int64(r.Gross), int64(r.Net), int64(r.VAT), r.VATRateBP, r.Currency
		if r.Count > 0 {
			iItem, iPostal, iState = append(iItem, r.BillableItemID), append(iPostal, r.PostalCode), append(iState, string(r.State))
			iGross, iMonth = append(iGross, int64(r.Gross)), append(iMonth, r.Month.String())
		}
	}
	if _, err := q.db.ExecContext(ctx, `INSERT INTO clearing_rows (`+clearingRowCols+`)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[],
			$8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::int[], $15::bigint[], $16::bigint[],
			$17::bigint[], $18::bigint[], $19::text[])`,
		month, seq, kind, item, period, from, until, postal, state, product, name, account, issuer, count, gross, net, vat, rate, currency); err != nil {
		return mapErr(err)
	}
	if len(iItem) == 0 {
		return nil
	}
	_, err := q.db.ExecContext(ctx, insertClearingItemsHead+`SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[])`+
		upsertClearingItemsTail, iItem, iPostal, iState, iGross, iMonth)
	return mapErr(err)
}

// clearingChunk is how many rows one SQLite statement inserts.
const clearingChunk = 8

// insertClearingRowsSQLite writes the page clearingChunk rows to a
// statement, each statement shape (by its number of rows) prepared once
// for the page.
func (q Q) insertClearingRowsSQLite(ctx context.Context, rows []clearing.Row) error {
	stmts := map[string]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	exec := func(query string, args []any) error {
		st := stmts[query]
		if st == nil {
			var err error
			if st, err = q.db.PrepareContext(ctx, query); err != nil {
				return mapErr(err)
			}
			stmts[query] = st
		}
		_, err := st.ExecContext(ctx, args...)
		return mapErr(err)
	}
	for len(rows) > 0 {
		n := min(len(rows), clearingChunk)
		var vals, items []string
		var args, itemArgs []any
		for _, r := range rows[:n] {
			args = append(args, r.Month.String(), r.Seq, r.Kind, r.BillableItemID, r.Period.String(), now(r.ValidFrom), now(r.ValidUntil),
				r.PostalCode, string(r.State), r.ProductID, r.ProductName, r.AccountID, r.Issuer, r.Count, int64(r.Gross),
				int64(r.Net), int64(r.VAT), r.VATRateBP, r.Currency)
			vals = append(vals, "("+q.placeholders(len(args)-18, 19)+")")
			if r.Count > 0 {
				itemArgs = append(itemArgs, r.BillableItemID, r.PostalCode, string(r.State), int64(r.Gross), r.Month.String())
				items = append(items, "("+q.placeholders(len(itemArgs)-4, 5)+")")
			}
		}
		if err := exec(`INSERT INTO clearing_rows (`+clearingRowCols+`) VALUES `+strings.Join(vals, ", "), args); err != nil {
			return err
		}
		if len(items) > 0 {
			if err := exec(insertClearingItemsHead+`VALUES `+strings.Join(items, ", ")+upsertClearingItemsTail, itemArgs); err != nil {
				return err
			}
		}
		rows = rows[n:]
	}
	return nil
}

// ClearingRows is a page of at most limit rows of report m after row
// number afterSeq, in order.
func (q Q) ClearingRows(ctx context.Context, m clearing.Month, afterSeq int64, limit int) ([]clearing.Row, error) {
	return collect(ctx, q, `SELECT `+clearingRowCols+` FROM clearing_rows WHERE month = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
		[]any{m.String(), afterSeq, limit}, scanClearingRow)
}

// ClearingRowsOfPeriod are the rows of every report about the ticket
// months of period p (its sales and the later reports' corrections),
// in order of report and row.
func (q Q) ClearingRowsOfPeriod(ctx context.Context, p clearing.Month, fn func(clearing.Row) error) error {
	return q.eachRow(ctx, `SELECT `+clearingRowCols+` FROM clearing_rows WHERE period = $1 ORDER BY month, seq`,
		[]any{p.String()}, func(scan scanner) error {
			r, err := scanClearingRow(scan)
			if err != nil {
				return err
			}
			return fn(r)
		})
}

func scanClearingRow(scan scanner) (r clearing.Row, err error) {
	var month, period, state string
	var gross, net, vat int64
	if err = scan(&month, &r.Seq, &r.Kind, &r.BillableItemID, &period, &r.ValidFrom, &r.ValidUntil, &r.PostalCode, &state,
		&r.ProductID, &r.ProductName, &r.AccountID, &r.Issuer, &r.Count, &gross, &net, &vat, &r.VATRateBP, &r.Currency); err != nil {
		return r, err
	}
	if r.Month, err = clearing.ParseMonth(month); err != nil {
		return r, err
	}
	if r.Period, err = clearing.ParseMonth(period); err != nil {
		return r, err
	}
	r.State, r.Gross, r.Net, r.VAT = clearing.State(state), money.Cents(gross), money.Cents(net), money.Cents(vat)
	r.ValidFrom, r.ValidUntil = r.ValidFrom.UTC(), r.ValidUntil.UTC()
	return r, nil
}
