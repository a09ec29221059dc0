package invoicedelivery

// The error codes of package invoicedelivery, each described in
// api/openapi.yaml (TestErrorCodeRegistry).
const (
	// CodeNoElectronicAddress: the document's buyer has no electronic
	// address to send it to (no customer, or one without
	// electronic_invoicing).
	CodeNoElectronicAddress = "no_electronic_address"
	// CodeChannelUnavailable: the buyer is reached on a channel this
	// instance has no transport for (e-mail without --smtp-url; Peppol).
	CodeChannelUnavailable = "delivery_channel_unavailable"
	// CodeDeliveryPending: the document has a delivery still under way.
	CodeDeliveryPending = "delivery_pending"
)
