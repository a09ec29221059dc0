package invoicedoc

// The error codes of package invoice: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeInvoiceInvalid      = "invoice_invalid"
	CodeSellerConfigInvalid = "seller_config_invalid"
)
