// Package invoicedelivery is the transmission of invoicing documents to
// their buyers (docs/invoicing.md, "Delivery to the buyer"): the
// delivery attempts (the job invoicing.JobDeliver) over a Transport per
// channel (e-mail through an SMTP relay today; a Peppol access point
// would be another), the delivery log with each attempt's reply, the
// events invoice.sent and invoice.delivery_failed, and a resend. A
// document's first delivery is written by package invoices in the
// transaction that issues the document; this package never loses one: a
// refusal is recorded and, when temporary, retried with backoff.
package invoicedelivery

import (
	"context"
	"net/mail"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/smtpmail"
)

// Queries are the store methods the deliveries use (store.Q implements
// them; the wiring passes store.NewView[Queries]).
type Queries interface {
	Invoice(ctx context.Context, accountID string, env account.Environment, id string) (invoicing.Invoice, error)
	InvoiceByID(ctx context.Context, id string) (invoicing.Invoice, error)
	GetFile(ctx context.Context, invoiceID, format string) (invoicing.File, error)
	AddInvoiceDelivery(ctx context.Context, d invoicing.Delivery) error
	InvoiceDelivery(ctx context.Context, id string) (invoicing.Delivery, error)
	InvoiceDeliveries(ctx context.Context, invoiceID string) ([]invoicing.Delivery, error)
	RecordDeliveryAttempt(ctx context.Context, id string, a invoicing.DeliveryAttempt) (int, error)
	EnqueueJob(ctx context.Context, j jobs.NewJob, at time.Time) error
	JobState(ctx context.Context, kind, payload string) (string, error)
}

// DB is the store as the deliveries see it (store.NewView[Queries]).
type DB = kit.DB[Queries]

// Transport carries documents over one channel (invoicing.Route decides
// a buyer's). Send returns the receiving side's acceptance ("250 2.0.0
// queued as …") or an error; a *Refusal says whether a later attempt may
// succeed, any other error counts as temporary.
type Transport interface {
	Channel() string
	Send(ctx context.Context, p Parcel) (reply string, err error)
}

// Parcel is what one attempt transmits: the delivery, its document and
// the document's stored files (the downloads' bytes) by format.
type Parcel struct {
	Delivery invoicing.Delivery
	Document invoicing.Invoice
	Files    map[string]invoicing.File
	At       time.Time // the attempt's time (the message's Date)
}

// Refusal is a transport's failed attempt: the reply of the other side
// (or what kept the attempt from one) and whether it is temporary.
type Refusal struct {
	Reply     string
	Temporary bool
}

func (r *Refusal) Error() string { return r.Reply }

// Events writes the events of one change in its transaction q (the
// application's event writer, app.EventWriter).
type Events func(ctx context.Context, q Queries, evs []event.Event) error

// Options configure New.
type Options struct {
	// Transports by channel; a document whose channel has none gets no
	// delivery (invoices.Options.Channels lists the same channels).
	Transports []Transport
	// Files stores a document's files that are not stored yet
	// (invoices.Service.EnsureFiles): an attempt may run before the
	// document's files job.
	Files func(ctx context.Context, invoiceID string) error
	// Events writes invoice.sent and invoice.delivery_failed; required.
	Events Events
	// Notify wakes the job runner after a resend committed (nil: none).
	Notify func()
}

// Service is the delivery of documents.
type Service struct {
	kit.Base[DB]
	transports map[string]Transport
	files      func(ctx context.Context, invoiceID string) error
	events     Events
	notify     func()
}

// New returns the deliveries over db.
func New(db DB, c clock.Clock, ids ident.Prefix, o Options) *Service {
	s := &Service{Base: kit.NewBase(db, c, ids), transports: map[string]Transport{}, files: o.Files, events: o.Events, notify: o.Notify}
	for _, t := range o.Transports {
		s.transports[t.Channel()] = t
	}
	if s.notify == nil {
		s.notify = func() {}
	}
	return s
}

// Channels are the channels of ts (invoices.Options.Channels).
func Channels(ts []Transport) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Channel())
	}
	return out
}

// EmailOver is the e-mail transport over relay from the sender from,
// alone in a list; none without a relay (no --smtp-url: nothing is sent).
func EmailOver(relay *smtpmail.Relay, from mail.Address) []Transport {
	if relay == nil {
		return nil
	}
	return []Transport{&Email{Relay: relay, From: from}}
}

// Handle lets r run the delivery attempts (invoicing.JobDeliver).
func (s *Service) Handle(r *jobs.Runner) { r.Handle(invoicing.JobDeliver, s.attempt) }
