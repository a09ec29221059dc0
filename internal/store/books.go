package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// The books (docs/books.md): the audit log, cancellation receipts and what
// farebox books verify reads. Triggers of migration 00019 refuse every
// UPDATE and DELETE of these rows, of issued invoices (except setting
// cancelled_by once) and of stored files, on both engines.

// InsertAudit appends an entry to the audit log.
func (q Q) InsertAudit(ctx context.Context, e invoicing.AuditEntry) error {
	detail, err := json.Marshal(e.Detail)
	if err != nil {
		return apperr.Wrap("store.InsertAudit", err)
	}
	_, err = q.db.ExecContext(ctx, `INSERT INTO audit_log (id, account_id, environment, object_type, object_id, action,
		actor_type, actor_id, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		e.ID, e.AccountID, string(e.Environment), e.ObjectType, e.ObjectID, e.Action, string(e.Actor.Type), e.Actor.ID,
		string(detail), now(e.CreatedAt))
	return mapErr(err)
}

const auditCols = `id, account_id, environment, object_type, object_id, action, actor_type, actor_id, detail, created_at`

func scanAudit(scan scanner) (e invoicing.AuditEntry, err error) {
	var env, actorType, detail string
	if err = scan(&e.ID, &e.AccountID, &env, &e.ObjectType, &e.ObjectID, &e.Action, &actorType, &e.Actor.ID, &detail, &e.CreatedAt); err != nil {
		return e, err
	}
	e.Environment, e.Actor.Type, e.CreatedAt = account.Environment(env), account.ActorType(actorType), e.CreatedAt.UTC()
	if err := json.Unmarshal([]byte(detail), &e.Detail); err != nil {
		return e, apperr.Wrap("store.AuditLog", err)
	}
	return e, nil
}

// AuditLog is a page of an account's audit log, newest first: one range
// of audit_log_list (with an object id, the rows of that range for it).
func (q Q) AuditLog(ctx context.Context, f invoicing.AuditFilter) (list.Page[invoicing.AuditEntry], error) {
	return listPage(ctx, q, auditSQL(f), f.Limit, scanAudit)
}

func auditSQL(f invoicing.AuditFilter) pageStmt {
	w := newListWhere(f.Query, "")
	if f.ObjectID != nil {
		w.add("object_id = $%d", *f.ObjectID)
	}
	return w.pageSQL(`SELECT `+auditCols+` FROM audit_log`, "", f.Query)
}

// InsertReceipt writes a subscription's cancellation receipt; a second one
// for the same subscription is apperr.Conflict.
func (q Q) InsertReceipt(ctx context.Context, r ticketing.CancellationReceipt) error {
	_, err := q.db.ExecContext(ctx, `INSERT INTO cancellation_receipts (id, subscription_id, account_id, environment, product_id,
		product_name, cancellation_type, received_at, effective_end, actor_type, actor_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		r.ID, r.SubscriptionID, r.AccountID, string(r.Environment), r.ProductID, r.ProductName, r.Type,
		now(r.ReceivedAt), now(r.EffectiveEnd), string(r.Actor.Type), r.Actor.ID, now(r.CreatedAt))
	return mapErr(err)
}

// Receipt is the cancellation receipt of one of a tenant's subscriptions;
// none (not cancelled, cancelled before receipts existed, another
// tenant's) is NotFound.
func (q Q) Receipt(ctx context.Context, accountID string, env account.Environment, subscriptionID string) (ticketing.CancellationReceipt, error) {
	r, err := scanReceipt(q.db.QueryRowContext(ctx, `SELECT `+receiptCols+` FROM cancellation_receipts
		WHERE subscription_id = $1 AND account_id = $2 AND environment = $3`, subscriptionID, accountID, string(env)).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return r, apperr.NotFoundf("store.Receipt", CodeReceiptNotFound)
	}
	return r, mapErr(err)
}

const receiptCols = `id, subscription_id, account_id, environment, product_id, product_name,
		cancellation_type, received_at, effective_end, actor_type, actor_id, created_at`

// scanReceipt reads a row of receiptCols.
func scanReceipt(scan scanner) (r ticketing.CancellationReceipt, err error) {
	var e, actorType string
	err = scan(&r.ID, &r.SubscriptionID, &r.AccountID, &e, &r.ProductID, &r.ProductName, &r.Type, &r.ReceivedAt, &r.EffectiveEnd,
		&actorType, &r.Actor.ID, &r.CreatedAt)
	r.Environment, r.Actor.Type = account.Environment(e), account.ActorType(actorType)
	r.ReceivedAt, r.EffectiveEnd, r.CreatedAt = r.ReceivedAt.UTC(), r.EffectiveEnd.UTC(), r.CreatedAt.UTC()
	return r, err
}

// AllInvoiceNumbers are the numbers of every issued document, all series.
func (q Q) AllInvoiceNumbers(ctx context.Context) ([]string, error) {
	return collect(ctx, q, `SELECT number FROM invoices ORDER BY number`, nil,
		func(scan scanner) (s string, err error) { return s, scan(&s) })
}

// InvoiceCounters are the series' counters (the last number taken).
func (q Q) InvoiceCounters(ctx context.Context) (map[string]int64, error) {
	return keyed[int64](ctx, q, `SELECT series, last_value FROM invoice_counters`)
}

// StoredFiles are up to limit stored files after (invoiceID, format) in
// that order, with their documents' numbers and recorded hashes: the
// keyset pages of farebox books verify, so no more than one page of
// bodies is in memory.
func (q Q) StoredFiles(ctx context.Context, afterInvoice, afterFormat string, limit int) ([]invoicing.StoredFile, error) {
	// One range of invoice_files' primary key per page; the number by the
	// invoice's primary key per row (a join let the planners scan).
	return collect(ctx, q, `SELECT f.invoice_id, (SELECT i.number FROM invoices i WHERE i.id = f.invoice_id), f.format, f.sha256, f.body
		FROM invoice_files f WHERE (f.invoice_id, f.format) > ($1, $2)
		ORDER BY f.invoice_id, f.format LIMIT $3`, []any{afterInvoice, afterFormat, limit},
		func(scan scanner) (f invoicing.StoredFile, err error) {
			return f, scan(&f.InvoiceID, &f.Number, &f.Format, &f.SHA256, &f.Body)
		})
}
