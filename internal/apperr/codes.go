package apperr

// The error codes of package apperr: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeInternalError    = "internal_error"
	CodeInvalidParameter = "invalid_parameter"
	// CodeOutcomeUnknown: a write whose commit was sent and never answered
	// (store's pgWrite); any layer may meet it, so it is the kernel's.
	CodeOutcomeUnknown = "outcome_unknown"
)
