package invoicedelivery

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
)

// Formats of a document's stored files (invoices.FormatPDF, …).
const (
	formatPDF = "pdf"
	formatUBL = "ubl"
	formatCII = "cii"
)

// attempt is the invoicing.JobDeliver handler: one attempt of the
// delivery j.Payload. Its outcome is logged with the reply: accepted
// (sent, event invoice.sent), a temporary refusal (deferred: the job's
// error schedules the next attempt after the runner's backoff; the last
// attempt's refusal fails the delivery) or a permanent one (failed, event
// invoice.delivery_failed). A delivery already final is left alone (the
// job ran again after a lost lease).
func (s *Service) attempt(ctx context.Context, j jobs.Job) error {
	d, err := s.DB.Read().InvoiceDelivery(ctx, j.Payload)
	if apperr.KindOf(err) == apperr.NotFound {
		return jobs.Permanent(err)
	}
	if err != nil || invoicing.Final(d.Status) {
		return err
	}
	reply, err := s.send(ctx, d)
	a := invoicing.DeliveryAttempt{At: s.Clock.Now(), Outcome: invoicing.DeliverySent, Reply: reply}
	var r *Refusal
	switch {
	case err == nil:
	case errors.As(err, &r) && !r.Temporary:
		a.Outcome, a.Reply = invoicing.DeliveryFailed, r.Reply
	default:
		a.Outcome, a.Reply = invoicing.DeliveryDeferred, err.Error()
		if j.Attempts >= j.MaxAttempts {
			a.Outcome = invoicing.DeliveryFailed
		}
	}
	if werr := s.record(ctx, d, a); werr != nil {
		return werr
	}
	if a.Outcome == invoicing.DeliveryDeferred {
		return errors.New("deferred: " + a.Reply)
	}
	return nil
}

// send hands the delivery's document and files to its channel's
// transport. What keeps an attempt from the transport (no transport for
// the channel any more, files that cannot be stored) is a refusal too.
func (s *Service) send(ctx context.Context, d invoicing.Delivery) (string, error) {
	t := s.transports[d.Channel]
	if t == nil {
		return "", &Refusal{Reply: "this instance has no transport for channel " + d.Channel + " (e-mail needs --smtp-url)"}
	}
	if err := s.files(ctx, d.InvoiceID); err != nil {
		return "", &Refusal{Reply: "the document's files are not ready: " + err.Error(), Temporary: true}
	}
	q := s.DB.Read()
	inv, err := q.InvoiceByID(ctx, d.InvoiceID)
	if err != nil {
		return "", err
	}
	p := Parcel{Delivery: d, Document: inv, Files: map[string]invoicing.File{}, At: s.Clock.Now()}
	formats := []string{formatPDF}
	if inv.Electronic {
		formats = append(formats, formatUBL, formatCII)
	}
	for _, f := range formats {
		if p.Files[f], err = q.GetFile(ctx, inv.ID, f); err != nil {
			return "", err
		}
	}
	return t.Send(ctx, p)
}

// record logs attempt a of d and, when it ends the delivery, writes its
// event, in one transaction.
func (s *Service) record(ctx context.Context, d invoicing.Delivery, a invoicing.DeliveryAttempt) error {
	return s.DB.Write(ctx, func(q Queries) error {
		n, err := q.RecordDeliveryAttempt(ctx, d.ID, a)
		if err != nil || n == 0 || !invoicing.Final(a.Outcome) {
			return err
		}
		t := event.InvoiceSent
		if a.Outcome == invoicing.DeliveryFailed {
			t = event.InvoiceDeliveryFailed
		}
		now, err := q.InvoiceDelivery(ctx, d.ID)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(View(now))
		if err != nil {
			return apperr.Wrap("invoicedelivery.record", err)
		}
		return s.events(ctx, q, []event.Event{{ID: s.IDs.New("event"), AccountID: d.AccountID, Environment: d.Environment,
			Type: t, ObjectID: d.ID, APIVersion: event.APIVersion, CreatedAt: a.At, Object: raw}})
	})
}

// kindTitle is the German title of a document kind (subjects, texts).
func kindTitle(k invoicedoc.Kind) string {
	switch k {
	case invoicedoc.KindCancellation:
		return "Stornorechnung"
	case invoicedoc.KindPaymentNotice:
		return "Zahlungsaufforderung"
	}
	return "Rechnung"
}
