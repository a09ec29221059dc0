package store

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/farebox/farebox/internal/apperr"
)

// VDV-KA ticket numbers (migration 00032, docs/barcodes.md "Ticket
// numbers"): one counter for the service's VDV issuer, taken under its
// row lock inside the issuing transaction, so numbers are unique and a
// rolled-back issue gives its number back.

// MaxVDVNumber is the largest ticket number the 4-byte field holds.
const MaxVDVNumber = math.MaxUint32

// NextVDVNumber takes the next ticket number, skipping numbers a ticket
// still valid at validAt holds (tickets that keep the hash-derived
// number of before the counter). Past MaxVDVNumber it fails: the field
// cannot hold more.
func (q Q) NextVDVNumber(ctx context.Context, validAt time.Time) (uint32, error) {
	if err := q.lockVDVNumbers(ctx); err != nil {
		return 0, err
	}
	for {
		var n int64
		if err := q.db.QueryRowContext(ctx, `UPDATE vdv_ticket_numbers SET last_number = last_number + 1 WHERE id = 1 RETURNING last_number`).Scan(&n); err != nil {
			return 0, mapErr(err)
		}
		if n > MaxVDVNumber {
			return 0, apperr.E("store.NextVDVNumber", apperr.Unavailable, CodeVDVNumbersExhausted,
				fmt.Sprintf("all %d VDV ticket numbers are used", int64(MaxVDVNumber)))
		}
		var taken int
		if err := q.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tickets WHERE vdv_number = $1 AND valid_until >= $2`, n, now(validAt)).Scan(&taken); err != nil {
			return 0, mapErr(err)
		}
		if taken == 0 {
			return uint32(n), nil
		}
	}
}

// lockVDVNumbers makes sure the counter row exists and takes its lock
// (PostgreSQL; SQLite has one writer).
func (q Q) lockVDVNumbers(ctx context.Context) error {
	if _, err := q.db.ExecContext(ctx, `INSERT INTO vdv_ticket_numbers (id, last_number) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`); err != nil {
		return mapErr(err)
	}
	_, err := q.db.ExecContext(ctx, `UPDATE vdv_ticket_numbers SET last_number = last_number WHERE id = 1`)
	return mapErr(err)
}

// UnnumberedVDVTickets lists the ids of tickets of productIDs without a
// stored number that are still valid at validAt, at most limit.
func (q Q) UnnumberedVDVTickets(ctx context.Context, productIDs []string, validAt time.Time, limit int) ([]string, error) {
	if len(productIDs) == 0 {
		return nil, nil
	}
	args := append([]any{now(validAt)}, anys(productIDs)...)
	return collect(ctx, q, `SELECT id FROM tickets WHERE vdv_number IS NULL AND valid_until >= $1 AND product_id IN (`+
		q.placeholders(2, len(productIDs))+`) ORDER BY id LIMIT `+strconv.Itoa(limit), args,
		func(scan scanner) (id string, err error) { return id, scan(&id) })
}

// SetVDVNumbers stores numbers (by ticket id) of tickets that have none,
// under the counter's lock (so no number is handed out meanwhile).
func (q Q) SetVDVNumbers(ctx context.Context, numbers map[string]uint32) error {
	if err := q.lockVDVNumbers(ctx); err != nil {
		return err
	}
	for id, n := range numbers {
		if _, err := q.db.ExecContext(ctx, `UPDATE tickets SET vdv_number = $1 WHERE id = $2 AND vdv_number IS NULL`, int64(n), id); err != nil {
			return mapErr(err)
		}
	}
	return nil
}
