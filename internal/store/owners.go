package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
)

// The owners of capability records: a coupon, ticket or invoice id is the
// credential of a keyless request, which is billed to the record's account
// (docs/operations.md "Billing"). One indexed point read each; the owner of
// a record never changes.

// CouponOwner returns the account owning coupon id (NotFound when none).
func (q Q) CouponOwner(ctx context.Context, id string) (account.Owner, error) {
	o, _, err := q.owner(ctx, "store.CouponOwner", "coupon_not_found", `SELECT account_id, environment, '' FROM coupons WHERE id = $1`, id)
	return o, err
}

// TicketOwner returns the account owning ticket id (NotFound when none).
func (q Q) TicketOwner(ctx context.Context, id string) (account.Owner, error) {
	o, _, err := q.owner(ctx, "store.TicketOwner", "ticket_not_found", `SELECT account_id, environment, '' FROM tickets WHERE id = $1`, id)
	return o, err
}

// InvoiceOwner returns the account owning invoice id and the invoice's
// download identifier, which the caller compares in constant time.
func (q Q) InvoiceOwner(ctx context.Context, id string) (account.Owner, string, error) {
	return q.owner(ctx, "store.InvoiceOwner", "invoice_not_found", `SELECT account_id, environment, identifier FROM invoices WHERE id = $1`, id)
}

func (q Q) owner(ctx context.Context, op, notFound, query, id string) (account.Owner, string, error) {
	var o account.Owner
	var env, secret string
	err := q.db.QueryRowContext(ctx, query, id).Scan(&o.AccountID, &env, &secret)
	if errors.Is(err, sql.ErrNoRows) {
		return o, "", apperr.NotFoundf(op, notFound)
	}
	if err != nil {
		return o, "", mapErr(err)
	}
	o.Environment = account.Environment(env)
	return o, secret, nil
}
