package products

// The error codes of package products, each described in api/openapi.yaml
// (TestErrorCodeRegistry). An invalid catalog is catalog.CodeCatalogInvalid.
const (
	CodeAreaNotFound         = "area_not_found"
	CodeProductNotFound      = "product_not_found"
	CodeProductNotRestricted = "product_not_restricted"
)
