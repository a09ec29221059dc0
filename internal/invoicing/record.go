package invoicing

import (
	"time"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/list"
	"github.com/farebox/farebox/internal/money"
	"github.com/farebox/farebox/internal/ticketing"
)

// Invoice is an issued document (invoice, cancellation or payment notice)
// with the snapshot of the document model its files are generated from.
type Invoice struct {
	ID           string
	AccountID    string
	Environment  account.Environment
	Kind         invoicedoc.Kind
	Number       string
	Identifier   string // the download secret
	CustomerID   *string
	CollectionID *string
	RefersTo     *string // the cancelled invoice, or the invoice a payment notice asks to pay
	CancelledBy  *string
	Electronic   bool // UBL and CII are generated
	GrossCents   money.Cents
	Document     invoicedoc.Document
	CreatedAt    time.Time
}

// File is one generated file of an issued document.
type File struct {
	Format      string // pdf, ubl, cii
	ContentType string
	Body        []byte
}

// Assignment is the invoicing state of a billable item: its customer or
// split, and its collection.
type Assignment struct {
	CustomerID   *string
	Split        []Share // nil when not split
	CollectionID *string
}

// BillableItem is a billable item with its assignment.
type BillableItem struct {
	ticketing.BillableItem
	Assignment
}

// InvoiceFilter selects the documents of a list (docs/lists.md).
type InvoiceFilter struct {
	list.Query
	// Number and CustomerID, when set, keep the documents with exactly
	// that number or customer.
	Number, CustomerID *string
}

// BillableItemFilter selects the billable items of a list (docs/lists.md);
// its created range bounds ordered_at.
type BillableItemFilter struct {
	list.Query
	// Invoiced, when set, keeps the items with (true) or without (false)
	// a standing invoice for any customer.
	Invoiced *bool
	// CustomerID and CollectionID, when set, keep the items assigned to
	// exactly that customer (not a split) or collection.
	CustomerID, CollectionID *string
}

// Collection is a billable collection.
type Collection struct {
	ID          string
	AccountID   string
	Environment account.Environment
	CreatedAt   time.Time
}

// CollectionFilter selects the collections of a list.
type CollectionFilter struct {
	list.Query
}
