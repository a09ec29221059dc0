package app

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/pdf"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/money"
	"github.com/farebox/farebox/internal/store"
)

// InvoicingOptions configure invoices.
type InvoicingOptions struct {
	Seller      invoicedoc.Seller // the issuing company (config FAREBOX_SELLER_*)
	BaseURL     string            // public base URL of download links, without trailing slash
	PaymentDays int               // days until the due date (default 14)
	Jobs        jobs.Options      // job runner tuning
}

// JobInvoiceFiles is the job kind that renders a document's files.
const JobInvoiceFiles = "invoice.files"

func (a *App) initInvoicing(o InvoicingOptions) {
	if o.PaymentDays <= 0 {
		o.PaymentDays = 14
	}
	a.inv = o
	if a.store != nil {
		a.Jobs = jobs.New(a.store.Jobs(), a.clock, o.Jobs)
		a.Jobs.Handle(JobInvoiceFiles, a.generateFiles)
		a.Jobs.Handle(JobTestClockAdvance, a.advanceJob)
	}
}

// InvoiceBaseURL is the public base URL of download links.
func (a *App) InvoiceBaseURL() string { return a.inv.BaseURL }

// SetInvoiceBaseURL sets the link base once the listener is bound (a
// configured address with port 0 is only known then). Call it before
// serving requests.
func (a *App) SetInvoiceBaseURL(u string) { a.inv.BaseURL = u }

// InvoiceRequest is POST …/billable_item/{id}/invoice[/{customer_id}].json.
type InvoiceRequest struct {
	ItemID     string
	CustomerID string // "" = the endpoint without customer
	Texts      invoicedoc.Texts
}

// IssueInvoice creates an invoice for a billable item (and, for an item in a
// collection, the collection's other items of the same customer). The
// number is taken from the environment's series in the same transaction
// that writes the invoice, its item claims and its file job; any failure
// writes nothing and consumes no number.
func (a *App) IssueInvoice(ctx context.Context, p account.Principal, req InvoiceRequest) (invoicing.Invoice, error) {
	const op = "app.IssueInvoice"
	if err := checkTexts(req.Texts); err != nil {
		return invoicing.Invoice{}, err
	}
	var inv invoicing.Invoice
	return a.issue(ctx, &inv, func(q store.Q) error {
		inv = invoicing.Invoice{}
		if err := q.LockItem(ctx, req.ItemID); err != nil {
			return err
		}
		item, err := q.BillableItem(ctx, p.AccountID, p.Environment, req.ItemID)
		if err != nil {
			return err
		}
		items := []invoicing.BillableItem{item}
		if item.CollectionID != nil {
			if items, err = q.CollectionItems(ctx, *item.CollectionID); err != nil {
				return err
			}
		}
		customerID, err := commonCustomer(req.CustomerID, items)
		if err != nil {
			return err
		}
		names := customerNames{q: q, p: p, names: map[string]string{}}
		buyer, electronic, err := names.buyer(ctx, customerID)
		if err != nil {
			return err
		}
		var lines []invoicedoc.Line
		var covered []string
		for _, it := range items {
			share, ok := shareOf(it, customerID)
			if !ok {
				if it.ID == item.ID {
					return apperr.E(op, apperr.Unprocessable, CodeCustomerNotOnItem,
						fmt.Sprintf("customer %s is neither the customer nor in the split of billable item %s; PUT customer_id or split first", customerID, it.ID))
				}
				continue
			}
			if it.ID != item.ID {
				if err := q.LockItem(ctx, it.ID); err != nil {
					return err
				}
			}
			claims, err := q.ItemClaims(ctx, it.ID)
			if err != nil {
				return err
			}
			if prev, done := claims[customerID]; done {
				if it.ID == item.ID {
					return apperr.E(op, apperr.Conflict, CodeAlreadyInvoiced,
						fmt.Sprintf("billable item %s is already invoiced for this customer by invoice %s", it.ID, prev))
				}
				continue
			}
			l, err := names.line(ctx, it, share, customerID)
			if err != nil {
				return err
			}
			lines = append(lines, l)
			covered = append(covered, it.ID)
		}
		now, err := a.timeOf(ctx, q, item.TestClockID) // an item of a test clock is invoiced at its time
		if err != nil {
			return err
		}
		d := invoicedoc.Document{Kind: invoicedoc.KindInvoice, IssueDate: now, Test: p.Environment == account.Test,
			Seller: a.inv.Seller, Buyer: buyer, Lines: lines, Texts: req.Texts,
			Payment: invoicedoc.Payment{DueDate: now.AddDate(0, 0, a.inv.PaymentDays)}}
		inv = invoicing.Invoice{ID: a.IDs.New("invoice"), AccountID: p.AccountID, Environment: p.Environment,
			Kind: invoicedoc.KindInvoice, Electronic: electronic, CollectionID: item.CollectionID, CreatedAt: now}
		if customerID != "" {
			inv.CustomerID = &customerID
		}
		if err := a.finish(ctx, q, &inv, d); err != nil {
			return err
		}
		for _, id := range covered {
			if err := q.ClaimItem(ctx, id, customerID, inv.ID); err != nil {
				return err
			}
		}
		if err := a.auditInvoiced(ctx, q, p, inv, covered, nil); err != nil {
			return err
		}
		return a.createdEvents(ctx, q, inv)
	})
}

// issue writes a new document in one transaction (write fills *inv) and,
// once it has committed, wakes the job runner for the document's file job;
// on failure nothing is written and the zero invoice is returned.
func (a *App) issue(ctx context.Context, inv *invoicing.Invoice, write func(q store.Q) error) (invoicing.Invoice, error) {
	if err := a.store.WriteClaimed(ctx, idempotency.ClaimOf(ctx), write); err != nil {
		return invoicing.Invoice{}, err
	}
	a.Jobs.Notify()
	return *inv, nil
}

// issueReferring issues a document of kind (a cancellation or a payment
// notice) that refers to the invoice id: in the transaction of issue, write
// gets the invoice once it is known to be a standing invoice (422
// not_an_invoice for another kind of document; 409 already_cancelled or
// invoice_cancelled once it is cancelled), and the invoice's time: that of
// its first line's billable item (timeOf: a test clock's for an item on a
// clock, as when the invoice was issued).
func (a *App) issueReferring(ctx context.Context, p account.Principal, id string, kind invoicedoc.Kind, inv *invoicing.Invoice,
	write func(q store.Q, orig invoicing.Invoice, now time.Time) error) (invoicing.Invoice, error) {
	op, cancel := "app.PaymentNoticeForInvoice", kind == invoicedoc.KindCancellation
	if cancel {
		op = "app.CancelInvoice"
	}
	return a.issue(ctx, inv, func(q store.Q) error {
		orig, err := q.Invoice(ctx, p.AccountID, p.Environment, id)
		switch {
		case err != nil:
			return err
		case orig.Kind != invoicedoc.KindInvoice && cancel:
			return apperr.E(op, apperr.Unprocessable, CodeNotAnInvoice, "only invoices can be cancelled, not a "+orig.Kind.String())
		case orig.Kind != invoicedoc.KindInvoice:
			return apperr.E(op, apperr.Unprocessable, CodeNotAnInvoice, "payment notices are issued for invoices, not for a "+orig.Kind.String())
		case orig.CancelledBy != nil && cancel:
			return apperr.E(op, apperr.Conflict, CodeAlreadyCancelled, "this invoice is already cancelled by "+*orig.CancelledBy)
		case orig.CancelledBy != nil:
			return apperr.E(op, apperr.Conflict, CodeInvoiceCancelled, "this invoice is cancelled; there is nothing to pay")
		}
		var clockID *string
		if len(orig.Document.Lines) > 0 {
			item, err := q.BillableItem(ctx, p.AccountID, p.Environment, orig.Document.Lines[0].BillableItemID)
			if err != nil {
				return err
			}
			clockID = item.TestClockID
		}
		now, err := a.timeOf(ctx, q, clockID)
		if err != nil {
			return err
		}
		return write(q, orig, now)
	})
}

// finish validates the document, then numbers it (last, to hold the series
// row lock briefly), writes the invoice and enqueues its file job.
func (a *App) finish(ctx context.Context, q store.Q, inv *invoicing.Invoice, d invoicedoc.Document) error {
	d.Number = "PENDING"
	if err := d.Validate(); err != nil {
		return err
	}
	inv.Identifier = randomIdentifier()
	series := invoicing.Series(inv.Environment, d.Kind, d.IssueDate)
	n, err := q.NextNumber(ctx, series)
	if err != nil {
		return err
	}
	d.Number = invoicing.Number(series, n)
	inv.Number = d.Number
	inv.Document = d
	inv.GrossCents = d.Totals().Gross
	if err := q.InsertInvoice(ctx, *inv); err != nil {
		return err
	}
	// The job runs on the service's time, also for a document dated by a
	// test clock.
	return q.EnqueueJob(ctx, jobs.NewJob{Kind: JobInvoiceFiles, Payload: inv.ID}, a.clock.Now())
}

// createdEvents writes invoice.created or payment_notice.created for a
// document finish wrote.
func (a *App) createdEvents(ctx context.Context, q store.Q, inv invoicing.Invoice) error {
	ev := a.eventsAt(inv.AccountID, inv.Environment, inv.CreatedAt)
	if err := ev.invoice(ctx, q, createdEvent(inv.Kind), inv.ID); err != nil {
		return err
	}
	return ev.write(ctx, q)
}

// randomIdentifier is the download secret: 128 bits from crypto/rand.
func randomIdentifier() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// MaxTextLen bounds each meta text.
const MaxTextLen = 5000

func checkTexts(t invoicedoc.Texts) error {
	for _, f := range []struct{ name, v string }{{"subject", t.Subject}, {"notes", t.Notes},
		{"custom_text_before_table", t.BeforeTable}, {"custom_text_after_table", t.AfterTable}} {
		if utf8.RuneCountInString(f.v) > MaxTextLen {
			return apperr.Validation("app.IssueInvoice", CodeTextTooLong, "/"+f.name, fmt.Sprintf("%s must be at most %d characters", f.name, MaxTextLen))
		}
	}
	return checkPrintable("app.IssueInvoice", printedText{"/subject", t.Subject}, printedText{"/notes", t.Notes},
		printedText{"/custom_text_before_table", t.BeforeTable}, printedText{"/custom_text_after_table", t.AfterTable})
}

// printedText is a partner's text that the PDF prints, with its field.
type printedText struct{ field, v string }

// checkPrintable refuses, when the text is accepted, a character the PDF
// cannot draw with its fonts (pdf.Drawable: a control character, or one no
// installed font covers), so that rendering never meets it
// (docs/invoicing.md, "Fonts and scripts").
func checkPrintable(op string, texts ...printedText) error {
	for _, t := range texts {
		if r, ok := pdf.Drawable(t.v); !ok {
			name := t.field[strings.LastIndexByte(t.field, '/')+1:]
			if _, err := strconv.Atoi(name); err == nil {
				name = strings.TrimPrefix(t.field, "/customer/")
			}
			return apperr.Validation(op, CodeUnprintableText, t.field,
				fmt.Sprintf("%s contains %U, which the PDF cannot print (no font has it, or it is a control character)", name, r))
		}
	}
	return nil
}

// commonCustomer is the customer a document is for: customerID when the
// path names one. Otherwise it applies the endpoint without customer: no
// item has a customer (invoice without recipient), or every item has one
// and the same single customer. Anything else needs the customer in the path.
func commonCustomer(customerID string, items []invoicing.BillableItem) (string, error) {
	if customerID != "" {
		return customerID, nil
	}
	cust := ""
	for i, it := range items {
		c := ""
		switch {
		case it.Split != nil:
			return "", apperr.E("app.IssueInvoice", apperr.Unprocessable, CodeCustomerRequired,
				fmt.Sprintf("billable item %s is split between customers: invoice each customer with …/invoice/{customer_id}.json", it.ID))
		case it.CustomerID != nil:
			c = *it.CustomerID
		}
		if i > 0 && c != cust {
			return "", apperr.E("app.IssueInvoice", apperr.Unprocessable, CodeCustomerRequired,
				"the items of this collection do not share one customer: invoice per customer with …/invoice/{customer_id}.json")
		}
		cust = c
	}
	return cust, nil
}

// shareOf is the amount of item it charged to customer ("" = no customer).
func shareOf(it invoicing.BillableItem, customer string) (money.Cents, bool) {
	switch {
	case it.Split != nil:
		for _, s := range it.Split {
			if s.CustomerID == customer {
				return s.AmountInCents, true
			}
		}
		return 0, false
	case it.CustomerID != nil:
		return it.AmountCents, *it.CustomerID == customer
	default:
		return it.AmountCents, customer == ""
	}
}

type customerNames struct {
	q     store.Q
	p     account.Principal
	names map[string]string
}

func (c customerNames) get(ctx context.Context, id string) (string, error) {
	if n, ok := c.names[id]; ok {
		return n, nil
	}
	cu, err := c.q.Customer(ctx, c.p.AccountID, c.p.Environment, id)
	if err != nil {
		return "", err
	}
	if err := usable("app.IssueInvoice", cu); err != nil {
		return "", err
	}
	c.names[id] = cu.Name()
	return cu.Name(), nil
}

// buyer is customerID's buyer block and whether it is invoiced
// electronically (nil and false without a customer); the customer's name
// is remembered for the split lines.
func (c customerNames) buyer(ctx context.Context, customerID string) (*invoicedoc.Buyer, bool, error) {
	if customerID == "" {
		return nil, false, nil
	}
	cu, err := c.q.Customer(ctx, c.p.AccountID, c.p.Environment, customerID)
	if err != nil {
		return nil, false, err
	}
	if err := usable("app.IssueInvoice", cu); err != nil {
		return nil, false, err
	}
	if err := cu.CheckStored("app.IssueInvoice"); err != nil {
		return nil, false, err
	}
	c.names[cu.ID] = cu.Name()
	return cu.Buyer(), cu.Electronic != nil, nil
}

// line is the document line billing customerID's share of it, with the
// item's split naming every customer and marking customerID's part.
func (c customerNames) line(ctx context.Context, it invoicing.BillableItem, share money.Cents, customerID string) (invoicedoc.Line, error) {
	l := invoicedoc.Line{BillableItemID: it.ID, Name: it.Description, Quantity: 1, Gross: share,
		RateBP: it.VATRateBP, OrderedAt: it.OrderedAt}
	for _, s := range it.Split {
		n, err := c.get(ctx, s.CustomerID)
		if err != nil {
			return invoicedoc.Line{}, err
		}
		l.Split = append(l.Split, invoicedoc.Share{Name: n, Amount: s.AmountInCents, Invoiced: s.CustomerID == customerID})
	}
	return l, nil
}

// Invoice returns one of the caller's documents.
func (a *App) Invoice(ctx context.Context, p account.Principal, id string) (invoicing.Invoice, error) {
	return a.store.Read().Invoice(ctx, p.AccountID, p.Environment, id)
}

// CancelInvoice issues the cancellation (Stornorechnung, credit note 381)
// of an invoice: its own number from the invoice series, the original's
// lines, a reference to the original; the original's items become
// invoiceable again. An invoice cancels once (409 after that).
func (a *App) CancelInvoice(ctx context.Context, p account.Principal, id string) (invoicing.Invoice, error) {
	var inv invoicing.Invoice
	return a.issueReferring(ctx, p, id, invoicedoc.KindCancellation, &inv, func(q store.Q, orig invoicing.Invoice, now time.Time) error {
		var d invoicedoc.Document
		inv, d = a.referringTo(p, orig, invoicedoc.KindCancellation, now)
		if err := a.finish(ctx, q, &inv, d); err != nil {
			return err
		}
		if err := q.MarkCancelled(ctx, orig.ID, inv.ID); err != nil {
			return err
		}
		if err := q.ReleaseClaims(ctx, orig.ID); err != nil {
			return err
		}
		var items []string
		for _, l := range orig.Document.Lines {
			items = append(items, l.BillableItemID)
		}
		if err := a.auditInvoiced(ctx, q, p, orig, items, &inv); err != nil {
			return err
		}
		ev := a.eventsAt(p.AccountID, p.Environment, now)
		if err := ev.invoice(ctx, q, createdEvent(inv.Kind), inv.ID); err != nil {
			return err
		}
		if err := ev.invoice(ctx, q, event.InvoiceCancelled, orig.ID); err != nil {
			return err
		}
		return ev.write(ctx, q)
	})
}

// PaymentNoticeForInvoice issues a payment notice (Zahlungsaufforderung)
// asking to pay a standing invoice: the invoice's lines and buyer, its own
// number from the ZA series, BG-3 and the purpose of transfer naming the
// invoice. It claims nothing: an invoice may get several notices.
func (a *App) PaymentNoticeForInvoice(ctx context.Context, p account.Principal, id string) (invoicing.Invoice, error) {
	var inv invoicing.Invoice
	return a.issueReferring(ctx, p, id, invoicedoc.KindPaymentNotice, &inv, func(q store.Q, orig invoicing.Invoice, now time.Time) error {
		var d invoicedoc.Document
		inv, d = a.referringTo(p, orig, invoicedoc.KindPaymentNotice, now)
		d.Payment = invoicedoc.Payment{DueDate: laterOf(orig.Document.Payment.DueDate, now.AddDate(0, 0, a.inv.PaymentDays))}
		if err := a.finish(ctx, q, &inv, d); err != nil {
			return err
		}
		return a.createdEvents(ctx, q, inv)
	})
}

// PaymentNoticeForCollection issues a payment notice for the items of a
// collection charged to one customer (customerID "" applies the rule of the
// invoice endpoint without customer). Every item of the collection for that
// customer is listed, invoiced or not; nothing is claimed.
func (a *App) PaymentNoticeForCollection(ctx context.Context, p account.Principal, collectionID, customerID string) (invoicing.Invoice, error) {
	const op = "app.PaymentNoticeForCollection"
	var inv invoicing.Invoice
	return a.issue(ctx, &inv, func(q store.Q) error {
		if err := q.CollectionExists(ctx, p.AccountID, p.Environment, collectionID); err != nil {
			return err
		}
		items, err := q.CollectionItems(ctx, collectionID)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return apperr.E(op, apperr.Unprocessable, CodeCollectionEmpty, "the collection has no billable items")
		}
		if customerID, err = commonCustomer(customerID, items); err != nil {
			return err
		}
		names := customerNames{q: q, p: p, names: map[string]string{}}
		buyer, electronic, err := names.buyer(ctx, customerID)
		if err != nil {
			return apperr.Validation(op, CodeUnknownCustomer, "/customer_id", fmt.Sprintf("customer %q does not exist", customerID))
		}
		var lines []invoicedoc.Line
		invoices := map[string]*invoicedoc.Reference{}
		for _, it := range items {
			share, ok := shareOf(it, customerID)
			if !ok {
				continue
			}
			l, err := names.line(ctx, it, share, customerID)
			if err != nil {
				return err
			}
			// An item already invoiced to this customer names its invoice, so
			// the notice references it (BG-3) and the transfer can be matched.
			if l.Invoice, err = standingInvoice(ctx, q, it.ID, customerID, invoices); err != nil {
				return err
			}
			lines = append(lines, l)
		}
		if len(lines) == 0 {
			return apperr.E(op, apperr.Unprocessable, CodeCustomerNotInCollection, "no item of the collection is charged to this customer")
		}
		now, err := a.timeOf(ctx, q, items[0].TestClockID) // the time of the collection's first item
		if err != nil {
			return err
		}
		d := invoicedoc.Document{Kind: invoicedoc.KindPaymentNotice, IssueDate: now, Test: p.Environment == account.Test,
			Seller: a.inv.Seller, Buyer: buyer, Lines: lines,
			Payment: invoicedoc.Payment{DueDate: now.AddDate(0, 0, a.inv.PaymentDays)}}
		inv = invoicing.Invoice{ID: a.IDs.New("invoice"), AccountID: p.AccountID, Environment: p.Environment,
			Kind: invoicedoc.KindPaymentNotice, CollectionID: &collectionID, Electronic: electronic, CreatedAt: now}
		if customerID != "" {
			inv.CustomerID = &customerID
		}
		if err := a.finish(ctx, q, &inv, d); err != nil {
			return err
		}
		return a.createdEvents(ctx, q, inv)
	})
}

// standingInvoice is the invoice that bills item to customer (its claim),
// or nil; seen caches the references by invoice id.
func standingInvoice(ctx context.Context, q store.Q, itemID, customerID string, seen map[string]*invoicedoc.Reference) (*invoicedoc.Reference, error) {
	claims, err := q.ItemClaims(ctx, itemID)
	if err != nil {
		return nil, err
	}
	id, ok := claims[customerID]
	if !ok {
		return nil, nil
	}
	if r, ok := seen[id]; ok {
		return r, nil
	}
	inv, err := q.InvoiceByID(ctx, id)
	if err != nil {
		return nil, err
	}
	r := &invoicedoc.Reference{Number: inv.Number, IssueDate: inv.Document.IssueDate}
	seen[id] = r
	return r, nil
}

// referringTo starts a document of kind, issued at now, that refers to
// orig (BG-3): a copy of orig's document without its texts and payment
// terms (the caller sets terms where the kind has any), and its record,
// inheriting orig's customer, collection and electronic flag.
func (a *App) referringTo(p account.Principal, orig invoicing.Invoice, kind invoicedoc.Kind, now time.Time) (invoicing.Invoice, invoicedoc.Document) {
	d := orig.Document
	d.Kind, d.IssueDate, d.Texts, d.Payment = kind, now, invoicedoc.Texts{}, invoicedoc.Payment{}
	d.Cancels = &invoicedoc.Reference{Number: orig.Number, IssueDate: orig.Document.IssueDate}
	inv := invoicing.Invoice{ID: a.IDs.New("invoice"), AccountID: p.AccountID, Environment: p.Environment,
		Kind: kind, CustomerID: orig.CustomerID, CollectionID: orig.CollectionID,
		RefersTo: &orig.ID, Electronic: orig.Electronic, CreatedAt: now}
	return inv, d
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Download formats.
const (
	FormatPDF = "pdf"
	FormatUBL = "ubl"
	FormatCII = "cii"
)

// Download returns a generated file. The identifier is the credential: a
// wrong one is NotFound exactly like an unknown invoice. XML of a document
// whose customer has no electronic invoicing is NotFound with its own code;
// XML still being generated is apperr.Accepted (202). The PDF is never
// pending: the interface makes it available with the invoice, so a PDF the
// job has not stored yet is rendered here (ensurePDF).
func (a *App) Download(ctx context.Context, invoiceID, identifier, format string) (DocumentFile, error) {
	inv, f, err := a.documentFile(ctx, invoiceID, identifier, format)
	if err != nil {
		return DocumentFile{}, err
	}
	return DocumentFile{Name: inv.Number, ContentType: f.ContentType, Body: f.Body}, nil
}

// DocumentFile is a generated file of an invoice document as a download
// answers it.
type DocumentFile struct {
	Name        string // the document number: the attachment's name before its extension
	ContentType string
	Body        []byte
}

// documentFile is Download's document and its stored (or rendered) file.
func (a *App) documentFile(ctx context.Context, invoiceID, identifier, format string) (invoicing.Invoice, invoicing.File, error) {
	const op = "app.Download"
	q := a.store.Read()
	inv, err := q.InvoiceByID(ctx, invoiceID)
	if err != nil || subtle.ConstantTimeCompare([]byte(inv.Identifier), []byte(identifier)) != 1 {
		return invoicing.Invoice{}, invoicing.File{}, apperr.E(op, apperr.NotFound, CodeNotFound, "no such invoice document")
	}
	if format != FormatPDF && !inv.Electronic {
		return inv, invoicing.File{}, apperr.E(op, apperr.NotFound, CodeElectronicInvoicingNotEnabled,
			"this document has no XRechnung file: its customer was created without electronic_invoicing (or it has no customer); the PDF is available")
	}
	f, err := q.GetFile(ctx, invoiceID, format)
	if apperr.KindOf(err) != apperr.NotFound {
		return inv, f, err
	}
	if format == FormatPDF {
		if f, err = a.ensurePDF(ctx, inv); err != nil && apperr.KindOf(err) != apperr.Unavailable {
			// A document that cannot be rendered is a bug, not the
			// downloader's fault: 503 like a dead job, cause logged.
			err = apperr.E(op, apperr.Unavailable, CodeGenerationFailed,
				"the document could not be generated; the operator has been alerted, retry later").WithCause(err)
		}
		return inv, f, err
	}
	state, serr := q.JobState(ctx, JobInvoiceFiles, invoiceID)
	if serr != nil {
		return inv, f, serr
	}
	if state == jobs.StateDead {
		return inv, f, apperr.E(op, apperr.Unavailable, CodeGenerationFailed,
			"the document could not be generated; the operator has been alerted, retry later")
	}
	return inv, f, apperr.E(op, apperr.Accepted, CodeGenerationPending,
		"the file is being generated; retry in a few seconds")
}

// ensurePDF returns the stored PDF of inv, rendering and storing it first
// if it is not there yet. Concurrent calls for one invoice in this instance
// share one rendering (single-flight); across instances the store keeps the
// first PDF written (PutFile inserts only if absent) and every caller gets
// the stored bytes, so all downloads of a document are identical. The
// rendering does not depend on the first caller's request staying open.
func (a *App) ensurePDF(ctx context.Context, inv invoicing.Invoice) (invoicing.File, error) {
	ctx = context.WithoutCancel(ctx)
	v, err, _ := a.pdfFlight.Do(inv.ID, func() (any, error) {
		f, err := a.store.Read().GetFile(ctx, inv.ID, FormatPDF)
		if apperr.KindOf(err) != apperr.NotFound {
			return f, err
		}
		a.pdfRuns.Add(1)
		p, err := a.renderPDF(&inv.Document, inv.Electronic)
		if err != nil {
			return invoicing.File{}, err
		}
		stored, err := a.putFiles(ctx, inv, []invoicing.File{p}, a.clock.Now())
		if err != nil {
			return invoicing.File{}, err
		}
		return stored[0], nil
	})
	if err != nil {
		return invoicing.File{}, err
	}
	return v.(invoicing.File), nil
}

// renderPDF renders with a.PDFRenderer (RenderPDF by default). A panic
// while rendering is returned as an error (code pdf_render_failed), never
// passed on: the download answers 503 generation_failed and the files job
// is buried dead with the message, for the operator to see and retry
// (/admin/jobs) once the cause is fixed.
func (a *App) renderPDF(d *invoicedoc.Document, electronic bool) (f invoicing.File, err error) {
	const op = "app.renderPDF"
	defer func() {
		if r := recover(); r != nil {
			err = apperr.E(op, apperr.Internal, pdf.CodeRenderFailed, fmt.Sprintf("rendering the PDF failed: %v", r))
		}
	}()
	render := a.PDFRenderer
	if render == nil {
		render = RenderPDF
	}
	return render(d, electronic)
}

// PDFsRendered is how many PDFs this instance has rendered (downloads and
// jobs together); tests use it to see that a document is rendered once.
func (a *App) PDFsRendered() int64 { return a.pdfRuns.Load() }

// generateFiles is the JobInvoiceFiles handler: CII and UBL (electronic
// customers only), then the PDF through ensurePDF (unless a download
// rendered it first). Files are inserted only if absent, so a repeated run
// is harmless and never replaces bytes already served.
func (a *App) generateFiles(ctx context.Context, j jobs.Job) error {
	inv, err := a.store.Read().InvoiceByID(ctx, j.Payload)
	if err != nil {
		return err
	}
	files, err := renderXML(&inv.Document, inv.Electronic)
	if err != nil {
		return err
	}
	if _, err := a.putFiles(ctx, inv, files, a.clock.Now()); err != nil {
		return err
	}
	_, err = a.ensurePDF(ctx, inv)
	if ae := apperr.As(err); ae != nil && ae.Code == pdf.CodeRenderFailed {
		// The same document fails the same way every time: dead at once,
		// with the cause, until the operator retries it.
		return jobs.Permanent(err)
	}
	return err
}

// usable refuses a new document for a customer whose erasure was
// requested (restricted to the retention duty of its old documents).
func usable(op string, c invoicing.Customer) error {
	if c.ErasedAt == nil {
		return nil
	}
	return apperr.E(op, apperr.Conflict, CodeCustomerErased, fmt.Sprintf("customer %q is erased: no new documents (docs/privacy.md)", c.ID))
}
