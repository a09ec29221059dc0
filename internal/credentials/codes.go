package credentials

// The error codes of package credentials: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeConcurrentRotation    = "concurrent_key_rotation"
	CodeInspectionKeyNotFound = "inspection_key_not_found"
	CodeInvalidConfiguration  = "invalid_configuration"
	CodeNoStore               = "no_store"
)
