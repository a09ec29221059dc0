package app

// Invoice files: storing an invoice's PDF, UBL and CII and the
// invoice.files_ready event when its set completes (docs/invoicing.md).

import (
	"context"
	"time"

	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/store"
)

// createdEvent is the event a new document of kind k writes.
func createdEvent(k invoicedoc.Kind) event.Type {
	if k == invoicedoc.KindPaymentNotice {
		return event.PaymentNoticeCreated
	}
	return event.InvoiceCreated
}

// filesComplete says whether formats hold every file of an invoice: the
// PDF, and for an electronic invoice UBL and CII.
func filesComplete(formats []string, electronic bool) bool {
	have := map[string]bool{}
	for _, f := range formats {
		have[f] = true
	}
	return have[FormatPDF] && (!electronic || have[FormatUBL] && have[FormatCII])
}

// putFiles stores files of inv (each only if absent) and, in the same
// transaction, writes invoice.files_ready when they complete its set. The
// invoice row lock makes exactly one writer see the set become complete.
func (a *App) putFiles(ctx context.Context, inv invoicing.Invoice, files []invoicing.File, at time.Time) ([]invoicing.File, error) {
	var out []invoicing.File
	err := a.store.Write(ctx, func(q store.Q) error {
		out = out[:0]
		if err := q.LockInvoice(ctx, inv.ID); err != nil {
			return err
		}
		before, err := q.FileFormats(ctx, inv.ID)
		if err != nil {
			return err
		}
		for _, f := range files {
			stored, err := q.PutFile(ctx, inv.ID, f, at)
			if err != nil {
				return err
			}
			out = append(out, stored)
		}
		after, err := q.FileFormats(ctx, inv.ID)
		if err != nil {
			return err
		}
		if filesComplete(before, inv.Electronic) || !filesComplete(after, inv.Electronic) {
			return nil
		}
		ev := a.events(inv.AccountID, inv.Environment)
		if err := ev.invoice(ctx, q, event.InvoiceFilesReady, inv.ID); err != nil {
			return err
		}
		return ev.write(ctx, q)
	})
	return out, err
}
