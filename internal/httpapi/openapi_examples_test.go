package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/farebox/farebox/api"
	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/store"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestOpenAPIExamples holds every operation of api/openapi.yaml to the
// convention of docs/openapi.md: a JSON request body has an example, every
// JSON success response has one, every documented error status lists its
// codes in x-error-codes and has an example per code it shows, and every
// example matches its schema (the validator the API tests use on real
// answers) with an error code its operation lists. Each failure names the
// operation (all paths sharing it), the status and what to add.
func TestOpenAPIExamples(t *testing.T) {
	t.Parallel()
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

// TestOpenAPIFixedErrorExamples compares every error example of a code
// whose answer does not depend on the operation with the answer the server
// really gives (message, code and details; the request id differs), so the
// examples follow when a message changes.
func TestOpenAPIFixedErrorExamples(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		t.Fatal(err)
	}
	e := apitest.New(t, store.SQLite, apitest.Options{})
	order := map[string]any{"product_ids": []string{"farebox-product-1509bb0a-9bf1-4331-8a11-8783593942a4"}}
	real := map[string]apitest.Req{
		"unsupported_media_type":  {Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey, Body: order, Header: map[string]string{"Content-Type": "text/plain"}},
		"invalid_idempotency_key": {Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey, Body: order, Header: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}},
		"invalid_api_key":         {Method: "GET", Path: "/v1/account.json", Key: "fbx_live_0000000000000000000000000000"},
		"malformed_json":          {Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey, Body: "{"},
		"body_too_large":          {Method: "POST", Path: "/v9/ticketing/orders.json", Key: e.LiveKey, Body: `{"optional_order_reference":"` + strings.Repeat("x", 70<<10) + `"}`},
	}
	type answer struct {
		Message string                `json:"message"`
		Code    string                `json:"code"`
		Details []apitest.ErrorDetail `json:"details"`
	}
	want := map[string]answer{}
	for code, req := range real {
		var a answer
		r := e.Do(req)
		r.JSON(t, &a)
		if r.Status < 400 || a.Code != code {
			t.Fatalf("%s %s: %d %s, want the code %s", req.Method, req.Path, r.Status, r.Body, code)
		}
		want[code] = a
	}
	checked := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, resp := range op.Responses.Map() {
				if resp.Value == nil || resp.Value.Content["application/json"] == nil {
					continue
				}
				for name, ex := range resp.Value.Content["application/json"].Examples {
					w, ok := want[name]
					if !ok || ex.Value == nil {
						continue
					}
					raw, _ := json.Marshal(ex.Value.Value)
					var got answer
					if err := json.Unmarshal(raw, &got); err != nil {
						t.Fatal(err)
					}
					checked++
					if !cmp.Equal(got, w, cmpopts.EquateEmpty()) {
						t.Errorf("%s %s: response %s example %q differs from the server's answer (-example +server):\n%s",
							method, path, status, name, cmp.Diff(got, w, cmpopts.EquateEmpty()))
					}
				}
			}
		}
	}
	if checked < len(want) {
		t.Errorf("only %d examples of %d fixed codes checked", checked, len(want))
	}
}
