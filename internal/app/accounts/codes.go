package accounts

// The error codes of package accounts, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeInvalidAPIKey      = "invalid_api_key"
	CodeInvalidKeyPrefix   = "invalid_key_prefix"
	CodeKeyNotFound        = "key_not_found"
	CodeKeyPrefixAmbiguous = "key_prefix_ambiguous"
	CodeNameRequired       = "name_required"
)
