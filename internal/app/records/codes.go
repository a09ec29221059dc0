package records

// The error codes of package records, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeInspectionBatchTooLarge = "inspection_batch_too_large"
	CodeInspectorNameTaken      = "inspector_name_taken"
	CodeInspectorRevoked        = "inspector_revoked"
	CodeInvalidInspectionRecord = "invalid_inspection_record"
	CodeInvalidInspectorName    = "invalid_inspector_name"
	CodeInvalidInspectorToken   = "invalid_inspector_token"
	CodeUnknownOutcome          = "unknown_inspection_outcome"
)
