package apperr

// The error codes of package apperr: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeInternalError    = "internal_error"
	CodeInvalidParameter = "invalid_parameter"
)
