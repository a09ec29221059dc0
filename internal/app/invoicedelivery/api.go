package invoicedelivery

import (
	"context"
	"fmt"
	"slices"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
)

// DeliveryJSON is a delivery as the API shows it (GET and POST
// /v9/ticketing/invoices/{id}/deliveries.json, the events).
type DeliveryJSON struct {
	ID          string        `json:"id"`
	Object      string        `json:"object"`
	InvoiceID   string        `json:"invoice_id"`
	Environment string        `json:"environment"`
	Channel     string        `json:"channel"`
	Recipient   string        `json:"recipient"`
	Status      string        `json:"status"`
	Created     kit.Timestamp `json:"created"`
	Updated     kit.Timestamp `json:"updated"`
	Attempts    []AttemptJSON `json:"attempts"`
}

// AttemptJSON is one logged attempt of a delivery.
type AttemptJSON struct {
	Attempt int           `json:"attempt"`
	At      kit.Timestamp `json:"at"`
	Outcome string        `json:"outcome"`
	Reply   string        `json:"reply"`
}

// DeliveryList is the delivery log of a document, oldest first.
type DeliveryList struct {
	Object string         `json:"object"`
	Data   []DeliveryJSON `json:"data"`
}

// View shows a delivery.
func View(d invoicing.Delivery) DeliveryJSON {
	out := DeliveryJSON{ID: d.ID, Object: "invoice_delivery", InvoiceID: d.InvoiceID, Environment: string(d.Environment),
		Channel: d.Channel, Recipient: d.Recipient, Status: d.Status, Created: kit.Timestamp(d.CreatedAt),
		Updated: kit.Timestamp(d.UpdatedAt), Attempts: []AttemptJSON{}}
	for _, a := range d.Attempts {
		out.Attempts = append(out.Attempts, AttemptJSON{Attempt: a.N, At: kit.Timestamp(a.At), Outcome: a.Outcome, Reply: a.Reply})
	}
	return out
}

// Deliveries is the delivery log of a document of the caller (404 for
// another account's or environment's, like the document itself).
func (s *Service) Deliveries(ctx context.Context, p account.Principal, invoiceID string) (DeliveryList, error) {
	q := s.DB.Read()
	if _, err := q.Invoice(ctx, p.AccountID, p.Environment, invoiceID); err != nil {
		return DeliveryList{}, err
	}
	ds, err := q.InvoiceDeliveries(ctx, invoiceID)
	if err != nil {
		return DeliveryList{}, err
	}
	out := DeliveryList{Object: "list", Data: []DeliveryJSON{}}
	for _, d := range ds {
		out.Data = append(out.Data, View(d))
	}
	return out, nil
}

// Resend writes a new delivery of a document of the caller to its buyer
// and its first attempt's job. A buyer without an electronic address is
// 422 no_electronic_address, a channel without transport 409
// delivery_channel_unavailable, a delivery still under way 409
// delivery_pending (unless that delivery's job is dead); nothing is
// written then.
func (s *Service) Resend(ctx context.Context, claim idempotency.Claim, p account.Principal, invoiceID string) (DeliveryJSON, error) {
	const op = "invoicedelivery.Resend"
	var d invoicing.Delivery
	err := s.DB.WriteClaimed(ctx, claim, func(q Queries) error {
		inv, err := q.Invoice(ctx, p.AccountID, p.Environment, invoiceID)
		if err != nil {
			return err
		}
		now := s.Clock.Now()
		var ok bool
		d, ok = invoicing.NewDelivery(s.IDs.New("delivery"), inv, now)
		switch {
		case !ok:
			return apperr.E(op, apperr.Unprocessable, CodeNoElectronicAddress,
				"this document's buyer has no electronic address (a customer without electronic_invoicing, or none): it can only be downloaded")
		case s.transports[d.Channel] == nil:
			return apperr.E(op, apperr.Conflict, CodeChannelUnavailable, fmt.Sprintf(
				"this document's buyer is reached by %s, which this instance does not transmit (e-mail needs the operator's --smtp-url; Peppol needs an access point)", d.Channel))
		}
		prev, err := q.InvoiceDeliveries(ctx, invoiceID)
		if err != nil {
			return err
		}
		if i := slices.IndexFunc(prev, func(d invoicing.Delivery) bool { return !invoicing.Final(d.Status) }); i >= 0 {
			// Under way unless its job is dead (an operator's matter,
			// /admin/jobs): then a resend is the partner's way out.
			state, err := q.JobState(ctx, invoicing.JobDeliver, prev[i].ID)
			if err != nil {
				return err
			}
			if state != jobs.StateDead {
				return apperr.E(op, apperr.Conflict, CodeDeliveryPending, fmt.Sprintf(
					"delivery %s of this document is still %s; it is retried on its own", prev[i].ID, prev[i].Status))
			}
		}
		if err := q.AddInvoiceDelivery(ctx, d); err != nil {
			return err
		}
		return q.EnqueueJob(ctx, jobs.NewJob{Kind: invoicing.JobDeliver, Payload: d.ID, MaxAttempts: invoicing.DeliverMaxAttempts}, now)
	})
	if err != nil {
		return DeliveryJSON{}, err
	}
	s.notify()
	return View(d), nil
}
