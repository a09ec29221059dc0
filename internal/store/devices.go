package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/ticketing"
)

// Device binding of dynamic tickets (migration 00043, docs/barcodes.md
// "Dynamic barcodes"). Every change is one conditional UPDATE, so two
// devices binding the same ticket at once cannot both win on either
// engine: the row lock (PostgreSQL) or the database lock (SQLite) orders
// them and the second sees the first's key.

// DeviceBinding returns the device state of a ticket.
func (q Q) DeviceBinding(ctx context.Context, ticketID string) (ticketing.DeviceBinding, error) {
	b := ticketing.DeviceBinding{TicketID: ticketID}
	var key sql.NullString
	var bound, allowed, last sql.NullTime
	err := q.db.QueryRowContext(ctx, `SELECT device_key, device_bound_at, device_moves, device_move_allowed_at, device_move_last_allowed_at
		FROM tickets WHERE id = $1`, ticketID).Scan(&key, &bound, &b.Moves, &allowed, &last)
	if err == sql.ErrNoRows {
		return b, apperr.NotFoundf("store.DeviceBinding", CodeTicketNotFound)
	}
	if err != nil {
		return b, mapErr(err)
	}
	b.Key, b.BoundAt, b.MoveAllowedAt, b.MoveLastAllowedAt = key.String, utcPtr(bound), utcPtr(allowed), utcPtr(last)
	return b, nil
}

// BindDevice binds key to the ticket at at: the first key binds
// (ticketing.BindFirst), the bound key again changes nothing (BindSame),
// another key replaces it only while the partner's permission to move is
// pending, which it uses up (BindMoved); otherwise BindRefused.
func (q Q) BindDevice(ctx context.Context, ticketID, key string, at time.Time) (string, error) {
	res, err := q.db.ExecContext(ctx, `UPDATE tickets SET device_key = $1, device_bound_at = $2
		WHERE id = $3 AND device_key IS NULL`, key, now(at), ticketID)
	if n, err := affected(res, err); err != nil || n == 1 {
		return ticketing.BindFirst, err
	}
	res, err = q.db.ExecContext(ctx, `UPDATE tickets SET device_key = $1, device_bound_at = $2, device_moves = device_moves + 1,
		device_move_allowed_at = NULL WHERE id = $3 AND device_key <> $1 AND device_move_allowed_at IS NOT NULL`, key, now(at), ticketID)
	if n, err := affected(res, err); err != nil || n == 1 {
		return ticketing.BindMoved, err
	}
	b, err := q.DeviceBinding(ctx, ticketID)
	if err != nil {
		return "", err
	}
	if b.Key == key {
		return ticketing.BindSame, nil
	}
	return ticketing.BindRefused, nil
}

// AllowDeviceMove records the partner's permission to move a bound ticket
// to another device at at, unless the last permission was given after
// notBefore (the rate limit). It reports false when nothing changed: the
// ticket is not bound, or too soon.
func (q Q) AllowDeviceMove(ctx context.Context, ticketID string, at, notBefore time.Time) (bool, error) {
	res, err := q.db.ExecContext(ctx, `UPDATE tickets SET device_move_allowed_at = $1, device_move_last_allowed_at = $1
		WHERE id = $2 AND device_key IS NOT NULL AND (device_move_last_allowed_at IS NULL OR device_move_last_allowed_at <= $3)`,
		now(at), ticketID, now(notBefore))
	n, err := affected(res, err)
	return n == 1, err
}

// AppendDeviceMove records the key ticket m.TicketID moved away from
// (migration 00046), numbered from the revocation feed's counter, and
// returns its sequence number.
func (q Q) AppendDeviceMove(ctx context.Context, m ticketing.DeviceMove) (int64, error) {
	seq, err := q.nextFeedSeq(ctx)
	if err != nil {
		return 0, err
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO device_moves (seq, ticket_id, device_key, moved_at, valid_until) VALUES ($1, $2, $3, $4, $5)`,
		seq, m.TicketID, m.Key, now(m.MovedAt), now(m.ValidUntil))
	return seq, mapErr(err)
}

// BlocklistDeviceMoves returns at most limit moved-away keys after since
// up to upTo (the feed's last number as BlocklistRevocations read it)
// whose ticket is still valid at notBefore, in order.
func (q Q) BlocklistDeviceMoves(ctx context.Context, since, upTo int64, limit int, notBefore time.Time) ([]ticketing.DeviceMove, error) {
	return collect(ctx, q, `SELECT seq, ticket_id, device_key, moved_at, valid_until FROM device_moves
		WHERE seq > $1 AND seq <= $2 AND valid_until >= $3 ORDER BY seq LIMIT $4`, []any{since, upTo, now(notBefore), limit},
		func(scan scanner) (m ticketing.DeviceMove, err error) {
			err = scan(&m.Seq, &m.TicketID, &m.Key, &m.MovedAt, &m.ValidUntil)
			m.MovedAt, m.ValidUntil = m.MovedAt.UTC(), m.ValidUntil.UTC()
			return m, err
		})
}
