package app

import (
	"net/http"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/invoicing"
	"github.com/farebox/farebox/internal/usage"
)

// The vocabulary the transport shares with app: who calls (a principal in
// an environment) and how a request is billed. The aliases keep one type
// per idea (app's use cases take account.Principal) while the transport
// names only app.

// Principal is an authenticated caller.
type Principal = account.Principal

// Environment is live or test.
type Environment = account.Environment

// Owner is the account and environment a capability record belongs to (the
// route table bills keyless requests to it).
type Owner = account.Owner

// IssuedInvoice is an issued invoicing document (invoice, cancellation or
// payment notice) as the use cases return it.
type IssuedInvoice = invoicing.Invoice

// Environments are every environment, in a fixed order (metric series).
var Environments = []Environment{account.Live, account.Test}

// Ledger takes a request's usage row and returns once it is durable
// (usage.Ledger, the database ledger, or usage.FileLog, the journal).
type Ledger = usage.Recorder

// Why a request is not billed (usage.Event.Reason); ReasonCounted for
// billed requests.
const (
	ReasonCounted = usage.ReasonCounted
	ReasonSession = usage.ReasonSession
	ReasonReplay  = usage.ReasonReplay
)

// UncountedReasons are the reasons of unbilled rows (metric label values).
var UncountedReasons = usage.UncountedReasons

// RequestOutcome is what the transport knows of an answered request.
type RequestOutcome struct {
	RequestID   string
	Endpoint    string // route pattern, e.g. "GET /v1/departures.json"
	Status      int
	AccountID   string // the caller or the account the request is attributed to
	Environment Environment
	// Uncounted, when set, is why the request is not billed although it
	// succeeded (ReasonReplay, ReasonSession).
	Uncounted string
}

// UsageEvent is the ledger row of an answered request, at the clock's now.
// The billing rule (api/openapi.yaml, docs/operations.md "Billing"): a
// request is billed when the service did the work it was asked for or
// judged the request (2xx, 3xx, 4xx other than 429: a client's mistake
// costs as much as its success), and not when the service failed (5xx),
// refused it for a rate limit (429), replayed a stored answer, or a session
// block covers it.
func (a *App) UsageEvent(o RequestOutcome) usage.Event {
	ev := usage.Event{RequestID: o.RequestID, AccountID: o.AccountID, Environment: o.Environment,
		Endpoint: o.Endpoint, Status: o.Status, At: a.clock.Now(), Counted: true, Reason: usage.ReasonCounted}
	switch {
	case o.Status >= 500:
		ev.Counted, ev.Reason = false, usage.ReasonFailed
	case o.Status == http.StatusTooManyRequests:
		ev.Counted, ev.Reason = false, usage.ReasonRateLimited
	case o.Uncounted != "":
		ev.Counted, ev.Reason = false, o.Uncounted
	}
	return ev
}
