package transit

// The error codes of package transit, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeFeedNotFound       = "feed_not_found"
	CodeTransitLoading     = "transit_loading"
	CodeTransitUnavailable = "transit_unavailable"
)
