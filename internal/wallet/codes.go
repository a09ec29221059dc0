package wallet

// The error codes of package wallet: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeInvalidTicketView = "invalid_ticket_view"
)
