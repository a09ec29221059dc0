// Package api embeds the OpenAPI 3.1 description of farebox (openapi.yaml)
// and serves it as JSON.
package api

import (
	_ "embed"
	"encoding/json"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed openapi.yaml
var YAML []byte

var (
	jsonOnce  sync.Once
	jsonBytes []byte
	jsonErr   error
)

// JSON returns the document converted to JSON (computed once).
func JSON() ([]byte, error) {
	jsonOnce.Do(func() {
		var doc any
		if jsonErr = yaml.Unmarshal(YAML, &doc); jsonErr != nil {
			return
		}
		jsonBytes, jsonErr = json.Marshal(doc)
	})
	return jsonBytes, jsonErr
}
