package events

// The error codes of package events, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeEventPartMissing = "event_part_missing"
)
