package invoices

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/app/books"
	"github.com/farebox/farebox/internal/app/customers"
	"github.com/farebox/farebox/internal/app/kit"
	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/event"
	"github.com/farebox/farebox/internal/idempotency"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/jobs"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/money"
)

// Document is an issued invoicing document (invoice, cancellation or
// payment notice) as the use cases return it; Response shows it.
type Document = invoicing.Invoice

// InvoiceTexts are the optional texts of an invoice.
type InvoiceTexts = invoicedoc.Texts

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
func (s *Service) IssueInvoice(ctx context.Context, claim idempotency.Claim, p account.Principal, req InvoiceRequest) (invoicing.Invoice, error) {
	const op = "invoices.IssueInvoice"
	if err := checkTexts(req.Texts); err != nil {
		return invoicing.Invoice{}, err
	}
	var inv invoicing.Invoice
	return s.issue(ctx, claim, &inv, func(q Queries) error {
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
		now, err := s.timeOf(ctx, q, item.TestClockID) // an item of a test clock is invoiced at its time
		if err != nil {
			return err
		}
		d := invoicedoc.Document{Kind: invoicedoc.KindInvoice, IssueDate: now, Test: p.Environment == account.Test,
			Seller: s.seller, Buyer: buyer, Lines: lines, Texts: req.Texts,
			Payment: invoicedoc.Payment{DueDate: now.AddDate(0, 0, s.paymentDays)}}
		inv = invoicing.Invoice{ID: s.IDs.New("invoice"), AccountID: p.AccountID, Environment: p.Environment,
			Kind: invoicedoc.KindInvoice, Electronic: electronic, CollectionID: item.CollectionID, CreatedAt: now}
		if customerID != "" {
			inv.CustomerID = &customerID
		}
		if err := s.finish(ctx, q, &inv, d); err != nil {
			return err
		}
		for _, id := range covered {
			if err := q.ClaimItem(ctx, id, customerID, inv.ID); err != nil {
				return err
			}
		}
		if err := s.auditInvoiced(ctx, q, p, inv, covered, nil); err != nil {
			return err
		}
		return s.createdEvents(ctx, q, inv)
	})
}

// issue writes a new document in one transaction (write fills *inv) and,
// once it has committed, wakes the job runner for the document's file job;
// on failure nothing is written and the zero invoice is returned.
func (s *Service) issue(ctx context.Context, claim idempotency.Claim, inv *invoicing.Invoice, write func(q Queries) error) (invoicing.Invoice, error) {
	if err := s.DB.WriteClaimed(ctx, claim, write); err != nil {
		return invoicing.Invoice{}, err
	}
	s.notify()
	return *inv, nil
}

// issueReferring issues a document of kind (a cancellation or a payment
// notice) that refers to the invoice id: in the transaction of issue, write
// gets the invoice once it is known to be a standing invoice (422
// not_an_invoice for another kind of document; 409 already_cancelled or
// invoice_cancelled once it is cancelled), and the invoice's time: that of
// its first line's billable item (timeOf: a test clock's for an item on a
// clock, as when the invoice was issued).
func (s *Service) issueReferring(ctx context.Context, claim idempotency.Claim, p account.Principal, id string, kind invoicedoc.Kind, inv *invoicing.Invoice,
	write func(q Queries, orig invoicing.Invoice, now time.Time) error) (invoicing.Invoice, error) {
	op, cancel := "invoices.PaymentNoticeForInvoice", kind == invoicedoc.KindCancellation
	if cancel {
		op = "invoices.CancelInvoice"
	}
	return s.issue(ctx, claim, inv, func(q Queries) error {
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
		now, err := s.timeOf(ctx, q, clockID)
		if err != nil {
			return err
		}
		return write(q, orig, now)
	})
}

// finish validates the document, then numbers it (last, to hold the series
// row lock briefly), writes the invoice and enqueues its file job.
func (s *Service) finish(ctx context.Context, q Queries, inv *invoicing.Invoice, d invoicedoc.Document) error {
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
	if err := s.books.Append(ctx, q, books.Issued(*inv)); err != nil {
		return err
	}
	// The job runs on the service's time, also for a document dated by a
	// test clock.
	if err := q.EnqueueJob(ctx, jobs.NewJob{Kind: JobFiles, Payload: inv.ID}, s.Clock.Now()); err != nil {
		return err
	}
	return s.addDelivery(ctx, q, *inv)
}

// addDelivery writes the delivery of a new document to its buyer and its
// first attempt's job, in the issuing transaction (a committed document
// always has its delivery), when the buyer's channel has a transport.
func (s *Service) addDelivery(ctx context.Context, q Queries, inv invoicing.Invoice) error {
	now := s.Clock.Now()
	d, ok := invoicing.NewDelivery(s.IDs.New("delivery"), inv, now)
	if !ok || !slices.Contains(s.channels, d.Channel) {
		return nil
	}
	if err := q.AddInvoiceDelivery(ctx, d); err != nil {
		return err
	}
	return q.EnqueueJob(ctx, jobs.NewJob{Kind: invoicing.JobDeliver, Payload: d.ID, MaxAttempts: invoicing.DeliverMaxAttempts}, now)
}

// createdEvents writes invoice.created or payment_notice.created for a
// document finish wrote.
func (s *Service) createdEvents(ctx context.Context, q Queries, inv invoicing.Invoice) error {
	ev := s.eventsAt(inv.AccountID, inv.Environment, inv.CreatedAt)
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
			return apperr.Validation("invoices.IssueInvoice", CodeTextTooLong, "/"+f.name, fmt.Sprintf("%s must be at most %d characters", f.name, MaxTextLen))
		}
	}
	return checkPrintable("invoices.IssueInvoice", printedText{"/subject", t.Subject}, printedText{"/notes", t.Notes},
		printedText{"/custom_text_before_table", t.BeforeTable}, printedText{"/custom_text_after_table", t.AfterTable})
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
			return "", apperr.E("invoices.IssueInvoice", apperr.Unprocessable, CodeCustomerRequired,
				fmt.Sprintf("billable item %s is split between customers: invoice each customer with …/invoice/{customer_id}.json", it.ID))
		case it.CustomerID != nil:
			c = *it.CustomerID
		}
		if i > 0 && c != cust {
			return "", apperr.E("invoices.IssueInvoice", apperr.Unprocessable, CodeCustomerRequired,
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
	q     Queries
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
	if err := customers.Usable("invoices.IssueInvoice", cu); err != nil {
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
	if err := customers.Usable("invoices.IssueInvoice", cu); err != nil {
		return nil, false, err
	}
	if err := cu.CheckStored("invoices.IssueInvoice"); err != nil {
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
func (s *Service) Invoice(ctx context.Context, p account.Principal, id string) (invoicing.Invoice, error) {
	return s.DB.Read().Invoice(ctx, p.AccountID, p.Environment, id)
}

// CancelInvoice issues the cancellation (Stornorechnung, credit note 381)
// of an invoice: its own number from the invoice series, the original's
// lines, a reference to the original; the original's items become
// invoiceable again. An invoice cancels once (409 after that).
func (s *Service) CancelInvoice(ctx context.Context, claim idempotency.Claim, p account.Principal, id string) (invoicing.Invoice, error) {
	var inv invoicing.Invoice
	return s.issueReferring(ctx, claim, p, id, invoicedoc.KindCancellation, &inv, func(q Queries, orig invoicing.Invoice, now time.Time) error {
		var d invoicedoc.Document
		inv, d = s.referringTo(p, orig, invoicedoc.KindCancellation, now)
		if err := s.finish(ctx, q, &inv, d); err != nil {
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
		if err := s.auditInvoiced(ctx, q, p, orig, items, &inv); err != nil {
			return err
		}
		ev := s.eventsAt(p.AccountID, p.Environment, now)
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
func (s *Service) PaymentNoticeForInvoice(ctx context.Context, claim idempotency.Claim, p account.Principal, id string) (invoicing.Invoice, error) {
	var inv invoicing.Invoice
	return s.issueReferring(ctx, claim, p, id, invoicedoc.KindPaymentNotice, &inv, func(q Queries, orig invoicing.Invoice, now time.Time) error {
		var d invoicedoc.Document
		inv, d = s.referringTo(p, orig, invoicedoc.KindPaymentNotice, now)
		d.Payment = invoicedoc.Payment{DueDate: laterOf(orig.Document.Payment.DueDate, now.AddDate(0, 0, s.paymentDays))}
		if err := s.finish(ctx, q, &inv, d); err != nil {
			return err
		}
		return s.createdEvents(ctx, q, inv)
	})
}

// PaymentNoticeForCollection issues a payment notice for the items of a
// collection charged to one customer (customerID "" applies the rule of the
// invoice endpoint without customer). Every item of the collection for that
// customer is listed, invoiced or not; nothing is claimed.
func (s *Service) PaymentNoticeForCollection(ctx context.Context, claim idempotency.Claim, p account.Principal, collectionID, customerID string) (invoicing.Invoice, error) {
	const op = "invoices.PaymentNoticeForCollection"
	var inv invoicing.Invoice
	return s.issue(ctx, claim, &inv, func(q Queries) error {
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
		now, err := s.timeOf(ctx, q, items[0].TestClockID) // the time of the collection's first item
		if err != nil {
			return err
		}
		d := invoicedoc.Document{Kind: invoicedoc.KindPaymentNotice, IssueDate: now, Test: p.Environment == account.Test,
			Seller: s.seller, Buyer: buyer, Lines: lines,
			Payment: invoicedoc.Payment{DueDate: now.AddDate(0, 0, s.paymentDays)}}
		inv = invoicing.Invoice{ID: s.IDs.New("invoice"), AccountID: p.AccountID, Environment: p.Environment,
			Kind: invoicedoc.KindPaymentNotice, CollectionID: &collectionID, Electronic: electronic, CreatedAt: now}
		if customerID != "" {
			inv.CustomerID = &customerID
		}
		if err := s.finish(ctx, q, &inv, d); err != nil {
			return err
		}
		return s.createdEvents(ctx, q, inv)
	})
}

// standingInvoice is the invoice that bills item to customer (its claim),
// or nil; seen caches the references by invoice id.
func standingInvoice(ctx context.Context, q Queries, itemID, customerID string, seen map[string]*invoicedoc.Reference) (*invoicedoc.Reference, error) {
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
func (s *Service) referringTo(p account.Principal, orig invoicing.Invoice, kind invoicedoc.Kind, now time.Time) (invoicing.Invoice, invoicedoc.Document) {
	d := orig.Document
	d.Kind, d.IssueDate, d.Texts, d.Payment = kind, now, invoicedoc.Texts{}, invoicedoc.Payment{}
	d.Cancels = &invoicedoc.Reference{Number: orig.Number, IssueDate: orig.Document.IssueDate}
	inv := invoicing.Invoice{ID: s.IDs.New("invoice"), AccountID: p.AccountID, Environment: p.Environment,
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

// auditInvoiced records in the books that inv claims each of items, or
// (cancellation set) that its cancellation released them, at the time of
// the document doing it.
func (s *Service) auditInvoiced(ctx context.Context, q Queries, p account.Principal, inv invoicing.Invoice, items []string, cancellation *invoicing.Invoice) error {
	var recs []books.Record
	seen := map[string]bool{}
	for _, id := range items {
		if seen[id] {
			continue
		}
		seen[id] = true
		action, detail, at := invoicing.AuditInvoiced, map[string]any{"invoice_id": inv.ID, "invoice_number": inv.Number, "customer_id": inv.CustomerID}, inv.CreatedAt
		if cancellation != nil {
			action, at = invoicing.AuditInvoiceCancelled, cancellation.CreatedAt
			detail["cancellation_id"], detail["cancellation_number"] = cancellation.ID, cancellation.Number
		}
		recs = append(recs, books.ItemChange(p, id, action, detail, at))
	}
	return s.books.Append(ctx, q, recs...)
}

// InvoicesRequest is GET /v9/ticketing/invoices.json's query, as sent;
// Number and CustomerID are nil when absent.
type InvoicesRequest struct {
	kit.ListRequest
	Number, CustomerID *string
}

// Invoices lists the caller's documents of its environment (invoices,
// cancellations, payment notices), newest first, as
// GET /v5/ticketing/invoices/{id}.json shows them.
func (s *Service) Invoices(ctx context.Context, p account.Principal, req InvoicesRequest) (kit.ListJSON[InvoiceJSON], error) {
	var l kit.ListParams
	f := invoicing.InvoiceFilter{Number: req.Number, CustomerID: req.CustomerID}
	return kit.RunList(ctx, s.DB.Read(), p, "invoices.Invoices", "invoices", "invoice", req.ListRequest, &l, &f.Query,
		func(q Queries) (list.Page[invoicing.Invoice], error) { return q.Invoices(ctx, f) },
		func(inv invoicing.Invoice) (InvoiceJSON, error) { return s.Response(inv), nil })
}
