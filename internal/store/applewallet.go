package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
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
	n, err := q.affected(ctx, `DELETE FROM apple_registrations WHERE device_id = $1 AND serial_number = $2`, device, serial)
	return n > 0, mapErr(err)
}

// ApplePassLastTag is the newest update tag issued (0 before the first):
// a device can hold no tag above it.
func (q Q) ApplePassLastTag(ctx context.Context) (int64, error) {
	return q.singleCounter(ctx, `SELECT last_seq FROM apple_pass_seq WHERE id = 1`)
}

// AppleDevicePasses returns the update tag of every pass device is
// registered for, by serial number.
func (q Q) AppleDevicePasses(ctx context.Context, device string) (map[string]int64, error) {
	return keyed[int64](ctx, q, `SELECT p.serial_number, p.update_seq FROM apple_registrations r
		JOIN apple_passes p ON p.serial_number = r.serial_number WHERE r.device_id = $1`, device)
}

// MarkTicketsApplePassesUpdated gives every pass following the coupons of
// ticketIDs (a batch of update jobs, a month turn's or one revocation's)
// one new update tag and Last-Modified time, and returns the distinct push
// tokens of the devices registered for them by ticket id (sorted). Nothing
// is written when no pass follows any of the coupons.
//
// Each statement reads one table by an index with an IN list (tickets by
// id, passes by coupon, registrations by serial number) and the rows are
// joined here: a join of the three let PostgreSQL, with statistics taken
// while the tables were still empty (a month turn right after a bulk
// load), choose a nested loop that scanned all tickets once per pass —
// minutes for 10,000 passes. Single-table lookups have no such plan.
func (q Q) MarkTicketsApplePassesUpdated(ctx context.Context, ticketIDs []string, at time.Time) (map[string][]string, error) {
	if len(ticketIDs) == 0 {
		return nil, nil
	}
	couponOf := map[string]string{}
	if err := q.eachRow(ctx, `SELECT id, coupon_id FROM tickets WHERE id IN (`+q.placeholders(1, len(ticketIDs))+`)`,
		anys(ticketIDs), func(scan scanner) error {
			var id, c string
			err := scan(&id, &c)
			couponOf[id] = c
			return err
		}); err != nil {
		return nil, err
	}
	coupons := distinct(couponOf)
	if len(coupons) == 0 {
		return nil, nil
	}
	serials := map[string][]string{} // by coupon
	var allSerials []string
	if err := q.eachRow(ctx, `SELECT coupon_id, serial_number FROM apple_passes WHERE coupon_id IN (`+q.placeholders(1, len(coupons))+`)`,
		anys(coupons), func(scan scanner) error {
			var c, sn string
			err := scan(&c, &sn)
			serials[c] = append(serials[c], sn)
			allSerials = append(allSerials, sn)
			return err
		}); err != nil {
		return nil, err
	}
	if len(allSerials) == 0 {
		return nil, nil
	}
	if _, err := q.db.ExecContext(ctx, `INSERT INTO apple_pass_seq (id, last_seq) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`); err != nil {
		return nil, mapErr(err)
	}
	var seq int64
	if err := q.db.QueryRowContext(ctx, `UPDATE apple_pass_seq SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq`).Scan(&seq); err != nil {
		return nil, mapErr(err)
	}
	if _, err := q.db.ExecContext(ctx, `UPDATE apple_passes SET update_seq = $1, updated_at = $2 WHERE serial_number IN (`+
		q.placeholders(3, len(allSerials))+`)`, append([]any{seq, now(at)}, anys(allSerials)...)...); err != nil {
		return nil, mapErr(err)
	}
	tokensOf := map[string][]string{} // by serial number
	if err := q.eachRow(ctx, `SELECT serial_number, push_token FROM apple_registrations WHERE serial_number IN (`+
		q.placeholders(1, len(allSerials))+`)`, anys(allSerials), func(scan scanner) error {
		var sn, t string
		err := scan(&sn, &t)
		tokensOf[sn] = append(tokensOf[sn], t)
		return err
	}); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for id, c := range couponOf {
		seen := map[string]bool{}
		for _, sn := range serials[c] {
			for _, t := range tokensOf[sn] {
				if !seen[t] {
					seen[t] = true
					out[id] = append(out[id], t)
				}
			}
		}
		sort.Strings(out[id])
	}
	return out, nil
}

// distinct is the distinct values of m, sorted.
func distinct(m map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range m {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// DeleteApplePushToken removes every registration of a push token (APNs
// answered 410 Unregistered or BadDeviceToken); it returns how many.
func (q Q) DeleteApplePushToken(ctx context.Context, pushToken string) (int64, error) {
	n, err := q.affected(ctx, `DELETE FROM apple_registrations WHERE push_token = $1`, pushToken)
	return n, mapErr(err)
}

// CountApplePasses counts the passes following the coupon of ticketID.
func (q Q) CountApplePasses(ctx context.Context, ticketID string) (int, error) {
	var n int
	err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM apple_passes
		WHERE coupon_id = (SELECT coupon_id FROM tickets WHERE id = $1)`, ticketID).Scan(&n)
	return n, mapErr(err)
}
