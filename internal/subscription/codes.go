package subscription

// The error codes of package subscription: the stable `code` of the 422
// errors its rules return, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeNotOrdered     = "subscription_cycle_not_ordered"
	CodeAlreadyOrdered = "subscription_cycle_already_ordered"
	CodeCycleEnded     = "subscription_cycle_ended"
	CodeCycleNotFound  = "subscription_cycle_not_found"
	CodeNoUnordered    = "no_unordered_subscription_cycle"
	CodeCancelled      = "subscription_cancelled"
	CodeEnded          = "subscription_ended"
	CodeRestored       = "subscription_restored"
	CodeTooFarAhead    = "subscription_cycle_too_far_ahead"
	CodeAlreadyActive  = "coupon_already_activated"
)
