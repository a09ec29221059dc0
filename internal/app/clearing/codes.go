package clearing

// The error codes of package clearing, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	// CodeMonthSuperseded: a month before the newest report that was
	// never reported itself cannot be reported any more (its ticket
	// months went into the later report as corrections).
	CodeMonthSuperseded = "clearing_month_superseded"
)
