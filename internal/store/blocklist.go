package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/catalog"
	"github.com/farebox/farebox/internal/ticketing"
)

// The blocklists (migration 00041, docs/blocklist.md): the revocation
// feed's entries with what the exported lists need of their tickets, and
// the imported entries of external lists with each source's cursor.

// BlocklistRevocations returns at most limit feed entries after since
// whose ticket is still valid at notBefore, in order, each with its
// ticket's VDV number and its product's barcode profile, and the feed's
// last sequence number.
func (q Q) BlocklistRevocations(ctx context.Context, since int64, limit int, notBefore time.Time) ([]ticketing.RevokedTicket, int64, error) {
	var last int64
	if err := q.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(last_seq), 0) FROM revocation_feed`).Scan(&last); err != nil {
		return nil, 0, mapErr(err)
	}
	profiles := map[string]string{}
	var products []string
	rs, err := collect(ctx, q, `SELECT r.seq, r.ticket_id, r.kind, r.reason, r.revoked_at, r.valid_until, t.vdv_number, t.product_id
		FROM revocations r LEFT JOIN tickets t ON t.id = r.ticket_id
		WHERE r.seq > $1 AND r.seq <= $2 AND r.valid_until >= $3 ORDER BY r.seq LIMIT `+strconv.Itoa(limit),
		[]any{since, last, now(notBefore)},
		func(scan scanner) (r ticketing.RevokedTicket, err error) {
			var n sql.NullInt64
			var product sql.NullString
			err = scan(&r.Seq, &r.TicketID, &r.Kind, &r.Reason, &r.RevokedAt, &r.ValidUntil, &n, &product)
			r.RevokedAt, r.ValidUntil, r.VDVNumber = r.RevokedAt.UTC(), r.ValidUntil.UTC(), uint32(n.Int64)
			if r.Kind == ticketing.RevocationKey {
				r.TicketID = "" // a key entry names no ticket (Revocations)
			}
			if _, seen := profiles[product.String]; product.Valid && !seen {
				profiles[product.String] = ""
				products = append(products, product.String)
			}
			r.Barcode = product.String // the product id until resolved below
			return r, err
		})
	if err != nil || len(products) == 0 {
		return rs, last, err
	}
	ps, err := jsonRows[catalog.Product](ctx, q, `SELECT data FROM products WHERE id IN (`+q.placeholders(1, len(products))+`)`, anys(products)...)
	if err != nil {
		return nil, 0, err
	}
	for _, p := range ps {
		profiles[p.ID] = p.Barcode()
	}
	for i := range rs {
		rs[i].Barcode = profiles[rs[i].Barcode]
	}
	return rs, last, nil
}

// BlocklistCursor is the last_seq of source's last import (0: none).
func (q Q) BlocklistCursor(ctx context.Context, source string) (int64, error) {
	var seq int64
	err := q.db.QueryRowContext(ctx, `SELECT last_seq FROM blocklist_sources WHERE source = $1`, source).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return seq, mapErr(err)
}

// SetBlocklistCursor stores source's cursor after an import at at.
func (q Q) SetBlocklistCursor(ctx context.Context, source string, lastSeq int64, at time.Time) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO blocklist_sources (source, last_seq, imported_at) VALUES ($1, $2, $3)
		ON CONFLICT (source) DO UPDATE SET last_seq = excluded.last_seq, imported_at = excluded.imported_at`, source, lastSeq, now(at))
	return mapErr(err)
}

// AddBlocklistEntries stores the entries not stored yet (by source,
// scheme, issuer and number) and returns those it added; entries of ended
// validity are deleted first.
func (q Q) AddBlocklistEntries(ctx context.Context, es []ticketing.BlockEntry, at time.Time) ([]ticketing.BlockEntry, error) {
	if _, err := q.db.ExecContext(ctx, `DELETE FROM blocklist_entries WHERE valid_until < $1`, now(at)); err != nil {
		return nil, mapErr(err)
	}
	var added []ticketing.BlockEntry
	for _, e := range es {
		res, err := q.db.ExecContext(ctx, `INSERT INTO blocklist_entries (source, scheme, issuer, number, target, reason, valid_until, imported_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
			e.Source, e.Scheme, e.Issuer, e.Number, e.Target, e.Reason, now(e.ValidUntil), now(at))
		if err != nil {
			return nil, mapErr(err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, mapErr(err)
		} else if n == 1 {
			added = append(added, e)
		}
	}
	return added, nil
}

// MarkBlocklistEntry records the ticket entry e voided.
func (q Q) MarkBlocklistEntry(ctx context.Context, e ticketing.BlockEntry, ticketID string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE blocklist_entries SET ticket_id = $1 WHERE source = $2 AND scheme = $3 AND issuer = $4 AND number = $5`,
		ticketID, e.Source, e.Scheme, e.Issuer, e.Number)
	return mapErr(err)
}

// BlocklistEntries lists the stored entries of source (every source when
// ""), ordered by scheme, issuer and number.
func (q Q) BlocklistEntries(ctx context.Context, source string) ([]ticketing.BlockEntry, error) {
	return collect(ctx, q, `SELECT source, scheme, issuer, number, target, reason, valid_until, COALESCE(ticket_id, '') FROM blocklist_entries
		WHERE $1 = '' OR source = $1 ORDER BY source, scheme, issuer, number`, []any{source},
		func(scan scanner) (e ticketing.BlockEntry, err error) {
			err = scan(&e.Source, &e.Scheme, &e.Issuer, &e.Number, &e.Target, &e.Reason, &e.ValidUntil, &e.TicketID)
			e.ValidUntil = e.ValidUntil.UTC()
			return e, err
		})
}

// ValidTicketsByVDVNumber maps each of numbers held by a ticket that is
// neither invalidated nor ended at at to that ticket's id.
func (q Q) ValidTicketsByVDVNumber(ctx context.Context, numbers []uint32, at time.Time) (map[uint32]string, error) {
	out := map[uint32]string{}
	for len(numbers) > 0 {
		chunk := numbers[:min(len(numbers), 500)]
		numbers = numbers[len(chunk):]
		args := []any{now(at)}
		for _, n := range chunk {
			args = append(args, int64(n))
		}
		err := q.eachRow(ctx, `SELECT id, vdv_number FROM tickets WHERE valid_until >= $1 AND invalidated_at IS NULL AND vdv_number IN (`+
			q.placeholders(2, len(chunk))+`)`, args, func(scan scanner) error {
			var id string
			var n int64
			if err := scan(&id, &n); err != nil {
				return err
			}
			out[uint32(n)] = id
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ValidTicketIDsOfProfile lists the ids of the tickets of the stored
// products with barcode profile (catalog.Barcode…) that are neither
// invalidated nor ended at at.
func (q Q) ValidTicketIDsOfProfile(ctx context.Context, profile string, at time.Time) ([]string, error) {
	ps, err := jsonRows[catalog.Product](ctx, q, `SELECT data FROM products`)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, p := range ps {
		if p.Barcode() == profile {
			ids = append(ids, p.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return collect(ctx, q, `SELECT id FROM tickets WHERE valid_until >= $1 AND invalidated_at IS NULL AND product_id IN (`+
		q.placeholders(2, len(ids))+`)`, append([]any{now(at)}, anys(ids)...),
		func(scan scanner) (id string, err error) { return id, scan(&id) })
}
