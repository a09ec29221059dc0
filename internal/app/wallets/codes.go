package wallets

// The error codes of package wallets, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeEngineNotFound              = "engine_not_found"
	CodeEngineVersionNotFound       = "engine_version_not_found"
	CodeInspectionKeysNotConfigured = "inspection_keys_not_configured"
	CodeRotatingSecretNotConfigured = "rotating_secret_not_configured"
	CodePassUnavailable             = "pass_unavailable"
	CodeWalletBarcodeUnsupported    = "wallet_barcode_unsupported"
	CodeWalletNotConfigured         = "wallet_not_configured"
	CodeApplePassUnauthorized       = "apple_pass_unauthorized"
	CodeApplePassTypeUnknown        = "apple_pass_type_unknown"
	CodeInvalidDeviceID             = "invalid_device_library_identifier"
	CodeInvalidPushToken            = "invalid_push_token"
	CodeInvalidAppleLog             = "invalid_apple_log"
)
