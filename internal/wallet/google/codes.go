package google

// The error codes of package google: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeGoogleObjectExists          = "google_object_exists"
	CodeGoogleObjectNotFound        = "google_object_not_found"
	CodeGoogleWalletAPIError        = "google_wallet_api_error"
	CodeInvalidGoogleServiceAccount = "invalid_google_service_account"
	CodeInvalidGoogleWalletConfig   = "invalid_google_wallet_config"
)
