package invoicing

// The error codes of package invoicing: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeInvalidCustomer  = "invalid_customer"
	CodeInvalidSplit     = "invalid_split"
	CodeSplitSumMismatch = "split_sum_mismatch"
	CodeUnknownField     = "unknown_field"
)
