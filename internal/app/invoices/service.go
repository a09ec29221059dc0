// Package invoices is invoicing (docs/invoicing.md): customers, billable
// items and their assignment to customers, splits and collections, the
// documents issued for them (invoices, cancellations, payment notices),
// their files (PDF, XRechnung UBL and CII) with the job that renders them,
// and their downloads. Each change of a billable item is recorded in the
// books (package books) in the change's transaction.
package invoices

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/clock"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/ident"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/list"

	"golang.org/x/sync/singleflight"
)

// Queries are the store methods invoicing calls.
type Queries interface {
	books.Appender
	kit.CursorReader
	kit.ClockReader
	InsertCustomer(ctx context.Context, c invoicing.Customer) error
	Customer(ctx context.Context, accountID string, env account.Environment, id string) (invoicing.Customer, error)
	Customers(ctx context.Context, f invoicing.CustomerFilter) (list.Page[invoicing.Customer], error)
	InsertCollection(ctx context.Context, id, accountID string, env account.Environment, at time.Time) error
	CollectionExists(ctx context.Context, accountID string, env account.Environment, id string) error
	Collections(ctx context.Context, f invoicing.CollectionFilter) (list.Page[invoicing.Collection], error)
	CollectionItems(ctx context.Context, collectionID string) ([]invoicing.BillableItem, error)
	BillableItem(ctx context.Context, accountID string, env account.Environment, id string) (invoicing.BillableItem, error)
	BillableItems(ctx context.Context, f invoicing.BillableItemFilter) (list.Page[invoicing.BillableItem], error)
	LockItem(ctx context.Context, itemID string) error
	SetAssignment(ctx context.Context, itemID string, a invoicing.Assignment, at time.Time) error
	ItemClaims(ctx context.Context, itemID string) (map[string]string, error)
	ClaimItem(ctx context.Context, itemID, customerKey, invoiceID string) error
	ReleaseClaims(ctx context.Context, invoiceID string) error
	NextNumber(ctx context.Context, series string) (int64, error)
	Invoice(ctx context.Context, accountID string, env account.Environment, id string) (invoicing.Invoice, error)
	InvoiceByID(ctx context.Context, id string) (invoicing.Invoice, error)
	Invoices(ctx context.Context, f invoicing.InvoiceFilter) (list.Page[invoicing.Invoice], error)
	MarkCancelled(ctx context.Context, id, by string) error
	LockInvoice(ctx context.Context, id string) error
	GetFile(ctx context.Context, invoiceID, format string) (invoicing.File, error)
	FileFormats(ctx context.Context, invoiceID string) ([]string, error)
	EnqueueJob(ctx context.Context, j jobs.NewJob, at time.Time) error
	AddInvoiceDelivery(ctx context.Context, d invoicing.Delivery) error
	JobState(ctx context.Context, kind, payload string) (string, error)
}

// DB is the store as invoicing sees it (store.NewView[invoices.Queries]).
type DB = kit.DB[Queries]

// Events writes the events of one change (docs/events.md) in the change's
// transaction q, with their webhook deliveries. The wiring hands in the
// application's event writer (app.EventWriter) until the events move
// below the use cases.
type Events func(ctx context.Context, q Queries, evs []event.Event) error

// Options configure New.
type Options struct {
	Seller      invoicedoc.Seller // the issuing company (config FAREBOX_SELLER_*)
	Links       *kit.Links        // the public base URL of download links
	PaymentDays int               // days until the due date (default 14)
	// Books records the changes of billable items (the audit log); required.
	Books *books.Books
	// Events writes the events of each change; required.
	Events Events
	// Notify wakes the job runner once a document's file job is committed
	// (nil: nothing to wake).
	Notify func()
	// Channels are the transmission channels that have a transport
	// (invoicing.ChannelEmail with --smtp-url): a document whose buyer is
	// reached on one of them gets a delivery, written with the document.
	// None: documents wait to be downloaded (docs/invoicing.md, "Delivery
	// to the buyer").
	Channels []string
	// PDF is the server's queue at the PDF renderer (serve: --pdf-queue,
	// --pdf-deadline); nil: the process's, of pdf.DefaultLimits.
	PDF *pdf.Queue
}

// Service is invoicing.
type Service struct {
	kit.Base[DB]
	seller      invoicedoc.Seller
	paymentDays int
	books       *books.Books
	events      Events
	notify      func()
	links       *kit.Links
	channels    []string
	pdf         *pdf.Queue

	pdfFlight singleflight.Group // one PDF rendering per invoice at a time (ensurePDF)
	pdfRuns   atomic.Int64       // PDFs rendered by this instance (PDFsRendered)
	// PDFRenderer renders a document's PDF; nil is RenderPDF through the
	// service's queue (Options.PDF). Tests set
	// it to a renderer that fails or panics (TestInvoicePDFRenderPanic).
	PDFRenderer func(d *invoicedoc.Document, electronic bool) (invoicing.File, error)
}

// New returns invoicing over db.
func New(db DB, c clock.Clock, ids ident.Prefix, o Options) *Service {
	if o.PaymentDays <= 0 {
		o.PaymentDays = 14
	}
	if o.Notify == nil {
		o.Notify = func() {}
	}
	return &Service{Base: kit.NewBase(db, c, ids), seller: o.Seller, paymentDays: o.PaymentDays, books: o.Books,
		events: o.Events, notify: o.Notify, links: o.Links, channels: o.Channels, pdf: o.PDF}
}

// JobFiles is the job kind that renders a document's files.
const JobFiles = "invoice.files"

// Handle lets r run the documents' file jobs (JobFiles).
func (s *Service) Handle(r *jobs.Runner) { r.Handle(JobFiles, s.generateFiles) }

// timeOf is the time of an object on test clock clockID (nil: none).
func (s *Service) timeOf(ctx context.Context, q Queries, clockID *string) (time.Time, error) {
	return kit.TimeOf(ctx, q, s.Clock, clockID)
}

// changeEvents collects the events of a change of one account and
// environment whose objects' time is at (a test clock's for objects on a
// clock) and writes them as the last step of its transaction.
type changeEvents struct {
	s   *Service
	acc string
	env account.Environment
	at  time.Time
	evs []event.Event
}

func (s *Service) eventsAt(acc string, env account.Environment, at time.Time) *changeEvents {
	return &changeEvents{s: s, acc: acc, env: env, at: at}
}

// add records an event of type t about objectID showing obj.
func (c *changeEvents) add(t event.Type, objectID string, obj any) error {
	raw, err := json.Marshal(obj)
	if err != nil {
		return apperr.Wrap("invoices.event", err)
	}
	c.evs = append(c.evs, event.Event{ID: c.s.IDs.New("event"), AccountID: c.acc, Environment: c.env, Type: t,
		ObjectID: objectID, APIVersion: event.APIVersion, CreatedAt: c.at, Object: raw})
	return nil
}

// invoice adds an event showing the stored document id.
func (c *changeEvents) invoice(ctx context.Context, q Queries, t event.Type, id string) error {
	inv, err := q.InvoiceByID(ctx, id)
	if err != nil {
		return err
	}
	return c.add(t, id, c.s.Response(inv))
}

// billableItem adds billable_item.updated showing item id.
func (c *changeEvents) billableItem(ctx context.Context, q Queries, id string) error {
	v, err := itemView(ctx, q, c.acc, c.env, id)
	if err != nil {
		return err
	}
	return c.add(event.BillableItemUpdated, id, BillableItemResponse(v))
}

// write writes the collected events; call it last in the transaction.
func (c *changeEvents) write(ctx context.Context, q Queries) error {
	return c.s.events(ctx, q, c.evs)
}
