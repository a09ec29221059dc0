package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed default_catalog.json
var defaultCatalog []byte

// Default returns the built-in catalog: ten German tariff areas with their
// local single, child and day tickets, the national area with the monthly
// national ticket (4900 cents) and its job-ticket variant (4655 cents,
// restricted). Ids are rewritten from "farebox-" to prefix.
func Default(prefix string) (*File, error) {
	raw := defaultCatalog
	if prefix != "farebox" {
		raw = []byte(strings.ReplaceAll(string(raw), `"farebox-`, `"`+prefix+`-`))
	}
	return Parse(raw)
}

// Parse decodes a catalog file strictly (unknown fields are errors).
func Parse(raw []byte) (*File, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return &f, nil
}
