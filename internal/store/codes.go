package store

// The error codes of package store: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeAccountNotFound            = "account_not_found"
	CodeAlreadyCancelled           = "already_cancelled"
	CodeAlreadyInvoiced            = "already_invoiced"
	CodeBillableCollectionNotFound = "billable_collection_not_found"
	CodeBillableItemNotFound       = "billable_item_not_found"
	CodeConflict                   = "conflict"
	CodeCouponNotFound             = "coupon_not_found"
	CodeCustomerNotFound           = "customer_not_found"
	CodeDashboardUserNotFound      = "dashboard_user_not_found"
	CodeDashboardUserTaken         = "dashboard_user_taken"
	CodeDeadJobNotFound            = "dead_job_not_found"
	CodeDatabaseUnavailable        = "database_unavailable"
	CodeFeedChanged                = "feed_changed"
	CodeFeedCorrupt                = "feed_corrupt"
	CodeFileNotFound               = "file_not_found"
	CodeInvalidAPIKey              = "invalid_api_key"
	CodeInviteNotFound             = "invite_not_found"
	CodeInvoiceNotFound            = "invoice_not_found"
	CodeKeyNotFound                = "key_not_found"
	CodeOrderNotFound              = "order_not_found"
	CodeReceiptNotFound            = "receipt_not_found"
	CodeRequestCancelled           = "request_cancelled"
	CodeSessionNotFound            = "session_not_found"
	CodeStorageFull                = "storage_full"
	CodeSubscriptionNotFound       = "subscription_not_found"
	CodeTestClockNotFound          = "test_clock_not_found"
	CodeTicketNotFound             = "ticket_not_found"
	CodeWebhookEndpointNotFound    = "webhook_endpoint_not_found"
)
