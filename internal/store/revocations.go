package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/ticketing"
)

// keySubject prefixes the ticket_id column of a key entry ("key:<kid>"):
// the column is unique, so a key enters the feed once; no ticket id has
// this form.
const keySubject = "key:"

// AppendRevocation numbers r (the next feed sequence number, taken under
// the feed row's lock so numbers follow commit order) and appends it. A
// ticket (or a key, RevocationKey) enters the feed once: a second entry is
// an apperr.Conflict.
func (q Q) AppendRevocation(ctx context.Context, r ticketing.Revocation) (int64, error) {
	seq, err := q.nextFeedSeq(ctx)
	if err != nil {
		return 0, err
	}
	subject := r.TicketID
	if r.Kind == ticketing.RevocationKey {
		subject = keySubject + strconv.Itoa(int(r.KeyID))
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO revocations (seq, ticket_id, kind, reason, revoked_at, valid_until) VALUES ($1, $2, $3, $4, $5, $6)`,
		seq, subject, r.Kind, r.Reason, now(r.RevokedAt), now(r.ValidUntil))
	return seq, mapErr(err)
}

// nextFeedSeq takes the next feed sequence number under the feed row's
// lock (revocations and device moves share the numbering).
func (q Q) nextFeedSeq(ctx context.Context) (int64, error) {
	var seq int64
	if _, err := q.db.ExecContext(ctx, `INSERT INTO revocation_feed (id, last_seq) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`); err != nil {
		return 0, mapErr(err)
	}
	err := q.db.QueryRowContext(ctx, `UPDATE revocation_feed SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq`).Scan(&seq)
	return seq, mapErr(err)
}

// Revocations returns the feed entries after since whose ticket is still
// valid at notBefore (later ones are pruned anyway), in order, and the
// feed's last sequence number.
func (q Q) Revocations(ctx context.Context, since int64, notBefore time.Time) ([]ticketing.Revocation, int64, error) {
	var last int64
	if err := q.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(last_seq), 0) FROM revocation_feed`).Scan(&last); err != nil {
		return nil, 0, mapErr(err)
	}
	rs, err := collect(ctx, q, `SELECT seq, ticket_id, kind, reason, revoked_at, valid_until FROM revocations
		WHERE seq > $1 AND seq <= $2 AND valid_until >= $3 ORDER BY seq`, []any{since, last, now(notBefore)},
		func(scan scanner) (r ticketing.Revocation, err error) {
			err = scan(&r.Seq, &r.TicketID, &r.Kind, &r.Reason, &r.RevokedAt, &r.ValidUntil)
			r.RevokedAt, r.ValidUntil = r.RevokedAt.UTC(), r.ValidUntil.UTC()
			if id, ok := strings.CutPrefix(r.TicketID, keySubject); ok && r.Kind == ticketing.RevocationKey {
				n, _ := strconv.ParseUint(id, 10, 16)
				r.TicketID, r.KeyID = "", uint16(n)
			}
			return r, err
		})
	return rs, last, err
}

// PruneRevocations deletes the entries of tickets whose validity ended
// before before, and their device moves; it returns how many.
func (q Q) PruneRevocations(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for _, table := range []string{"revocations", "device_moves"} {
		res, err := q.db.ExecContext(ctx, `DELETE FROM `+table+` WHERE valid_until < $1`, now(before))
		n, err := affected(res, err)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// KeyRevoked reports whether inspection key kid has a revocation feed
// entry (not yet pruned).
func (q Q) KeyRevoked(ctx context.Context, kid uint16) (bool, error) {
	var n int
	err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM revocations WHERE ticket_id = $1`, keySubject+strconv.Itoa(int(kid))).Scan(&n)
	return n > 0, mapErr(err)
}
