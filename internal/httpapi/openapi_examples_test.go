package httpapi_test

import (
	"testing"

	"github.com/farebox/farebox/api"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIExamples holds every operation of api/openapi.yaml to the
// convention of docs/openapi.md: a JSON request body has an example, every
// JSON success response has one, every documented error status lists its
// codes in x-error-codes and has an example per code it shows, and every
// example matches its schema (the validator the API tests use on real
// answers) with an error code its operation lists. Each failure names the
// operation (all paths sharing it), the status and what to add.
func TestOpenAPIExamples(t *testing.T) {
	// Loaded without doc.Validate, so a broken example is reported here by
	// operation rather than as one load error.
	doc, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		t.Fatal(err)
	}
	probs := apitest.ExampleProblems(doc)
	for _, p := range probs {
		t.Error(p)
	}
	if n := len(doc.Paths.Map()); n < 50 && len(probs) == 0 {
		t.Errorf("only %d paths: is api/openapi.yaml the whole document?", n)
	}
}
