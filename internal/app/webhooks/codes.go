package webhooks

// The error codes of package webhooks, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeEventNotFound           = "event_not_found"
	CodeTooManyWebhookEndpoints = "too_many_webhook_endpoints"
	CodeWebhookEndpointDisabled = "webhook_endpoint_disabled"
)
