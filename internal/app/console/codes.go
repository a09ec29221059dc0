package console

// The error codes of package console, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeInvalidJobID    = "invalid_job_id"
	CodeInvalidJobState = "invalid_job_state"
)
