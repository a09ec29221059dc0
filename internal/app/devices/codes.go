package devices

// The error codes of package devices, each described in api/openapi.yaml
// (TestErrorCodeRegistry).
const (
	CodeInvalidDeviceKey      = "invalid_device_key"
	CodeTicketNotDynamic      = "ticket_not_dynamic"
	CodeDeviceBindingConflict = "device_binding_conflict"
	CodeTicketNotValid        = "ticket_not_valid"
	CodeDeviceNotBound        = "device_not_bound"
	CodeDeviceMoveTooSoon     = "device_move_too_soon"
	CodeTicketNotFound        = "ticket_not_found"
)
