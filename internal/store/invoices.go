package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
)

// NextNumber advances the counter of a number series inside the caller's
// transaction and returns the new value. On PostgreSQL the upsert takes the
// series row's lock until commit, so concurrent transactions (of any
// instance) get consecutive values, and a rollback returns the value: the
// series stays gap-free.
func (q Q) NextNumber(ctx context.Context, series string) (int64, error) {
	return q.nextCounter(ctx, `INSERT INTO invoice_counters (series, last_value) VALUES ($1, 1)
		ON CONFLICT (series) DO UPDATE SET last_value = invoice_counters.last_value + 1 RETURNING last_value`, series)
}

// nextCounter runs a counter's upsert for key and returns the new value.
func (q Q) nextCounter(ctx context.Context, upsert, key string) (int64, error) {
	var n int64
	err := q.db.QueryRowContext(ctx, upsert, key).Scan(&n)
	return n, mapErr(err)
}

// InsertInvoice writes an invoice row.
func (q Q) InsertInvoice(ctx context.Context, inv invoicing.Invoice) error {
	doc, err := json.Marshal(inv.Document)
	if err != nil {
		return apperr.Wrap("store.InsertInvoice", err)
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO invoices (id, account_id, environment, kind, number, identifier, customer_id,
		collection_id, refers_to, cancelled_by, electronic, gross_cents, document, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		inv.ID, inv.AccountID, string(inv.Environment), inv.Kind.String(), inv.Number, inv.Identifier, inv.CustomerID,
		inv.CollectionID, inv.RefersTo, inv.CancelledBy, inv.Electronic, int64(inv.GrossCents), string(doc), now(inv.CreatedAt))
	return mapErr(err)
}

const invoiceCols = `id, account_id, environment, kind, number, identifier, customer_id, collection_id, refers_to,
	cancelled_by, electronic, gross_cents, document, created_at`

// Invoice returns a document of one tenant; another tenant's is NotFound.
func (q Q) Invoice(ctx context.Context, accountID string, env account.Environment, id string) (invoicing.Invoice, error) {
	return q.invoiceWhere(ctx, `id = $1 AND account_id = $2 AND environment = $3`, id, accountID, string(env))
}

// InvoiceByID returns a document by id alone (downloads check the
// identifier; jobs have only the id).
func (q Q) InvoiceByID(ctx context.Context, id string) (invoicing.Invoice, error) {
	return q.invoiceWhere(ctx, `id = $1`, id)
}

func (q Q) invoiceWhere(ctx context.Context, where string, args ...any) (invoicing.Invoice, error) {
	inv, err := scanInvoice(q.db.QueryRowContext(ctx, `SELECT `+invoiceCols+` FROM invoices WHERE `+where, args...).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return inv, apperr.NotFoundf("store.Invoice", CodeInvoiceNotFound)
	}
	return inv, err
}

// scanInvoice reads a row of invoiceCols.
func scanInvoice(scan scanner) (inv invoicing.Invoice, err error) {
	var env, kind, doc string
	var cust, coll, ref, canc sql.NullString
	if err = scan(&inv.ID, &inv.AccountID, &env, &kind, &inv.Number, &inv.Identifier, &cust, &coll, &ref, &canc,
		&inv.Electronic, &inv.GrossCents, &doc, &inv.CreatedAt); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return inv, err
		}
		return inv, mapErr(err)
	}
	inv.Environment = account.Environment(env)
	inv.CreatedAt = inv.CreatedAt.UTC()
	inv.CustomerID, inv.CollectionID, inv.RefersTo, inv.CancelledBy = nullStr(cust), nullStr(coll), nullStr(ref), nullStr(canc)
	for _, k := range []invoicedoc.Kind{invoicedoc.KindInvoice, invoicedoc.KindCancellation, invoicedoc.KindPaymentNotice} {
		if k.String() == kind {
			inv.Kind = k
		}
	}
	if err := json.Unmarshal([]byte(doc), &inv.Document); err != nil {
		return inv, apperr.Wrap("store.Invoice", err)
	}
	return inv, nil
}

// Invoices is a page of an account's documents (invoices, cancellations,
// payment notices), newest first: one range of invoices_list, or of
// invoices_list_customer with a customer; a number is unique, so that
// filter reads its one row by the number's unique index.
func (q Q) Invoices(ctx context.Context, f invoicing.InvoiceFilter) (list.Page[invoicing.Invoice], error) {
	return listPage(ctx, q, invoicesSQL(f), f.Limit, scanInvoice)
}

func invoicesSQL(f invoicing.InvoiceFilter) pageStmt {
	w := newListWhere(f.Query, "")
	if f.Number != nil {
		w.add("number = $%d", *f.Number)
	}
	if f.CustomerID != nil {
		w.add("customer_id = $%d", *f.CustomerID)
	}
	return w.pageSQL(`SELECT `+invoiceCols+` FROM invoices`, "", f.Query)
}

// ClaimItem records that item is invoiced for customerKey by invoiceID. A
// second claim of the same pair is apperr.Conflict (the first invoice stands).
func (q Q) ClaimItem(ctx context.Context, itemID, customerKey, invoiceID string) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO invoice_claims (billable_item_id, customer_key, invoice_id) VALUES ($1, $2, $3)`,
		itemID, customerKey, invoiceID)
	if IsUnique(err) {
		return apperr.E("store.ClaimItem", apperr.Conflict, CodeAlreadyInvoiced,
			"billable item "+itemID+" is already invoiced for this customer")
	}
	return mapErr(err)
}

// ReleaseClaims makes an invoice's items invoiceable again (cancellation).
func (q Q) ReleaseClaims(ctx context.Context, invoiceID string) error {
	_, err := q.db.ExecContext(ctx, `DELETE FROM invoice_claims WHERE invoice_id = $1`, invoiceID)
	return mapErr(err)
}

// MarkCancelled sets cancelled_by once; a second cancellation is Conflict.
func (q Q) MarkCancelled(ctx context.Context, id, by string) error {
	res, err := q.db.ExecContext(ctx, `UPDATE invoices SET cancelled_by = $1 WHERE id = $2 AND cancelled_by IS NULL AND kind = 'invoice'`, by, id)
	if err != nil {
		return mapErr(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return apperr.E("store.MarkCancelled", apperr.Conflict, CodeAlreadyCancelled, "this invoice is already cancelled")
	}
	return nil
}

// InsertFile stores a generated file unless one is already stored for
// (invoice, format), and reports whether it did (the books chain a file
// they stored, docs/books.md). The first writer wins: a PDF (whose XMP ids
// differ per rendering) rendered concurrently by a download and the job,
// or by two instances, is stored once, and every caller serves the same
// bytes (GetFile after it). On PostgreSQL the losing INSERT waits for the
// winner's commit.
//
// The file's SHA-256 is recorded with it (farebox books verify compares);
// a trigger refuses every UPDATE and DELETE of a stored file.
func (q Q) InsertFile(ctx context.Context, invoiceID string, f invoicing.File, at time.Time) (bool, error) {
	sum := sha256.Sum256(f.Body)
	n, err := q.affected(ctx, `INSERT INTO invoice_files (invoice_id, format, content_type, body, created_at, sha256)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (invoice_id, format) DO NOTHING`, invoiceID, f.Format, f.ContentType, f.Body, now(at),
		hex.EncodeToString(sum[:]))
	return n == 1, mapErr(err)
}

// GetFile returns a generated file or apperr.NotFound when not (yet) there.
func (q Q) GetFile(ctx context.Context, invoiceID, format string) (invoicing.File, error) {
	f := invoicing.File{Format: format}
	err := q.db.QueryRowContext(ctx, `SELECT content_type, body FROM invoice_files WHERE invoice_id = $1 AND format = $2`,
		invoiceID, format).Scan(&f.ContentType, &f.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return f, apperr.NotFoundf("store.File", CodeFileNotFound)
	}
	return f, mapErr(err)
}

// InvoiceNumbers lists the numbers of a series prefix in order (tests).
func (q Q) InvoiceNumbers(ctx context.Context, env account.Environment) ([]string, error) {
	return collect(ctx, q, `SELECT number FROM invoices WHERE environment = $1 ORDER BY number`, []any{string(env)},
		func(scan scanner) (s string, err error) {
			err = scan(&s)
			return
		})
}

// LockInvoice serialises the writers of one invoice's files on PostgreSQL
// (a no-op update holds the row lock until commit), so exactly one of them
// sees the set of files become complete.
func (q Q) LockInvoice(ctx context.Context, id string) error {
	_, err := q.db.ExecContext(ctx, `UPDATE invoices SET id = id WHERE id = $1`, id)
	return mapErr(err)
}

// FileFormats are the formats of an invoice's stored files.
func (q Q) FileFormats(ctx context.Context, invoiceID string) ([]string, error) {
	return collect(ctx, q, `SELECT format FROM invoice_files WHERE invoice_id = $1 ORDER BY format`, []any{invoiceID},
		func(scan scanner) (f string, err error) { return f, scan(&f) })
}
