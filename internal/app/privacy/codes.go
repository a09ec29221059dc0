package privacy

// The error codes of package privacy, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeAlreadyErased = "already_erased"
)
