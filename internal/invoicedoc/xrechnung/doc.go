// Package xrechnung encodes an invoicedoc.Document as XRechnung 3.0 XML in both
// syntaxes: OASIS UBL 2.1 (EncodeUBL) and UN/CEFACT CII D16B (EncodeCII).
//
// Invoices use type 380 (UBL Invoice). Cancellations are credit notes, type
// 381, with positive amounts and a BG-3 reference to the cancelled invoice;
// in UBL that is the CreditNote document, as BR-CL-01 demands. Payment
// notices reuse the invoice structure (380, BG-3 pointing at the invoice
// when there is one) but carry a farebox specification identifier instead
// of the XRechnung one and a note saying they claim no XRechnung or EN 16931
// conformance.
//
// Limits: only VAT category S, EUR, SEPA credit transfer (payment means 58)
// to the seller's IBAN, and buyers with electronic_invoicing data: a document
// without it is refused with an apperr Unprocessable error, never encoded
// half. The writer emits elements in the XSD sequence, never writes an empty
// element (PEPPOL-EN16931-R008; the CII ApplicableHeaderTradeDelivery is the
// one required exception), strips characters XML 1.0 cannot carry, and
// re-parses its own output before returning it. Schema validity is tested
// with xmllint against the official XSDs; the Schematron layers (CEN,
// KoSIT) are not run here, their rules are checked by dedicated tests.
package xrechnung
