package billing

// The error codes of package billing, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	// CodeUsageLedgerUnavailable: a usage report could not first commit
	// the rows the ledger holds (ReadAfterFlush); the same code the
	// transport answers when a request's own row cannot be recorded.
	CodeUsageLedgerUnavailable = "usage_ledger_unavailable"
)
