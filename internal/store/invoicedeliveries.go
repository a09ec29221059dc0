package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
)

// The deliveries of invoicing documents to their buyers and the log of
// their attempts (migration 00037, docs/invoicing.md "Delivery to the
// buyer").

// AddInvoiceDelivery writes a delivery (its status as given, normally
// pending, without attempts) in the caller's transaction: the issuing
// transaction of its document, or a resend's.
func (q Q) AddInvoiceDelivery(ctx context.Context, d invoicing.Delivery) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO invoice_deliveries (id, invoice_id, account_id, environment, channel,
		recipient, status, attempts, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $8)`,
		d.ID, d.InvoiceID, d.AccountID, string(d.Environment), d.Channel, d.Recipient, d.Status, now(d.CreatedAt))
	return mapErr(err)
}

const invoiceDeliveryCols = `id, invoice_id, account_id, environment, channel, recipient, status, created_at, updated_at`

// InvoiceDelivery returns a delivery with its attempts by id (the job has
// only the id); an unknown id is NotFound.
func (q Q) InvoiceDelivery(ctx context.Context, id string) (invoicing.Delivery, error) {
	ds, err := q.invoiceDeliveries(ctx, `id = $1`, id)
	if err == nil && len(ds) == 0 {
		err = apperr.NotFoundf("store.InvoiceDelivery", CodeInvoiceDeliveryNotFound)
	}
	if err != nil {
		return invoicing.Delivery{}, err
	}
	return ds[0], nil
}

// InvoiceDeliveries lists the deliveries of a document with their
// attempts, oldest first.
func (q Q) InvoiceDeliveries(ctx context.Context, invoiceID string) ([]invoicing.Delivery, error) {
	return q.invoiceDeliveries(ctx, `invoice_id = $1`, invoiceID)
}

func (q Q) invoiceDeliveries(ctx context.Context, where, arg string) ([]invoicing.Delivery, error) {
	ds, err := collect(ctx, q, `SELECT `+invoiceDeliveryCols+` FROM invoice_deliveries WHERE `+where+` ORDER BY created_at, id`,
		[]any{arg}, func(scan scanner) (d invoicing.Delivery, err error) {
			var env string
			err = scan(&d.ID, &d.InvoiceID, &d.AccountID, &env, &d.Channel, &d.Recipient, &d.Status, &d.CreatedAt, &d.UpdatedAt)
			d.Environment, d.CreatedAt, d.UpdatedAt = account.Environment(env), d.CreatedAt.UTC(), d.UpdatedAt.UTC()
			return d, err
		})
	if err != nil || len(ds) == 0 {
		return ds, err
	}
	at := map[string]int{}
	for i, d := range ds {
		at[d.ID] = i
	}
	err = q.eachRow(ctx, `SELECT a.delivery_id, a.n, a.at, a.outcome, a.reply FROM invoice_delivery_attempts a
		JOIN invoice_deliveries d ON d.id = a.delivery_id WHERE d.`+where+` ORDER BY a.delivery_id, a.n`, []any{arg},
		func(scan scanner) error {
			var id string
			var a invoicing.DeliveryAttempt
			if err := scan(&id, &a.N, &a.At, &a.Outcome, &a.Reply); err != nil {
				return err
			}
			a.At = a.At.UTC()
			ds[at[id]].Attempts = append(ds[at[id]].Attempts, a)
			return nil
		})
	return ds, err
}

// RecordDeliveryAttempt logs the next attempt of a delivery that is not
// final yet (pending or deferred) and sets its status to the attempt's
// outcome, in one transaction of the caller's. It returns the attempt's
// number, or 0 when the delivery was already final (a job run again after
// its attempt was recorded): then nothing is written.
func (q Q) RecordDeliveryAttempt(ctx context.Context, id string, a invoicing.DeliveryAttempt) (int, error) {
	var n int
	err := q.db.QueryRowContext(ctx, `UPDATE invoice_deliveries SET status = $2, attempts = attempts + 1, updated_at = $3
		WHERE id = $1 AND status IN ($4, $5) RETURNING attempts`, id, a.Outcome, now(a.At),
		invoicing.DeliveryPending, invoicing.DeliveryDeferred).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, mapErr(err)
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO invoice_delivery_attempts (delivery_id, n, at, outcome, reply)
		VALUES ($1, $2, $3, $4, $5)`, id, n, now(a.At), a.Outcome, a.Reply)
	return n, mapErr(err)
}
