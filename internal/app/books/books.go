// Package books keeps the books (docs/books.md): issued documents and
// their stored files, the audit log of billable items, the cancellation
// receipts of subscriptions, the hash chain every one of them enters, its
// signed checkpoints, and the verification of all of it. The database
// refuses changes to them (migrations 00019, 00036): a record enters the
// books through Append, in the transaction of the change it records,
// together with its chain entry, and is only read after that.
//
// It is shared by the use cases: invoicing appends its documents, their
// files and the audit entries of its billable items, the application
// (subscriptions) the receipt of a cancellation, each in its own
// transaction; the books' own use cases (the audit log, a receipt and its
// PDF, the checkpoints, verify) read them.
package books

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/ticketing"
)

// Appender is what Append writes through: the transaction of the change
// a record is about (store.Q, or a use-case package's Queries, which
// embeds it).
type Appender interface {
	InsertInvoice(ctx context.Context, inv invoicing.Invoice) error
	InsertFile(ctx context.Context, invoiceID string, f invoicing.File, at time.Time) (bool, error)
	InsertAudit(ctx context.Context, e invoicing.AuditEntry) error
	InsertReceipt(ctx context.Context, r ticketing.CancellationReceipt) error
	LockChainHead(ctx context.Context, accountID string, env account.Environment) (invoicing.ChainHead, error)
	InsertChainEntry(ctx context.Context, e invoicing.ChainEntry, salt string) error
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
	ChainHeads(ctx context.Context) ([]invoicing.ChainHead, error)
	ChainEntries(ctx context.Context, accountID string, env account.Environment, afterSeq int64, limit int) ([]invoicing.ChainEntry, error)
	ChainRecords(ctx context.Context, entries []invoicing.ChainEntry) (invoicing.ChainRecords, error)
	UnchainedRecords(ctx context.Context, limit int) ([]invoicing.ChainRef, int, error)
	Checkpoints(ctx context.Context) ([]invoicing.Checkpoint, map[string]int64, error)
	NextSignatureCounter(ctx context.Context, keyID string) (int64, error)
	InsertCheckpoint(ctx context.Context, c invoicing.Checkpoint) error
	LockCheckpointSigning(ctx context.Context) (time.Time, error)
	RegisterBooksKey(ctx context.Context, keyID, public string) error
	BooksKeys(ctx context.Context, keyIDs []string) (map[string]string, error)
	ChainCheckpoint(ctx context.Context, accountID string, env account.Environment, keyID string, counter int64) (invoicing.Checkpoint, bool, error)
	ChainCheckpoints(ctx context.Context, f invoicing.CheckpointFilter) (list.Page[invoicing.Checkpoint], error)
	ChainEntryOf(ctx context.Context, accountID string, env account.Environment, kind, recordID string) (invoicing.ChainEntry, error)
}

// DB is the store as the books see it (store.NewView[books.Queries]).
type DB = kit.DB[Queries]

// Books appends records to the books and serves what they hold.
type Books struct {
	kit.Base[DB]
	seller invoicedoc.Seller // the letterhead of a receipt's PDF
	links  *kit.Links        // the base of a receipt's PDF link (nil: none)
	pdf    *pdf.Queue        // the renderer's queue of a receipt's PDF
}

// New returns the books over db; seller is the letterhead of a receipt's
// PDF, links the base URL of the link a receipt shows to it, renderer the
// server's queue at the PDF renderer (nil: the process's, of
// pdf.DefaultLimits).
func New(db DB, c clock.Clock, ids ident.Prefix, seller invoicedoc.Seller, links *kit.Links, renderer *pdf.Queue) *Books {
	return &Books{Base: kit.NewBase(db, c, ids), seller: seller, links: links, pdf: renderer}
}

// A Record is one record of the books, made by Issued, StoredFile,
// ItemChange or Cancellation and written by Append.
type Record struct {
	invoice *invoicing.Invoice
	file    *fileRecord
	audit   *invoicing.AuditEntry
	receipt *ticketing.CancellationReceipt
}

type fileRecord struct {
	inv invoicing.Invoice
	f   invoicing.File
	at  time.Time
}

// Issued is an issued document (invoice, cancellation, payment notice),
// complete with its id, number and document.
func Issued(inv invoicing.Invoice) Record { return Record{invoice: &inv} }

// StoredFile is a generated file f of document inv, stored at at unless
// one of its format is already stored (the first stays, docs/invoicing.md).
func StoredFile(inv invoicing.Invoice, f invoicing.File, at time.Time) Record {
	return Record{file: &fileRecord{inv: inv, f: f, at: at}}
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
// is never written without its change. It is the one way into the books:
// each record it writes (a file only when it stored it) gets the next
// entry of its account's chain (docs/books.md, "The chain"), in the same
// transaction.
func (b *Books) Append(ctx context.Context, q Appender, recs ...Record) error {
	var links []chained
	for _, r := range recs {
		c, ok, err := b.write(ctx, q, r)
		if err != nil {
			return err
		}
		if ok {
			links = append(links, c)
		}
	}
	return b.link(ctx, q, links)
}

// write writes one record and returns what its entry commits to; ok is
// false for a file that was already stored.
func (b *Books) write(ctx context.Context, q Appender, r Record) (c chained, ok bool, err error) {
	switch {
	case r.invoice != nil:
		inv := *r.invoice
		c = chained{accountID: inv.AccountID, env: inv.Environment, ref: invoicing.ChainRef{Kind: KindInvoice, RecordID: inv.ID}}
		if c.recordHash, err = invoiceHash(inv); err != nil {
			return c, false, err
		}
		if personal(inv.Document) != nil {
			c.salt = newSalt()
			if c.commitment, err = commitment(inv.Document, c.salt); err != nil {
				return c, false, err
			}
		}
		return c, true, q.InsertInvoice(ctx, inv)
	case r.file != nil:
		fr := r.file
		if ok, err = q.InsertFile(ctx, fr.inv.ID, fr.f, fr.at); err != nil || !ok {
			return c, false, err
		}
		sum := sha256.Sum256(fr.f.Body)
		return chained{accountID: fr.inv.AccountID, env: fr.inv.Environment,
			ref:        invoicing.ChainRef{Kind: KindFile, RecordID: fr.inv.ID + "/" + fr.f.Format},
			recordHash: fileHash(fr.inv.ID, fr.f.Format, hex.EncodeToString(sum[:]))}, true, nil
	case r.audit != nil:
		e := *r.audit
		e.ID = b.IDs.New("audit")
		c = chained{accountID: e.AccountID, env: e.Environment, ref: invoicing.ChainRef{Kind: KindAudit, RecordID: e.ID}}
		if c.recordHash, err = auditHash(e); err != nil {
			return c, false, err
		}
		return c, true, q.InsertAudit(ctx, e)
	case r.receipt != nil:
		rc := *r.receipt
		rc.ID = b.IDs.New("receipt")
		return chained{accountID: rc.AccountID, env: rc.Environment, ref: invoicing.ChainRef{Kind: KindReceipt, RecordID: rc.ID},
			recordHash: receiptHash(rc)}, true, q.InsertReceipt(ctx, rc)
	}
	return c, false, nil
}

// link appends an entry for each record to its account's chain, in order:
// it takes the chain's head (which serialises the appends to one chain),
// and each entry moves it.
func (b *Books) link(ctx context.Context, q Appender, links []chained) error {
	now := b.Clock.Now().UTC().Truncate(time.Microsecond)
	heads := map[[2]string]*invoicing.ChainHead{}
	for _, l := range links {
		key := [2]string{l.accountID, string(l.env)}
		h := heads[key]
		if h == nil {
			got, err := q.LockChainHead(ctx, l.accountID, l.env)
			if err != nil {
				return err
			}
			if got.Size == 0 {
				got.HeadHash = genesis
			}
			h, heads[key] = &got, &got
		}
		e := invoicing.ChainEntry{AccountID: l.accountID, Environment: l.env, Seq: h.Size + 1, Kind: l.ref.Kind, RecordID: l.ref.RecordID,
			RecordHash: l.recordHash, Commitment: l.commitment, PrevHash: h.HeadHash, CreatedAt: now}
		e.EntryHash = entryHash(e)
		if err := q.InsertChainEntry(ctx, e, l.salt); err != nil {
			return err
		}
		h.Size, h.HeadHash = e.Seq, e.EntryHash
	}
	return nil
}
