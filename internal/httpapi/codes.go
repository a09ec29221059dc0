package httpapi

// The error codes of package httpapi: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeAPIKeyInQueryNotAllowed      = "api_key_in_query_not_allowed"
	CodeAPIKeyMissing                = "api_key_missing"
	CodeBodyRequired                 = "body_required"
	CodeBodyTooLarge                 = "body_too_large"
	CodeBodyUnreadable               = "body_unreadable"
	CodeCustomerRequired             = "customer_required"
	CodeDatabaseUnavailable          = "database_unavailable"
	CodeInspectionRecordsUnavailable = "inspection_records_unavailable"
	CodeInternalError                = "internal_error"
	CodeInvalidAuthorizationHeader   = "invalid_authorization_header"
	CodeInvalidIdempotencyKey        = "invalid_idempotency_key"
	CodeInvalidProductIDs            = "invalid_product_ids"
	CodeInvalidReactivationKey       = "invalid_reactivation_key"
	CodeInvalidString                = "invalid_string"
	CodeMalformedJSON                = "malformed_json"
	CodeMethodNotAllowed             = "method_not_allowed"
	CodeNotFound                     = "not_found"
	CodeNotReady                     = "not_ready"
	CodeRateLimited                  = "rate_limited"
	CodeRestoreSecretRequired        = "restore_secret_required"
	CodeUnknownField                 = "unknown_field"
	CodeUnsupportedMediaType         = "unsupported_media_type"
	CodeUsageLedgerUnavailable       = "usage_ledger_unavailable"
	CodeWrongType                    = "wrong_type"
	CodeSignInRequired               = "sign_in_required"
	CodeCSRFTokenInvalid             = "csrf_token_invalid"
	CodeFormRequired                 = "form_required"
)
