package app

// The error codes of package app: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeAreaMissing            = "area_missing"
	CodeCatalogInvalid         = "catalog_invalid"
	CodeConflict               = "conflict"
	CodeCouponAlreadyActivated = "coupon_already_activated"
	CodeCouponRestored         = "coupon_restored"
	CodeInternalError          = "internal_error"
	CodeInvalidCouponIDs       = "invalid_coupon_ids"
	CodeInvalidOrderReference  = "invalid_order_reference"
	CodeInvalidProductIDs      = "invalid_product_ids"
	CodeInvalidTestClock       = "invalid_test_clock"
	CodeInvalidReactivationKey = "invalid_reactivation_key"
	CodeOrderNotFound          = "order_not_found"
	CodeOriginalNotActivated   = "original_not_activated"
	CodeProductMissing         = "product_missing"
	CodeReactivationKeyUsed    = "reactivation_key_used"
	CodeSecretCorrupt          = "secret_corrupt"
	CodeNotActivated           = "coupon_not_activated"
	CodeInvalidStart           = "invalid_activation_start"
	CodeInvalidOption          = "invalid_identification_option"
	CodeNothingToRenew         = "nothing_to_renew"
	CodeInvalidEnvironment     = "invalid_environment"
)

const (
	CodeEngineNotFound               = "engine_not_found"
	CodeIdempotencyKeyInFlight       = "idempotency_key_in_flight"
	CodeIdempotencyKeyOutcomeUnknown = "idempotency_key_outcome_unknown"
	CodeIdempotencyKeyReused         = "idempotency_key_reused"
	CodeInvalidRevocationReason      = "invalid_revocation_reason"
	CodeTicketAlreadyInvalid         = "ticket_already_invalid"
)
