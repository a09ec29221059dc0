package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/store"
	"github.com/farebox/farebox/internal/ticketing"
)

// The books (docs/books.md): the audit log of billable items, the
// cancellation receipts of subscriptions and the verification of the
// invoice number series and stored files. The database refuses changes to
// all of them (migration 00019); this file only appends and reads.

// audit appends an audit log entry about billable item itemID, in the
// transaction of the change it records, dated at the item's time at (from
// timeOf: a test clock's for an item on a clock).
func (a *App) audit(ctx context.Context, q store.Q, p account.Principal, itemID, action string, detail map[string]any, at time.Time) error {
	return q.InsertAudit(ctx, invoicing.AuditEntry{ID: a.IDs.New("audit"), AccountID: p.AccountID, Environment: p.Environment,
		ObjectType: "billable_item", ObjectID: itemID, Action: action, Actor: account.ActorOf(p), Detail: detail, CreatedAt: at})
}

// assignmentDetail is an assignment as the audit log shows it (the names
// of PUT billable_item).
func assignmentDetail(as invoicing.Assignment) map[string]any {
	out := map[string]any{"customer_id": as.CustomerID, "split": nil, "billablable_collection_id": as.CollectionID}
	if as.Split != nil {
		split := make([]map[string]any, 0, len(as.Split))
		for _, s := range as.Split {
			split = append(split, map[string]any{"customer_id": s.CustomerID, "amount_in_cents": int64(s.AmountInCents)})
		}
		out["split"] = split
	}
	return out
}

// auditInvoiced records that inv claims each of items, or (released) that
// its cancellation released them, at the time of the document doing it.
func (a *App) auditInvoiced(ctx context.Context, q store.Q, p account.Principal, inv invoicing.Invoice, items []string, cancellation *invoicing.Invoice) error {
	seen := map[string]bool{}
	for _, id := range items {
		if seen[id] {
			continue
		}
		seen[id] = true
		action, detail := invoicing.AuditInvoiced, map[string]any{"invoice_id": inv.ID, "invoice_number": inv.Number, "customer_id": inv.CustomerID}
		if cancellation != nil {
			action = invoicing.AuditInvoiceCancelled
			detail["cancellation_id"], detail["cancellation_number"] = cancellation.ID, cancellation.Number
		}
		at := inv.CreatedAt
		if cancellation != nil {
			at = cancellation.CreatedAt
		}
		if err := a.audit(ctx, q, p, id, action, detail, at); err != nil {
			return err
		}
	}
	return nil
}

// AuditActorJSON is who made a change.
type AuditActorJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// AuditEntryJSON is an entry of GET /v9/ticketing/audit_log.json.
type AuditEntryJSON struct {
	ID          string         `json:"id"`
	Object      string         `json:"object"`
	Created     timestamp      `json:"created"`
	Environment string         `json:"environment"`
	ObjectType  string         `json:"object_type"`
	ObjectID    string         `json:"object_id"`
	Action      string         `json:"action"`
	Actor       AuditActorJSON `json:"actor"`
	Detail      map[string]any `json:"detail"`
}

func auditView(e invoicing.AuditEntry) AuditEntryJSON {
	d := e.Detail
	if d == nil {
		d = map[string]any{}
	}
	return AuditEntryJSON{ID: e.ID, Object: "audit_entry", Created: timestamp(e.CreatedAt), Environment: string(e.Environment),
		ObjectType: e.ObjectType, ObjectID: e.ObjectID, Action: e.Action,
		Actor: AuditActorJSON{Type: string(e.Actor.Type), ID: e.Actor.ID}, Detail: d}
}

// AuditRequest is GET /v9/ticketing/audit_log.json's query, as sent;
// ObjectID is nil when absent.
type AuditRequest struct {
	ListRequest
	ObjectID *string
}

// AuditLog lists the audit log of the caller's account and environment,
// newest first (docs/books.md). The operator CLI reads it with a principal
// naming the account and environment.
func (a *App) AuditLog(ctx context.Context, p account.Principal, req AuditRequest) (ListJSON[AuditEntryJSON], error) {
	var l listParams
	f := invoicing.AuditFilter{ObjectID: req.ObjectID}
	return runList(ctx, a, p, "app.AuditLog", "audit_log", "audit entry", req.ListRequest, &l, &f.Query,
		func(q store.Q) (list.Page[invoicing.AuditEntry], error) { return q.AuditLog(ctx, f) },
		func(e invoicing.AuditEntry) (AuditEntryJSON, error) { return auditView(e), nil })
}

// newReceipt is the receipt of subscription s's cancellation received at
// receivedAt, ending at end.
func (a *App) newReceipt(p account.Principal, s ticketing.Subscription, receivedAt, end, now time.Time) ticketing.CancellationReceipt {
	name := s.ProductID
	if pr, ok := a.Catalog().Product(s.ProductID); ok {
		name = pr.LocalTicketName
	}
	return ticketing.CancellationReceipt{ID: a.IDs.New("receipt"), SubscriptionID: s.ID, AccountID: s.AccountID, Environment: s.Environment,
		ProductID: s.ProductID, ProductName: name, Type: ticketing.CancellationOrdinary, ReceivedAt: receivedAt, EffectiveEnd: end,
		Actor: account.ActorOf(p), CreatedAt: now}
}

// ReceiptJSON is a cancellation receipt (docs/books.md).
type ReceiptJSON struct {
	ID               string    `json:"id"`
	Object           string    `json:"object"`
	SubscriptionID   string    `json:"subscription_id"`
	ProductID        string    `json:"product_id"`
	ProductName      string    `json:"product_name"`
	Environment      string    `json:"environment"`
	CancellationType string    `json:"cancellation_type"`
	ReceivedAt       timestamp `json:"received_at"`
	EffectiveEnd     timestamp `json:"effective_end"`
	ConfirmationText string    `json:"confirmation_text"`
	ReceiptPDFURL    string    `json:"receipt_pdf_url"`
}

// receiptText is the confirmation sentence a partner shows (German, the
// contract's language).
func receiptText(r ticketing.CancellationReceipt) string {
	kind := "ordentlichen"
	if r.Type == ticketing.CancellationExtraordinary {
		kind = "außerordentlichen"
	}
	return fmt.Sprintf("Wir bestätigen den Eingang Ihrer %s Kündigung des Abonnements „%s“ (%s) am %s. Das Abonnement endet mit Ablauf des %s.",
		kind, r.ProductName, r.SubscriptionID, invoicedoc.GermanDateTime(r.ReceivedAt), invoicedoc.GermanDate(r.EffectiveEnd))
}

func (a *App) receiptView(r ticketing.CancellationReceipt) ReceiptJSON {
	return ReceiptJSON{ID: r.ID, Object: "cancellation_receipt", SubscriptionID: r.SubscriptionID, ProductID: r.ProductID,
		ProductName: r.ProductName, Environment: string(r.Environment), CancellationType: r.Type,
		ReceivedAt: timestamp(r.ReceivedAt), EffectiveEnd: timestamp(r.EffectiveEnd), ConfirmationText: receiptText(r),
		ReceiptPDFURL: a.inv.BaseURL + "/v9/ticketing/subscriptions/" + r.SubscriptionID + "/cancellation_receipt.pdf"}
}

// CancelledSubscriptionJSON is the answer of DELETE …/subscriptions/{id}.json
// and the object of subscription.cancelled: the Subscription as its GET
// shows it, plus the cancellation receipt (null for a subscription
// cancelled before receipts existed).
type CancelledSubscriptionJSON struct {
	SubscriptionJSON
	CancellationReceipt *ReceiptJSON `json:"cancellation_receipt"`
}

// cancelledView is subscription id with its receipt, read through q.
func (a *App) cancelledView(ctx context.Context, q store.Q, p account.Principal, id string) (CancelledSubscriptionJSON, error) {
	d, err := a.subscriptionDetails(ctx, q, id)
	if err != nil {
		return CancelledSubscriptionJSON{}, err
	}
	out := CancelledSubscriptionJSON{SubscriptionJSON: subscriptionView(d)}
	r, err := q.Receipt(ctx, p.AccountID, p.Environment, id)
	switch {
	case err == nil:
		v := a.receiptView(r)
		out.CancellationReceipt = &v
	case apperr.KindOf(err) != apperr.NotFound:
		return out, err
	}
	return out, nil
}

// CancelledSubscription is the answer of a cancellation: the caller's
// subscription with its receipt.
func (a *App) CancelledSubscription(ctx context.Context, p account.Principal, id string) (CancelledSubscriptionJSON, error) {
	q := a.store.Read()
	if _, err := q.Subscription(ctx, p.AccountID, p.Environment, id); err != nil {
		return CancelledSubscriptionJSON{}, err
	}
	return a.cancelledView(ctx, q, p, id)
}

// CancellationReceipt returns the receipt of one of the caller's
// subscriptions: 404 subscription_not_found for another's, 404
// receipt_not_found when it is not cancelled (or was before receipts).
func (a *App) CancellationReceipt(ctx context.Context, p account.Principal, id string) (ReceiptJSON, error) {
	r, err := a.receipt(ctx, p, id)
	if err != nil {
		return ReceiptJSON{}, err
	}
	return a.receiptView(r), nil
}

func (a *App) receipt(ctx context.Context, p account.Principal, id string) (ticketing.CancellationReceipt, error) {
	q := a.store.Read()
	if _, err := q.Subscription(ctx, p.AccountID, p.Environment, id); err != nil {
		return ticketing.CancellationReceipt{}, err
	}
	return q.Receipt(ctx, p.AccountID, p.Environment, id)
}

// CancellationReceiptPDF renders the receipt as a PDF/A-3b letter from
// the stored record (the bytes differ per rendering, the content does
// not) and its file name.
func (a *App) CancellationReceiptPDF(ctx context.Context, p account.Principal, id string) ([]byte, string, error) {
	r, err := a.receipt(ctx, p, id)
	if err != nil {
		return nil, "", err
	}
	kind := "ordentliche Kündigung"
	if r.Type == ticketing.CancellationExtraordinary {
		kind = "außerordentliche Kündigung"
	}
	b, err := pdf.RenderLetter(pdf.Letter{Seller: a.inv.Seller, Title: "Kündigungsbestätigung", Reference: r.ID, Date: r.CreatedAt,
		Test: r.Environment == account.Test, TestText: "TEST · Testumgebung · keine gültige Kündigungsbestätigung",
		Rows: [][2]string{
			{"Bestätigung", r.ID},
			{"Abonnement", r.SubscriptionID},
			{"Produkt", r.ProductName + " (" + r.ProductID + ")"},
			{"Art der Kündigung", kind},
			{"Kündigung eingegangen am", invoicedoc.GermanDateTime(r.ReceivedAt)},
			{"Vertragsende", "mit Ablauf des " + invoicedoc.GermanDate(r.EffectiveEnd)},
		},
		Paragraphs: []string{receiptText(r), "Diese Bestätigung wurde nach § 312k Abs. 4 BGB automatisch erstellt."}})
	return b, r.ID + ".pdf", err
}

// BooksFinding is one problem farebox books verify found.
type BooksFinding struct {
	Kind string // number_gap, bad_number, file_hash_mismatch
	Text string
}

// BooksReport is what farebox books verify checked and found.
type BooksReport struct {
	Numbers, Series, Files, Unhashed int
	Findings                         []BooksFinding
}

// verifyPage is how many stored files VerifyBooks holds at once.
const verifyPage = 200

// VerifyBooks checks every number series for gaps (every number from 1 to
// the series' counter issued) and every stored file against the SHA-256
// recorded when it was written (docs/books.md).
func (a *App) VerifyBooks(ctx context.Context) (BooksReport, error) {
	var rep BooksReport
	q := a.store.Read()
	numbers, err := q.AllInvoiceNumbers(ctx)
	if err != nil {
		return rep, err
	}
	counters, err := q.InvoiceCounters(ctx)
	if err != nil {
		return rep, err
	}
	rep.Numbers, rep.Series = len(numbers), len(counters)
	gaps, bad := invoicing.Gaps(numbers, counters)
	for _, g := range gaps {
		rep.Findings = append(rep.Findings, BooksFinding{Kind: "number_gap", Text: g.String()})
	}
	for _, n := range bad {
		rep.Findings = append(rep.Findings, BooksFinding{Kind: "bad_number", Text: fmt.Sprintf("number %q belongs to no series", n)})
	}
	afterID, afterFormat := "", ""
	for {
		files, err := q.StoredFiles(ctx, afterID, afterFormat, verifyPage)
		if err != nil {
			return rep, err
		}
		for _, f := range files {
			rep.Files++
			sum := sha256.Sum256(f.Body)
			switch got := hex.EncodeToString(sum[:]); {
			case f.SHA256 == "":
				rep.Unhashed++
			case got != f.SHA256:
				rep.Findings = append(rep.Findings, BooksFinding{Kind: "file_hash_mismatch",
					Text: fmt.Sprintf("%s file of %s (%s): SHA-256 %s, recorded %s", f.Format, f.Number, f.InvoiceID, got, f.SHA256)})
			}
		}
		if len(files) < verifyPage {
			return rep, nil
		}
		afterID, afterFormat = files[len(files)-1].InvoiceID, files[len(files)-1].Format
	}
}
