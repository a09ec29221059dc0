package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

const ticketCols = `id, coupon_id, account_id, environment, product_id, cycle_id, identification_medium, medium_hash, tariff_settings,
	valid_from, valid_until, reactivation_key, used_reactivation_key, invalidated_at, created_at, revoked_reason, inspection_kid, vdv_number`

// ticketReadCols are ticketCols and what later changes set (the device).
const ticketReadCols = ticketCols + `, device_key`

// InsertTicket writes a ticket. A second ticket for the same coupon and
// cycle (concurrent activations) is an apperr.Conflict.
func (q Q) InsertTicket(ctx context.Context, t ticketing.Ticket) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO tickets (`+ticketCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		t.ID, t.CouponID, t.AccountID, string(t.Environment), t.ProductID, t.CycleID, string(t.IdentificationMedium), t.MediumHash,
		jsonText(t.TariffSettings), now(t.ValidFrom), now(t.ValidUntil), t.ReactivationKey, t.UsedReactivationKey,
		timePtr(t.InvalidatedAt), now(t.CreatedAt), t.RevokedReason, keyID(t.InspectionKeyID), vdvNumber(t.VDVNumber))
	return mapErr(err)
}

// Ticket returns a ticket by id (the id is the credential).
func (q Q) Ticket(ctx context.Context, id string) (ticketing.Ticket, error) {
	ts, err := q.ticketsWhere(ctx, `id = $1`, id)
	return single(ts, err, "store.Ticket", CodeTicketNotFound)
}

// TicketsOfCoupon returns a coupon's tickets, oldest first.
func (q Q) TicketsOfCoupon(ctx context.Context, couponID string) ([]ticketing.Ticket, error) {
	return q.ticketsWhere(ctx, `coupon_id = $1 ORDER BY created_at, id`, couponID)
}

// RevokeTicket marks a still valid ticket invalid as of at with reason; it
// reports false when the ticket was already invalid.
func (q Q) RevokeTicket(ctx context.Context, id, reason string, at time.Time) (bool, error) {
	res, err := q.db.ExecContext(ctx, `UPDATE tickets SET invalidated_at = $1, revoked_reason = $2 WHERE id = $3 AND invalidated_at IS NULL`,
		now(at), reason, id)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err)
}

func (q Q) ticketsWhere(ctx context.Context, where string, args ...any) ([]ticketing.Ticket, error) {
	return collect(ctx, q, `SELECT `+ticketReadCols+` FROM tickets WHERE `+where, args, scanTicket)
}

// scanTicket reads a row of ticketReadCols.
func scanTicket(scan scanner) (t ticketing.Ticket, err error) {
	var env, medium string
	var ts, key, used sql.NullString
	var inv sql.NullTime
	var reason sql.NullString
	var kid, vdvNum sql.NullInt64
	var device sql.NullString
	if err = scan(&t.ID, &t.CouponID, &t.AccountID, &env, &t.ProductID, &t.CycleID, &medium, &t.MediumHash, &ts,
		&t.ValidFrom, &t.ValidUntil, &key, &used, &inv, &t.CreatedAt, &reason, &kid, &vdvNum, &device); err != nil {
		return t, err
	}
	t.Environment = account.Environment(env)
	t.IdentificationMedium = json.RawMessage(medium)
	if ts.Valid {
		t.TariffSettings = json.RawMessage(ts.String)
	}
	t.ValidFrom, t.ValidUntil = t.ValidFrom.UTC(), t.ValidUntil.UTC()
	t.ReactivationKey, t.UsedReactivationKey, t.InvalidatedAt = nullStr(key), nullStr(used), nullTime(inv)
	t.RevokedReason = nullStr(reason)
	if kid.Valid {
		t.InspectionKeyID = uint16(kid.Int64)
	}
	if vdvNum.Valid {
		t.VDVNumber = uint32(vdvNum.Int64)
	}
	t.DeviceKey = device.String
	return t, nil
}

// vdvNumber stores VDV ticket number 0 (none: the hash-derived one) as NULL.
func vdvNumber(n uint32) any {
	if n == 0 {
		return nil
	}
	return int64(n)
}

// keyID stores inspection key id 0 (the active key at read time) as NULL.
func keyID(id uint16) any {
	if id == 0 {
		return nil
	}
	return int64(id)
}

// StampTicketKeysIssuedBefore stamps the unstamped tickets of env issued
// before `before` and still valid at validAt with kid (the key that signed
// them while a rotated key was published ahead).
func (q Q) StampTicketKeysIssuedBefore(ctx context.Context, env account.Environment, kid uint16, before, validAt time.Time) (int64, error) {
	res, err := q.db.ExecContext(ctx, `UPDATE tickets SET inspection_kid = $1
		WHERE inspection_kid IS NULL AND environment = $2 AND created_at < $3 AND valid_until >= $4`,
		int64(kid), string(env), now(before), now(validAt))
	if err != nil {
		return 0, mapErr(err)
	}
	return res.RowsAffected()
}

// StampTicketKeys gives the tickets of env that are signed with the active
// key at read time (inspection_kid NULL) and still valid at validAt the
// key id kid, so they keep that key after a rotation. It returns how many.
func (q Q) StampTicketKeys(ctx context.Context, env account.Environment, kid uint16, validAt time.Time) (int64, error) {
	res, err := q.db.ExecContext(ctx, `UPDATE tickets SET inspection_kid = $1
		WHERE inspection_kid IS NULL AND environment = $2 AND valid_until >= $3`, int64(kid), string(env), now(validAt))
	return affected(res, err)
}

// TicketsSignedWith returns the tickets signed with key kid that are still
// valid at validAt and not invalidated, oldest first.
func (q Q) TicketsSignedWith(ctx context.Context, kid uint16, validAt time.Time) ([]ticketing.Ticket, error) {
	return q.ticketsWhere(ctx, `inspection_kid = $1 AND valid_until >= $2 AND invalidated_at IS NULL ORDER BY created_at, id`,
		int64(kid), now(validAt))
}

// ResignTickets moves the tickets of key from that are still valid at
// validAt to key to (their barcodes are signed with it from now on); it
// returns how many.
func (q Q) ResignTickets(ctx context.Context, from, to uint16, validAt time.Time) (int64, error) {
	res, err := q.db.ExecContext(ctx, `UPDATE tickets SET inspection_kid = $1
		WHERE inspection_kid = $2 AND valid_until >= $3 AND invalidated_at IS NULL`, int64(to), int64(from), now(validAt))
	return affected(res, err)
}

// InspectionKeyUse counts, per stamped inspection key, the tickets valid at
// validAt and not invalidated, with the last validity end (read from the
// column, not an aggregate, so both engines scan a timestamp).
func (q Q) InspectionKeyUse(ctx context.Context, validAt time.Time) (map[uint16]ticketing.KeyUse, error) {
	const live = `inspection_kid IS NOT NULL AND valid_until >= $1 AND invalidated_at IS NULL`
	out := map[uint16]ticketing.KeyUse{}
	err := q.eachRow(ctx, `SELECT inspection_kid, COUNT(*) FROM tickets WHERE `+live+` GROUP BY inspection_kid`,
		[]any{now(validAt)}, func(scan scanner) error {
			var kid int64
			var u ticketing.KeyUse
			if err := scan(&kid, &u.Tickets); err != nil {
				return err
			}
			out[uint16(kid)] = u
			return nil
		})
	if err != nil {
		return nil, err
	}
	for kid, u := range out {
		if err := q.db.QueryRowContext(ctx, `SELECT valid_until FROM tickets WHERE inspection_kid = $2 AND `+live+`
			ORDER BY valid_until DESC LIMIT 1`, now(validAt), int64(kid)).Scan(&u.LastValidUntil); err != nil {
			return nil, mapErr(err)
		}
		u.LastValidUntil = u.LastValidUntil.UTC()
		out[kid] = u
	}
	return out, nil
}

func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n, mapErr(err)
}

// Tickets is a page of an account's tickets, newest first. A state filter
// reads its partial index (tickets_list_valid, _invalidated), no state the
// whole tickets_list.
func (q Q) Tickets(ctx context.Context, f ticketing.TicketFilter) (list.Page[ticketing.Ticket], error) {
	return listPage(ctx, q, ticketsSQL(f), f.Limit, scanTicket)
}

// ticketsSQL is the statement of a page of tickets; each state repeats its
// partial index's predicate.
func ticketsSQL(f ticketing.TicketFilter) pageStmt {
	return newListWhere(f.Query, "").inState(f.State).pageSQL(`SELECT `+ticketReadCols+` FROM tickets`, "", f.Query)
}
