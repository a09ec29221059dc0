package customers

// The error codes of package customers, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeCustomerErased = "customer_erased"
)
