// Package books keeps the books (docs/books.md): the audit log of billable
// items, the cancellation receipts of subscriptions, and the verification
// of the invoice number series and stored files. The database refuses
// changes to all of them (migration 00019): a record enters the books
// through Append, in the transaction of the change it records, and is only
// read after that.
//
// It is shared by the use cases: invoicing appends the audit entries of
// its billable items, the application (subscriptions) the receipt of a
// cancellation, each in its own transaction; the books' own use cases
// (the audit log, a receipt and its PDF, verify) read them.
package books

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// Appender is what Append writes through: the transaction of the change
// a record is about (store.Q, or a use-case package's Queries, which
// embeds it).
type Appender interface {
	InsertAudit(ctx context.Context, e invoicing.AuditEntry) error
	InsertReceipt(ctx context.Context, r ticketing.CancellationReceipt) error
}

// Queries are the store methods the books call.
type Queries interface {
	Appender
	kit.CursorReader
	AuditLog(ctx context.Context, f invoicing.AuditFilter) (list.Page[invoicing.AuditEntry], error)
	Subscription(ctx context.Context, accountID string, env account.Environment, id string) (ticketing.Subscription, error)
	Receipt(ctx context.Context, accountID string, env account.Environment, subscriptionID string) (ticketing.CancellationReceipt, error)
	AllInvoiceNumbers(ctx context.Context) ([]string, error)
	InvoiceCounters(ctx context.Context) (map[string]int64, error)
	StoredFiles(ctx context.Context, afterInvoice, afterFormat string, limit int) ([]invoicing.StoredFile, error)
}

// DB is the store as the books see it (store.NewView[books.Queries]).
type DB = kit.DB[Queries]

// Books appends records to the books and serves what they hold.
type Books struct {
	kit.Base[DB]
	seller invoicedoc.Seller // the letterhead of a receipt's PDF
	links  *kit.Links        // the base of a receipt's PDF link (nil: none)
}

// New returns the books over db; seller is the letterhead of a receipt's
// PDF, links the base URL of the link a receipt shows to it.
func New(db DB, c clock.Clock, ids ident.Prefix, seller invoicedoc.Seller, links *kit.Links) *Books {
	return &Books{Base: kit.NewBase(db, c, ids), seller: seller, links: links}
}

// A Record is one record of the books, made by ItemChange or Cancellation
// and written by Append.
type Record struct {
	audit   *invoicing.AuditEntry
	receipt *ticketing.CancellationReceipt
}

// ItemChange is the audit entry of a change of billable item itemID by p
// (action: invoicing.Audit…, detail: what the log shows of it), dated at
// the item's time at (a test clock's for an item on a clock).
func ItemChange(p account.Principal, itemID, action string, detail map[string]any, at time.Time) Record {
	return Record{audit: &invoicing.AuditEntry{AccountID: p.AccountID, Environment: p.Environment,
		ObjectType: "billable_item", ObjectID: itemID, Action: action, Actor: account.ActorOf(p), Detail: detail, CreatedAt: at}}
}

// Cancellation is the receipt (§ 312k BGB) of subscription s's ordinary
// cancellation by p, received at receivedAt and ending at end, written at
// now; productName is the product's name as the catalog has it (the
// product id when the catalog lacks it).
func Cancellation(p account.Principal, s ticketing.Subscription, productName string, receivedAt, end, now time.Time) Record {
	return Record{receipt: &ticketing.CancellationReceipt{SubscriptionID: s.ID, AccountID: s.AccountID, Environment: s.Environment,
		ProductID: s.ProductID, ProductName: productName, Type: ticketing.CancellationOrdinary, ReceivedAt: receivedAt, EffectiveEnd: end,
		Actor: account.ActorOf(p), CreatedAt: now}}
}

// Append appends records to the books through q, the transaction of the
// change they record: a change that fails leaves no record, and a record
// is never written without its change. It is the one way into the books.
func (b *Books) Append(ctx context.Context, q Appender, recs ...Record) error {
	for _, r := range recs {
		switch {
		case r.audit != nil:
			e := *r.audit
			e.ID = b.IDs.New("audit")
			if err := q.InsertAudit(ctx, e); err != nil {
				return err
			}
		case r.receipt != nil:
			rc := *r.receipt
			rc.ID = b.IDs.New("receipt")
			if err := q.InsertReceipt(ctx, rc); err != nil {
				return err
			}
		}
	}
	return nil
}
