package webusers

// The error codes of package webusers, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeConsoleNotConfigured = "console_not_configured"
	CodeInvalidEmail         = "invalid_email"
	CodeNotFound             = "not_found"
	CodePasswordMismatch     = "password_mismatch"
	CodePasswordTooLong      = "password_too_long"
	CodePasswordTooShort     = "password_too_short"
	CodeSignInFailed         = "sign_in_failed"
)
