package realtime

// The error codes of package realtime: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeGTFSRTDifferential = "gtfs_rt_differential"
	CodeGTFSRTInvalid      = "gtfs_rt_invalid"
)
