package engines

// The error codes of package engines: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeInspectionBarcodeNotFound = "inspection_barcode_not_found"
)
