package apple

// The error codes of package apple: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeInvalidAppleCredentials = "invalid_apple_credentials"
)
