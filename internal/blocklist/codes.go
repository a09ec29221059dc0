package blocklist

// The error codes of package blocklist: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeInvalidBlocklist   = "invalid_blocklist"
	CodeBlocklistTooLarge  = "blocklist_too_large"
	CodeBlocklistSignature = "blocklist_signature_invalid"
)
