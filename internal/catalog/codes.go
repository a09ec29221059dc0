package catalog

// The error codes of package catalog: the stable `code` of the errors it
// returns, each described in api/openapi.yaml (TestErrorCodeRegistry).
const (
	CodeCatalogInvalid = "catalog_invalid"
)
