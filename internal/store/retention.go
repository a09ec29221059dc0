package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/ticketing"
)

// ErasedMediumHash marks a ticket whose identification data is erased:
// its medium holds neutral values (retention.NeutralMedium) and its tariff
// settings are NULL. The partial index tickets_retention leaves such rows out.
const ErasedMediumHash = "erased"

// couponsDueSQL selects coupons whose tariff settings may be erased at
// cutoff $1: created before it, no ticket valid at or after it, and not
// the coupon of a subscription that has not ended before it.
const couponsDueSQL = `FROM coupons c WHERE c.tariff_settings IS NOT NULL AND c.created_at < $1
	AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.coupon_id = c.id AND t.valid_until >= $1)
	AND (c.subscription_id IS NULL OR EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = c.subscription_id AND s.ends_at < $1))`

// RetentionDue counts what is due at the cutoffs (dry run).
func (q Q) RetentionDue(ctx context.Context, identCutoff, at, billingCutoff time.Time) (retention.Due, error) {
	var d retention.Due
	// The oldest of each is read as a column (ORDER BY … LIMIT 1), not
	// as MIN(): SQLite hands an aggregate of a timestamp back as text.
	counts := []struct {
		n   *int64
		old **time.Time
		sql string
		arg time.Time
	}{
		{&d.Tickets, &d.OldestTicket, `SELECT COUNT(*) FROM tickets WHERE medium_hash <> 'erased' AND valid_until < $1`, identCutoff},
		{&d.Coupons, &d.OldestCoupon, `SELECT COUNT(*) ` + couponsDueSQL, identCutoff},
		{&d.Customers, &d.OldestCustomer, `SELECT COUNT(*) FROM customers WHERE restricted_until IS NOT NULL AND restricted_until <= $1`, at},
	}
	oldest := []string{
		`SELECT valid_until FROM tickets WHERE medium_hash <> 'erased' AND valid_until < $1 ORDER BY valid_until LIMIT 1`,
		`SELECT c.created_at ` + couponsDueSQL + ` ORDER BY c.created_at LIMIT 1`,
		`SELECT restricted_until FROM customers WHERE restricted_until IS NOT NULL AND restricted_until <= $1 ORDER BY restricted_until LIMIT 1`,
	}
	for i, c := range counts {
		if err := q.db.QueryRowContext(ctx, c.sql, now(c.arg)).Scan(c.n); err != nil {
			return d, mapErr(err)
		}
		if *c.n == 0 {
			continue
		}
		var t time.Time
		if err := q.db.QueryRowContext(ctx, oldest[i], now(c.arg)).Scan(&t); err != nil {
			return d, mapErr(err)
		}
		t = t.UTC()
		*c.old = &t
	}
	if err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM invoices WHERE created_at < $1`, now(billingCutoff)).Scan(&d.InvoicesPastPeriod); err != nil {
		return d, mapErr(err)
	}
	return d, nil
}

func utcPtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

// EraseExpiredTickets erases the identification data (medium, tariff
// settings) of up to limit tickets whose validity ended before cutoff,
// after cur in (valid_until, id) order, and returns how many and the new
// cursor. One statement reads the batch from tickets_retention; the
// updates are grouped by neutral medium (one statement per option kind).
func (q Q) EraseExpiredTickets(ctx context.Context, cutoff time.Time, cur retention.TicketCursor, limit int) (int, retention.TicketCursor, error) {
	type row struct {
		id, medium string
		until      time.Time
	}
	rows, err := collect(ctx, q, `SELECT id, identification_medium, valid_until FROM tickets
		WHERE medium_hash <> 'erased' AND valid_until < $1 AND (valid_until, id) > ($2, $3)
		ORDER BY valid_until, id LIMIT $4`, []any{now(cutoff), now(cur.ValidUntil), cur.ID, limit},
		func(scan scanner) (r row, err error) { return r, scan(&r.id, &r.medium, &r.until) })
	if err != nil || len(rows) == 0 {
		return 0, cur, err
	}
	byMedium := map[string][]string{}
	for _, r := range rows {
		n := string(retention.NeutralMedium(json.RawMessage(r.medium)))
		byMedium[n] = append(byMedium[n], r.id)
	}
	for medium, group := range byMedium {
		if err := q.eraseTickets(ctx, medium, group); err != nil {
			return 0, cur, err
		}
	}
	last := rows[len(rows)-1]
	return len(rows), retention.TicketCursor{ValidUntil: last.until.UTC(), ID: last.id}, nil
}

// eraseTickets writes the neutral medium into the given tickets.
func (q Q) eraseTickets(ctx context.Context, medium string, ids []string) error {
	in, args := idList([]any{medium}, ids)
	_, err := q.db.ExecContext(ctx, `UPDATE tickets SET identification_medium = $1, medium_hash = 'erased', tariff_settings = NULL
		WHERE medium_hash <> 'erased' AND id IN (`+in+`)`, args...)
	return mapErr(err)
}

// EraseTicketData erases the identification data of the given tickets at
// once (erasure on request).
func (q Q) EraseTicketData(ctx context.Context, ts []ticketing.Ticket) error {
	byMedium := map[string][]string{}
	for _, t := range ts {
		n := string(retention.NeutralMedium(t.IdentificationMedium))
		byMedium[n] = append(byMedium[n], t.ID)
	}
	for medium, group := range byMedium {
		if err := q.eraseTickets(ctx, medium, group); err != nil {
			return err
		}
	}
	return nil
}

// EraseExpiredCouponSettings sets the tariff settings of up to limit due
// coupons (couponsDueSQL) to NULL and says how many.
func (q Q) EraseExpiredCouponSettings(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	n, err := q.affected(ctx, `UPDATE coupons SET tariff_settings = NULL WHERE id IN (SELECT c.id `+couponsDueSQL+`
		ORDER BY c.created_at LIMIT $2)`, now(cutoff), limit)
	return n, mapErr(err)
}

// EraseCouponSettings erases one coupon's tariff settings and marks the
// coupon erased at at (erasure on request).
func (q Q) EraseCouponSettings(ctx context.Context, id string, at time.Time) error {
	_, err := q.db.ExecContext(ctx, `UPDATE coupons SET tariff_settings = NULL, erased_at = COALESCE(erased_at, $2) WHERE id = $1`, id, now(at))
	return mapErr(err)
}

// MarkSubscriptionErased records the erasure request of a subscription.
func (q Q) MarkSubscriptionErased(ctx context.Context, id string, at time.Time) error {
	_, err := q.db.ExecContext(ctx, `UPDATE subscriptions SET erased_at = COALESCE(erased_at, $2) WHERE id = $1`, id, now(at))
	return mapErr(err)
}

// ErasedAt says when erasure of a coupon, subscription or customer was
// requested (nil: never), and until when a customer is restricted.
func (q Q) ErasedAt(ctx context.Context, kind, id string) (erased, restrictedUntil *time.Time, err error) {
	var e, r sql.NullTime
	switch kind {
	case "coupon":
		err = q.db.QueryRowContext(ctx, `SELECT erased_at, NULL FROM coupons WHERE id = $1`, id).Scan(&e, &r)
	case "subscription":
		err = q.db.QueryRowContext(ctx, `SELECT erased_at, NULL FROM subscriptions WHERE id = $1`, id).Scan(&e, &r)
	default:
		err = q.db.QueryRowContext(ctx, `SELECT erased_at, restricted_until FROM customers WHERE id = $1`, id).Scan(&e, &r)
	}
	if err != nil {
		return nil, nil, mapErr(err)
	}
	return utcPtr(e), utcPtr(r), nil
}

// erasedAddress is what an erased customer's address lines read as.
const erasedAddress = `["` + retention.ErasedName + `"]`

// RestrictCustomer marks a customer erased at at and restricts its data
// until until (the retention duty of the invoices issued to it).
func (q Q) RestrictCustomer(ctx context.Context, id string, at, until time.Time) error {
	_, err := q.db.ExecContext(ctx, `UPDATE customers SET erased_at = $2, restricted_until = $3 WHERE id = $1`, id, now(at), now(until))
	return mapErr(err)
}

// EraseCustomer replaces a customer's recipient data by neutral values
// (address lines ["erased"], no electronic invoicing data) and marks it
// erased at at (when not already marked); its restriction ends.
func (q Q) EraseCustomer(ctx context.Context, id string, at time.Time) error {
	_, err := q.db.ExecContext(ctx, `UPDATE customers SET address_lines = $2, electronic_invoicing = NULL,
		erased_at = COALESCE(erased_at, $3), restricted_until = NULL WHERE id = $1`, id, erasedAddress, now(at))
	return mapErr(err)
}

// EraseRestrictedCustomers erases up to limit customers whose restriction
// ended at or before at and says how many.
func (q Q) EraseRestrictedCustomers(ctx context.Context, at time.Time, limit int) (int64, error) {
	n, err := q.affected(ctx, `UPDATE customers SET address_lines = $2, electronic_invoicing = NULL, restricted_until = NULL
		WHERE id IN (SELECT id FROM customers WHERE restricted_until IS NOT NULL AND restricted_until <= $1 ORDER BY restricted_until LIMIT $3)`,
		now(at), erasedAddress, limit)
	return n, mapErr(err)
}

// BillingRecordsOf lists the billable items and invoice documents of a
// coupon, a subscription or a customer, each with its date (ordered_at,
// created_at).
func (q Q) BillingRecordsOf(ctx context.Context, kind, id string) ([]retention.RecordRef, error) {
	var itemWhere, invWhere string
	switch kind {
	case "coupon":
		itemWhere = `b.coupon_id = $1 OR b.id = (SELECT billable_item_id FROM coupons WHERE id = $1)`
	case "subscription":
		itemWhere = `b.subscription_id = $1`
	default:
		itemWhere = `b.id IN (SELECT billable_item_id FROM billable_item_assignments WHERE customer_id = $1)`
		invWhere = ` OR i.customer_id = $1`
	}
	items, err := collect(ctx, q, `SELECT 'billable_item', b.id, b.ordered_at FROM billable_items b WHERE `+itemWhere+` ORDER BY b.ordered_at, b.id`,
		[]any{id}, scanRef)
	if err != nil {
		return nil, err
	}
	invs, err := collect(ctx, q, `SELECT 'invoice', i.id, i.created_at FROM invoices i WHERE i.id IN
		(SELECT invoice_id FROM invoice_claims WHERE billable_item_id IN (SELECT b.id FROM billable_items b WHERE `+itemWhere+`))`+invWhere+`
		ORDER BY i.created_at, i.id`, []any{id}, scanRef)
	if err != nil {
		return nil, err
	}
	return append(items, invs...), nil
}

func scanRef(scan scanner) (r retention.RecordRef, err error) {
	err = scan(&r.Type, &r.ID, &r.At)
	r.At = r.At.UTC()
	return r, err
}

// CouponsOfSubscription are a subscription's coupons (the first and the
// restored ones), oldest first.
func (q Q) CouponsOfSubscription(ctx context.Context, subscriptionID string) ([]ticketing.Coupon, error) {
	return q.couponsWhere(ctx, `subscription_id = $1 ORDER BY created_at, id`, subscriptionID)
}

// OldestEvent is the oldest event of one account and environment (after
// pruning, an event older than the retention period is the account's
// newest, kept for numbering): its seq, creation and object.
func (q Q) OldestEvent(ctx context.Context, accountID string, env account.Environment) (seq int64, at time.Time, object string, ok bool, err error) {
	err = q.db.QueryRowContext(ctx, `SELECT seq, created_at, object FROM events WHERE account_id = $1 AND environment = $2 ORDER BY seq LIMIT 1`,
		accountID, string(env)).Scan(&seq, &at, &object)
	if err == sql.ErrNoRows {
		return 0, at, "", false, nil
	}
	return seq, at.UTC(), object, err == nil, mapErr(err)
}

// EventsOfObjects are the (seq, object) of an account's events about the
// given object ids.
func (q Q) EventsOfObjects(ctx context.Context, accountID string, env account.Environment, ids []string) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	in, args := idList([]any{accountID, string(env)}, ids)
	err := q.eachRow(ctx, `SELECT seq, object FROM events WHERE account_id = $1 AND environment = $2 AND object_id IN (`+in+`)`,
		args, func(scan scanner) error {
			var seq int64
			var obj string
			if err := scan(&seq, &obj); err != nil {
				return err
			}
			out[seq] = obj
			return nil
		})
	return out, err
}

// SetEventObject replaces the stored object of one event (redaction).
func (q Q) SetEventObject(ctx context.Context, accountID string, env account.Environment, seq int64, object string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE events SET object = $4 WHERE account_id = $1 AND environment = $2 AND seq = $3`,
		accountID, string(env), seq, object)
	return mapErr(err)
}

// ClaimRetentionRun claims the daily retention run at at: true when the
// last run started at or before at-every (or never), and this caller now
// owns the run; false when another instance ran it within every.
func (q Q) ClaimRetentionRun(ctx context.Context, at time.Time, every time.Duration) (bool, error) {
	n, err := q.affected(ctx, `UPDATE retention_state SET started_at = $1
		WHERE id = 1 AND (started_at IS NULL OR started_at <= $2)`, now(at), now(at.Add(-every)))
	return n == 1, mapErr(err)
}

// FinishRetentionRun records the end of a run.
func (q Q) FinishRetentionRun(ctx context.Context, at time.Time) error {
	_, err := q.db.ExecContext(ctx, `UPDATE retention_state SET finished_at = $1 WHERE id = 1`, now(at))
	return mapErr(err)
}
