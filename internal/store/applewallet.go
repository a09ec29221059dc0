package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/wallet"
)

// The Apple Wallet web service's records (docs/wallet.md, "Apple Wallet
// updates"; migration 00013).

// EnsureApplePass records the pass rec unless its serial number is
// recorded already, and returns the stored record (the first token wins
// when two instances build the same pass at once).
func (q Q) EnsureApplePass(ctx context.Context, rec wallet.ApplePassRecord, at time.Time) (wallet.ApplePassRecord, error) {
	if _, err := q.db.ExecContext(ctx, `INSERT INTO apple_passes (serial_number, coupon_id, auth_token, update_seq, updated_at, created_at)
		VALUES ($1, $2, $3, 0, $4, $4) ON CONFLICT (serial_number) DO NOTHING`, rec.SerialNumber, rec.CouponID, rec.AuthToken, now(at)); err != nil {
		return wallet.ApplePassRecord{}, mapErr(err)
	}
	r, ok, err := q.ApplePass(ctx, rec.SerialNumber)
	if err == nil && !ok {
		err = errors.New("store.EnsureApplePass: the pass record vanished")
	}
	return r, err
}

// ApplePass returns the record of a pass; false when none was issued with
// that serial number.
func (q Q) ApplePass(ctx context.Context, serial string) (wallet.ApplePassRecord, bool, error) {
	var r wallet.ApplePassRecord
	err := q.db.QueryRowContext(ctx, `SELECT serial_number, coupon_id, auth_token, update_seq, updated_at FROM apple_passes WHERE serial_number = $1`,
		serial).Scan(&r.SerialNumber, &r.CouponID, &r.AuthToken, &r.UpdateSeq, &r.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	r.UpdatedAt = r.UpdatedAt.UTC()
	return r, err == nil, mapErr(err)
}

// RegisterAppleDevice registers device for the pass serial with its push
// token (a known registration gets the new token); created is false when
// the registration existed.
func (q Q) RegisterAppleDevice(ctx context.Context, device, serial, pushToken string, at time.Time) (created bool, err error) {
	res, err := q.db.ExecContext(ctx, `UPDATE apple_registrations SET push_token = $1 WHERE device_id = $2 AND serial_number = $3`,
		pushToken, device, serial)
	if err != nil {
		return false, mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return false, mapErr(err)
	}
	res, err = q.db.ExecContext(ctx, `INSERT INTO apple_registrations (device_id, serial_number, push_token, created_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (device_id, serial_number) DO NOTHING`, device, serial, pushToken, now(at))
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err)
}

// UnregisterAppleDevice removes device's registration for serial; false
// when there was none.
func (q Q) UnregisterAppleDevice(ctx context.Context, device, serial string) (bool, error) {
	res, err := q.db.ExecContext(ctx, `DELETE FROM apple_registrations WHERE device_id = $1 AND serial_number = $2`, device, serial)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n > 0, mapErr(err)
}

// AppleDevicePasses returns the update tag of every pass device is
// registered for, by serial number.
func (q Q) AppleDevicePasses(ctx context.Context, device string) (map[string]int64, error) {
	return keyed[int64](ctx, q, `SELECT p.serial_number, p.update_seq FROM apple_registrations r
		JOIN apple_passes p ON p.serial_number = r.serial_number WHERE r.device_id = $1`, device)
}

// MarkTicketsApplePassesUpdated gives every pass following the coupons of
// ticketIDs (a batch of update jobs, a month turn's or one revocation's)
// one new update tag and Last-Modified time, in four statements however
// many tickets, and returns the distinct push tokens of the devices
// registered for them by ticket id (sorted). Nothing is written when no
// pass follows any of the coupons.
func (q Q) MarkTicketsApplePassesUpdated(ctx context.Context, ticketIDs []string, at time.Time) (map[string][]string, error) {
	if len(ticketIDs) == 0 {
		return nil, nil
	}
	ids := make([]any, len(ticketIDs))
	for i, id := range ticketIDs {
		ids[i] = id
	}
	coupons := func(from int) string {
		return `coupon_id IN (SELECT coupon_id FROM tickets WHERE id IN (` + q.placeholders(from, len(ids)) + `))`
	}
	var n int
	if err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM apple_passes WHERE `+coupons(1), ids...).Scan(&n); err != nil {
		return nil, mapErr(err)
	}
	if n == 0 {
		return nil, nil
	}
	if _, err := q.db.ExecContext(ctx, `INSERT INTO apple_pass_seq (id, last_seq) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`); err != nil {
		return nil, mapErr(err)
	}
	var seq int64
	if err := q.db.QueryRowContext(ctx, `UPDATE apple_pass_seq SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq`).Scan(&seq); err != nil {
		return nil, mapErr(err)
	}
	if _, err := q.db.ExecContext(ctx, `UPDATE apple_passes SET update_seq = $1, updated_at = $2 WHERE `+coupons(3),
		append([]any{seq, now(at)}, ids...)...); err != nil {
		return nil, mapErr(err)
	}
	tokens := map[string][]string{}
	err := q.eachRow(ctx, `SELECT DISTINCT t.id, r.push_token FROM tickets t
		JOIN apple_passes p ON p.coupon_id = t.coupon_id
		JOIN apple_registrations r ON r.serial_number = p.serial_number
		WHERE t.id IN (`+q.placeholders(1, len(ids))+`) ORDER BY t.id, r.push_token`, ids,
		func(scan scanner) error {
			var id, t string
			err := scan(&id, &t)
			tokens[id] = append(tokens[id], t)
			return err
		})
	return tokens, err
}

// DeleteApplePushToken removes every registration of a push token (APNs
// answered 410 Unregistered or BadDeviceToken); it returns how many.
func (q Q) DeleteApplePushToken(ctx context.Context, pushToken string) (int64, error) {
	res, err := q.db.ExecContext(ctx, `DELETE FROM apple_registrations WHERE push_token = $1`, pushToken)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n, mapErr(err)
}

// CountApplePasses counts the passes following the coupon of ticketID.
func (q Q) CountApplePasses(ctx context.Context, ticketID string) (int, error) {
	var n int
	err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM apple_passes
		WHERE coupon_id = (SELECT coupon_id FROM tickets WHERE id = $1)`, ticketID).Scan(&n)
	return n, mapErr(err)
}
