package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/farebox/farebox/internal/records"
)

// The records for the central reporting (docs/records.md, migration
// 00042): inspectors, the inspection records their devices post, and the
// issuance records, which are read from the tickets themselves.

const inspectorCols = `id, name, token_hash, token_prefix, password_hash, created_at, revoked_at`

// InsertInspector stores a new inspector; a name in use is an
// apperr.Conflict.
func (q Q) InsertInspector(ctx context.Context, i records.Inspector) error {
	var pw any
	if i.PasswordHash != "" {
		pw = i.PasswordHash
	}
	_, err := q.db.ExecContext(ctx, `INSERT INTO inspectors (`+inspectorCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		i.ID, i.Name, i.TokenHash, i.TokenPrefix, pw, now(i.CreatedAt), timePtr(i.RevokedAt))
	return mapErr(err)
}

// Inspectors lists every inspector, revoked ones too, oldest first.
func (q Q) Inspectors(ctx context.Context) ([]records.Inspector, error) {
	return collect(ctx, q, `SELECT `+inspectorCols+` FROM inspectors ORDER BY created_at, id`, nil, scanInspector)
}

// InspectorByToken returns the inspector whose device token hashes to
// tokenHash (revoked or not: the caller judges); NotFound when none does.
func (q Q) InspectorByToken(ctx context.Context, tokenHash string) (records.Inspector, error) {
	is, err := collect(ctx, q, `SELECT `+inspectorCols+` FROM inspectors WHERE token_hash = $1`, []any{tokenHash}, scanInspector)
	return single(is, err, "store.InspectorByToken", CodeInspectorNotFound)
}

// InspectorByName returns the inspector called name (revoked or not: the
// caller judges); NotFound when there is none.
func (q Q) InspectorByName(ctx context.Context, name string) (records.Inspector, error) {
	is, err := collect(ctx, q, `SELECT `+inspectorCols+` FROM inspectors WHERE name = $1`, []any{name}, scanInspector)
	return single(is, err, "store.InspectorByName", CodeInspectorNotFound)
}

// SetInspectorPassword sets the argon2id PHC string of the active
// inspector called nameOrID (by name first, then by id); false when there
// is none. The inspector's open app sessions end with it (WebSession
// compares their credential with the new hash).
func (q Q) SetInspectorPassword(ctx context.Context, nameOrID, phc string) (bool, error) {
	n, err := affected(q.db.ExecContext(ctx, `UPDATE inspectors SET password_hash = $1
		WHERE id = (SELECT id FROM inspectors WHERE (name = $2 OR id = $2) AND revoked_at IS NULL ORDER BY name = $2 DESC LIMIT 1)`,
		phc, nameOrID))
	return n == 1, err
}

// RevokeInspector revokes the inspector called nameOrID as of at; false
// when there is none or it was revoked already.
func (q Q) RevokeInspector(ctx context.Context, nameOrID string, at time.Time) (bool, error) {
	n, err := affected(q.db.ExecContext(ctx, `UPDATE inspectors SET revoked_at = $1 WHERE (name = $2 OR id = $2) AND revoked_at IS NULL`,
		now(at), nameOrID))
	return n == 1, err
}

func scanInspector(scan scanner) (i records.Inspector, err error) {
	var pw sql.NullString
	var rev sql.NullTime
	if err = scan(&i.ID, &i.Name, &i.TokenHash, &i.TokenPrefix, &pw, &i.CreatedAt, &rev); err != nil {
		return i, err
	}
	i.PasswordHash, i.CreatedAt, i.RevokedAt = pw.String, i.CreatedAt.UTC(), nullTime(rev)
	return i, nil
}

// InsertInspections stores a device's checks in order. A check whose
// (inspector, client record id) is stored already is not written again;
// ids are the stored records' ids and created says which this call wrote.
func (q Q) InsertInspections(ctx context.Context, rs []records.Inspection) (ids []string, created []bool, err error) {
	for _, r := range rs {
		n, err := affected(q.db.ExecContext(ctx, `INSERT INTO inspection_records (id, inspector_id, client_record_id, ticket_id,
			barcode_sha256, outcome, checked_at, device_time, lat, lon, stop_id, received_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (inspector_id, client_record_id) DO NOTHING`,
			r.ID, r.InspectorID, r.ClientRecordID, optStr(r.TicketID), optStr(r.BarcodeSHA256), r.Outcome, now(r.CheckedAt),
			timePtr(r.DeviceTime), r.Lat, r.Lon, optStr(r.StopID), now(r.ReceivedAt)))
		if err != nil {
			return nil, nil, err
		}
		id := r.ID
		if n == 0 {
			if err := q.db.QueryRowContext(ctx, `SELECT id FROM inspection_records WHERE inspector_id = $1 AND client_record_id = $2`,
				r.InspectorID, r.ClientRecordID).Scan(&id); err != nil {
				return nil, nil, mapErr(err)
			}
		}
		ids, created = append(ids, id), append(created, n == 1)
	}
	return ids, created, nil
}

// InspectionsReceived returns the inspection records stored in [from, to),
// in the order they arrived.
func (q Q) InspectionsReceived(ctx context.Context, from, to time.Time) ([]records.Inspection, error) {
	return collect(ctx, q, `SELECT id, inspector_id, client_record_id, ticket_id, barcode_sha256, outcome, checked_at, device_time,
		lat, lon, stop_id, received_at FROM inspection_records WHERE received_at >= $1 AND received_at < $2 ORDER BY received_at, id`,
		[]any{now(from), now(to)}, func(scan scanner) (r records.Inspection, err error) {
			var ticket, digest, stop sql.NullString
			var dev sql.NullTime
			var lat, lon sql.NullFloat64
			if err = scan(&r.ID, &r.InspectorID, &r.ClientRecordID, &ticket, &digest, &r.Outcome, &r.CheckedAt, &dev,
				&lat, &lon, &stop, &r.ReceivedAt); err != nil {
				return r, err
			}
			r.TicketID, r.BarcodeSHA256, r.StopID = ticket.String, digest.String, stop.String
			r.CheckedAt, r.ReceivedAt, r.DeviceTime = r.CheckedAt.UTC(), r.ReceivedAt.UTC(), nullTime(dev)
			if lat.Valid && lon.Valid {
				r.Lat, r.Lon = &lat.Float64, &lon.Float64
			}
			return r, nil
		})
}

// IssuedLive returns the live tickets issued in [from, to), oldest first:
// the issuance records, derived from the stored tickets (through the
// accounts, so each account's part is read along its tickets_list index).
func (q Q) IssuedLive(ctx context.Context, from, to time.Time) ([]records.Issued, error) {
	return collect(ctx, q, `SELECT t.id, t.account_id, t.product_id, t.valid_from, t.valid_until, t.created_at,
		t.identification_medium, t.medium_hash, t.invalidated_at
		FROM accounts a JOIN tickets t ON t.account_id = a.id AND t.environment = 'live' AND t.created_at >= $1 AND t.created_at < $2
		ORDER BY t.created_at, t.id`, []any{now(from), now(to)}, func(scan scanner) (r records.Issued, err error) {
		var medium, hash string
		var inv sql.NullTime
		if err = scan(&r.TicketID, &r.AccountID, &r.ProductID, &r.ValidFrom, &r.ValidUntil, &r.IssuedAt, &medium, &hash, &inv); err != nil {
			return r, err
		}
		r.ValidFrom, r.ValidUntil, r.IssuedAt = r.ValidFrom.UTC(), r.ValidUntil.UTC(), r.IssuedAt.UTC()
		r.Medium, r.Erased, r.Invalidated = []byte(medium), hash == ErasedMediumHash, nullTime(inv)
		return r, nil
	})
}
