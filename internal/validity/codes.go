package validity

// The error codes of package validity: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeNotYet        = "activation_not_yet"
	CodeAnymore       = "activation_expired"
	CodeWindowExpired = "activation_window_expired"
	CodeBadStart      = "invalid_activation_start_datetime"
)

const (
	CodeInvalidProductDuration = "invalid_product_duration"
)
