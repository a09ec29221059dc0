// Package invoicedoc is the document model that every invoice output (PDF, UBL,
// CII) is rendered from. The caller (the invoicing service) fills a Document
// from its database records and the seller configuration; this package adds
// the derived values: VAT per line and per rate, totals, the service period
// (Leistungszeitpunkt / Leistungszeitraum) and the texts with their tags
// replaced. It performs no I/O.
//
// Limits: only VAT category S (standard or reduced rate, e.g. 7 %) is
// supported, every amount is in EUR cents, lines are priced gross (the
// charged amount is authoritative), and the only payment means is a SEPA
// credit transfer to the seller's IBAN. Cancellations use the credit-note
// form (type 381, positive amounts, reference to the cancelled invoice);
// payment notices reuse the invoice structure (type 380) without claiming
// XRechnung or EN 16931 conformance. Validate reports every problem that
// would make a receiver reject the XML before anything is rendered.
package invoicedoc
