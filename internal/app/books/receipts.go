package books

import (
	"context"
	"fmt"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/ticketing"
)

// ReceiptJSON is a cancellation receipt (docs/books.md).
type ReceiptJSON struct {
	ID               string        `json:"id"`
	Object           string        `json:"object"`
	SubscriptionID   string        `json:"subscription_id"`
	ProductID        string        `json:"product_id"`
	ProductName      string        `json:"product_name"`
	Environment      string        `json:"environment"`
	CancellationType string        `json:"cancellation_type"`
	ReceivedAt       kit.Timestamp `json:"received_at"`
	EffectiveEnd     kit.Timestamp `json:"effective_end"`
	ConfirmationText string        `json:"confirmation_text"`
	ReceiptPDFURL    string        `json:"receipt_pdf_url"`
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

func (b *Books) receiptView(r ticketing.CancellationReceipt) ReceiptJSON {
	return ReceiptJSON{ID: r.ID, Object: "cancellation_receipt", SubscriptionID: r.SubscriptionID, ProductID: r.ProductID,
		ProductName: r.ProductName, Environment: string(r.Environment), CancellationType: r.Type,
		ReceivedAt: kit.Timestamp(r.ReceivedAt), EffectiveEnd: kit.Timestamp(r.EffectiveEnd), ConfirmationText: receiptText(r),
		ReceiptPDFURL: b.links.Base() + "/v9/ticketing/subscriptions/" + r.SubscriptionID + "/cancellation_receipt.pdf"}
}

// ReceiptReader reads a subscription's receipt (store.Q, or a transaction
// of the caller's).
type ReceiptReader interface {
	Receipt(ctx context.Context, accountID string, env account.Environment, subscriptionID string) (ticketing.CancellationReceipt, error)
}

// ReceiptOf is the receipt of subscription id of p's as it is shown, read
// through q (inside the transaction of a cancellation: the one it
// appended); nil when it has none (not cancelled, or cancelled before
// receipts existed).
func (b *Books) ReceiptOf(ctx context.Context, q ReceiptReader, p account.Principal, id string) (*ReceiptJSON, error) {
	r, err := q.Receipt(ctx, p.AccountID, p.Environment, id)
	switch {
	case err == nil:
		v := b.receiptView(r)
		return &v, nil
	case apperr.KindOf(err) == apperr.NotFound:
		return nil, nil
	}
	return nil, err
}

// CancellationReceipt returns the receipt of one of the caller's
// subscriptions: 404 subscription_not_found for another's, 404
// receipt_not_found when it is not cancelled (or was before receipts).
func (b *Books) CancellationReceipt(ctx context.Context, p account.Principal, id string) (ReceiptJSON, error) {
	r, err := b.receipt(ctx, p, id)
	if err != nil {
		return ReceiptJSON{}, err
	}
	return b.receiptView(r), nil
}

func (b *Books) receipt(ctx context.Context, p account.Principal, id string) (ticketing.CancellationReceipt, error) {
	q := b.DB.Read()
	if _, err := q.Subscription(ctx, p.AccountID, p.Environment, id); err != nil {
		return ticketing.CancellationReceipt{}, err
	}
	return q.Receipt(ctx, p.AccountID, p.Environment, id)
}

// CancellationReceiptPDF renders the receipt as a PDF/A-3b letter from
// the stored record (the bytes differ per rendering, the content does
// not) and its file name.
func (b *Books) CancellationReceiptPDF(ctx context.Context, p account.Principal, id string) ([]byte, string, error) {
	r, err := b.receipt(ctx, p, id)
	if err != nil {
		return nil, "", err
	}
	kind := "ordentliche Kündigung"
	if r.Type == ticketing.CancellationExtraordinary {
		kind = "außerordentliche Kündigung"
	}
	out, err := b.pdf.RenderLetter(pdf.Letter{Seller: b.seller, Title: "Kündigungsbestätigung", Reference: r.ID, Date: r.CreatedAt,
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
	return out, r.ID + ".pdf", err
}
