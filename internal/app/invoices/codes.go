package invoices

// The error codes of package invoices, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeAlreadyCancelled              = "already_cancelled"
	CodeAlreadyInvoiced               = "already_invoiced"
	CodeCollectionEmpty               = "collection_empty"
	CodeCustomerAndSplit              = "customer_and_split"
	CodeCustomerErased                = "customer_erased"
	CodeCustomerNotInCollection       = "customer_not_in_collection"
	CodeCustomerNotOnItem             = "customer_not_on_item"
	CodeCustomerRequired              = "customer_required"
	CodeElectronicInvoicingNotEnabled = "electronic_invoicing_not_enabled"
	CodeGenerationFailed              = "generation_failed"
	CodeGenerationPending             = "generation_pending"
	CodeInvalidBillableItemIDs        = "invalid_billable_item_ids"
	CodeInvalidCollectionID           = "invalid_collection_id"
	CodeInvalidCustomerID             = "invalid_customer_id"
	CodeInvoiceCancelled              = "invoice_cancelled"
	CodeItemAlreadyInvoiced           = "item_already_invoiced"
	CodeItemInOtherCollection         = "item_in_other_collection"
	CodeNotAnInvoice                  = "not_an_invoice"
	CodeNotFound                      = "not_found"
	CodeNothingToUpdate               = "nothing_to_update"
	CodeTextTooLong                   = "text_too_long"
	CodeUnknownBillableItem           = "unknown_billable_item"
	CodeUnknownCollection             = "unknown_collection"
	CodeUnknownCustomer               = "unknown_customer"
	CodeUnprintableText               = "unprintable_text"
)
