package xrechnung

// The error codes of package xrechnung: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeElectronicInvoicingMissing = "electronic_invoicing_missing"
	CodeInvoiceInvalid             = "invoice_invalid"
	CodeInvoiceMissing             = "invoice_missing"
)
