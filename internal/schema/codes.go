package schema

// The error codes of package schema: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeIdentificationMediumInvalid = "identification_medium_invalid"
	CodeInvalidJSON                 = "invalid_json"
	CodeInvalidSchema               = "invalid_schema"
	CodeTariffSettingsInvalid       = "tariff_settings_invalid"
)
