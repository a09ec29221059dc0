// Package invoicing holds the invoicing records and their pure rules
// (issue 6): customers, billable items with their assignment (customer or
// split, collection), issued invoices and their rendered files; parsing and
// validating customers (address_lines, electronic_invoicing), validating
// splits of billable items, and formatting invoice numbers of the
// per-environment series. It does no I/O: internal/store maps rows to these
// records, internal/app applies the rules in transactions and
// internal/invoicedoc builds the documents.
//
// Limits: customers are immutable, so every check that a later invoice
// document would make on the buyer (internal/invoicedoc Validate) is made here,
// at creation: a customer that was accepted can always be invoiced.
package invoicing
