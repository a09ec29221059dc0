package apitest

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// bodySchemas validates JSON response bodies against the document's
// schemas, compiled once per schema as JSON Schema 2020-12 (the dialect of
// OpenAPI 3.1). openapi3filter compiles the schema afresh for every
// response it checks, which was a quarter of the API tests' CPU time.
type bodySchemas struct {
	once     sync.Once
	compiler *jsonschema.Compiler
	err      error

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

var responseBodies bodySchemas

// docURL names the document as a schema resource; every schema is compiled
// from a JSON pointer into it, so `#/components/schemas/...` references
// resolve as they do in the document.
const docURL = "https://farebox.invalid/openapi.json"

func (b *bodySchemas) schema(doc *openapi3.T, pointer string) (*jsonschema.Schema, error) {
	b.once.Do(func() {
		raw, err := doc.MarshalJSON()
		if err != nil {
			b.err = err
			return
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			b.err = err
			return
		}
		b.compiler = jsonschema.NewCompiler()
		b.compiler.DefaultDraft(jsonschema.Draft2020)
		b.compiler.AssertFormat()
		b.err = b.compiler.AddResource(docURL, v)
		b.compiled = map[string]*jsonschema.Schema{}
	})
	if b.err != nil {
		return nil, b.err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.compiled[pointer]; ok {
		return s, nil
	}
	s, err := b.compiler.Compile(docURL + "#" + pointer)
	if err != nil {
		return nil, err
	}
	b.compiled[pointer] = s
	return s, nil
}

// validateJSONBody checks body against the schema of the response that
// answered status with mediaType in route (path template and method as
// the document writes them).
func validateJSONBody(doc *openapi3.T, path, method string, op *openapi3.Operation, status int, mediaType string, body []byte) error {
	pointer, ok := responseSchemaPointer(path, method, op, status, mediaType)
	if !ok {
		return nil
	}
	s, err := responseBodies.schema(doc, pointer)
	if err != nil {
		return fmt.Errorf("compile %s: %w", pointer, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("response body is not JSON: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("response body doesn't match schema: %w", err)
	}
	return nil
}

// responseSchemaPointer is the JSON pointer of the body schema that
// openapi3filter would pick for status and mediaType (the exact status,
// else default; the content entry content.Get matches), and false where
// the response has no schema.
func responseSchemaPointer(path, method string, op *openapi3.Operation, status int, mediaType string) (string, bool) {
	ref := op.Responses.Status(status)
	key := fmt.Sprint(status)
	if ref == nil {
		ref, key = op.Responses.Default(), "default"
	}
	if ref == nil || ref.Value == nil {
		return "", false
	}
	media := ref.Value.Content.Get(mediaType)
	if media == nil || media.Schema == nil {
		return "", false
	}
	var mediaKey string
	for k, m := range ref.Value.Content {
		if m == media {
			mediaKey = k
		}
	}
	base := "/paths/" + escapePointer(path) + "/" + strings.ToLower(method) + "/responses/" + escapePointer(key)
	if ref.Ref != "" {
		base = strings.TrimPrefix(ref.Ref, "#")
	}
	return base + "/content/" + escapePointer(mediaKey) + "/schema", true
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// isJSON tells a JSON media type (application/json, application/*+json).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// checkContentType is openapi3filter's check that a response with content
// answers in one of its media types, for the bodies it no longer reads.
func checkContentType(op *openapi3.Operation, status int, contentType string) error {
	ref := op.Responses.Status(status)
	if ref == nil {
		ref = op.Responses.Default()
	}
	if ref == nil || ref.Value == nil || len(ref.Value.Content) == 0 {
		return nil
	}
	if ref.Value.Content.Get(contentType) == nil {
		return fmt.Errorf("response header Content-Type has unexpected value: %q", contentType)
	}
	return nil
}
