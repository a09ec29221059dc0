package inspection

// The error codes of package inspection, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeInvalidRevocationReason = "invalid_revocation_reason"
	CodeInvalidKeyID            = "invalid_key_id"
	CodeInvalidPublishAhead     = "invalid_publish_ahead"
	CodeUnknownInspectionKey    = "unknown_inspection_key"
	CodeInspectionKeyActive     = "inspection_key_active"
)
