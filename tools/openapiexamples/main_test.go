package main

import (
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/getkin/kin-openapi/openapi3"
)

// errorSchema is the Error schema of the sample documents, the last
// entry of their components.schemas.
const errorSchema = `    Error:
      type: object
      required: [message, code, details, request_id]
      properties:
        message: {type: string}
        code: {type: string}
        details: {type: array}
        request_id: {type: string}
`

const sample = `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /v1/widgets/{widget_id}.json:
    get: &getWidget
      # a comment the tool keeps
      security: [{bearer: []}]
      parameters: [{name: widget_id, in: path, required: true, schema: {type: string}}]
      responses:
        "200":
          description: The widget.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Widget"}
        "404": {$ref: "#/components/responses/Error"}
        default: {$ref: "#/components/responses/Error"}
  /v2/widgets/{widget_id}.json:
    get: *getWidget
  /v1/widgets.json:
    post:
      security: [{bearer: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, properties: {name: {type: string}}}
      responses:
        "201":
          description: Made.
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Widget"}
components:
  responses:
    Error:
      description: An error.
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
  schemas:
    Widget: {type: object, required: [id, price_in_cents], properties: {id: {type: string}, price_in_cents: {type: integer}}}
` + errorSchema

func TestFillMakesTheConventionHold(t *testing.T) {
	xs := []apitest.Exchange{
		{Method: "GET", Path: "/v2/widgets/{widget_id}.json", Status: 200, Response: `{"id":"farebox-widget-1","price_in_cents":380}`},
		{Method: "GET", Path: "/v1/widgets/{widget_id}.json", Status: 404, Response: `{"message":"widget not found","code":"widget_not_found","details":[],"request_id":"a1"}`},
		{Method: "GET", Path: "/v1/widgets/{widget_id}.json", Status: 401, Response: `{"message":"API key malformed, unknown or revoked","code":"invalid_api_key","details":[],"request_id":"a2"}`},
		{Method: "GET", Path: "/v1/widgets/{widget_id}.json", Status: 429, Response: `{"message":"slow down","code":"rate_limited","details":[],"request_id":"a3"}`},
		{Method: "POST", Path: "/v1/widgets.json", Status: 201, Request: `{"name":"Rad"}`, Response: `{"id":"farebox-widget-2","price_in_cents":1200}`},
		{Method: "POST", Path: "/v1/widgets.json", Status: 201, Request: `{"name":"` + strings.Repeat("A", 50) + `"}`, Response: `{"id":"farebox-widget-3","price_in_cents":1}`},
		{Method: "POST", Path: "/v1/widgets.json", Status: 400, Request: `{`, Response: `{"message":"malformed JSON: unexpected end of input","code":"malformed_json","details":[],"request_id":"a4"}`},
	}
	out, notes, err := fill([]byte(sample), xs)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// 413 and 415 (possible for every JSON body) have no recorded answer.
	var left []string
	for _, p := range apitest.ExampleProblems(doc) {
		if !strings.Contains(p, "response 413 application/json has no example") && !strings.Contains(p, "response 415 application/json has no example") {
			left = append(left, p)
		}
	}
	if len(left) > 0 {
		t.Errorf("after fill:\n%s\n\n%s", strings.Join(left, "\n"), out)
	}
	if len(notes) != 2 {
		t.Errorf("notes %q, want the two statuses without a recorded answer", notes)
	}
	s := string(out)
	testtool.Contains(t, s,
		"# a comment the tool keeps",
		`x-error-codes: {"401": [api_key_in_query_not_allowed, api_key_missing, invalid_api_key, invalid_authorization_header], "404": [not_found, widget_not_found]}`,
		`example: {"id": "farebox-widget-1", "price_in_cents": 380}`,
		`example: {"name": "Rad"}`,
		`widget_not_found: {value: {"message": "widget not found", "code": "widget_not_found", "details": [], "request_id": "a1"}}`,
		`invalid_api_key: {value: {"message": "API key malformed, unknown or revoked"`,
	)
	if strings.Contains(s, "rate_limited") {
		t.Errorf("a 429 (under default) was listed:\n%s", s)
	}
	again, _, err := fill(out, xs)
	if err != nil || string(again) != s {
		t.Errorf("a second fill changed the file (err %v):\n%s", err, again)
	}
	// a new code recorded later is merged into the list and gets its example
	xs = append(xs, apitest.Exchange{Method: "GET", Path: "/v1/widgets/{widget_id}.json", Status: 404, Response: `{"message":"widget gone","code":"widget_gone","details":[],"request_id":"a5"}`})
	merged, _, err := fill(out, xs)
	if err != nil || !strings.Contains(string(merged), `"404": [not_found, widget_gone, widget_not_found]`) || !strings.Contains(string(merged), `widget_gone: {value:`) {
		t.Errorf("new code not merged (err %v):\n%s", err, merged)
	}
}

// An error response written once under an anchor and used by alias in
// other operations (the webhook endpoints' shared 404) is one node: the
// tool adds each missing example to it once, not once per operation
// (it used to write the same key five times, which YAML refuses).
func TestFillSharedErrorResponseOnce(t *testing.T) {
	const doc = `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /v1/hooks/{id}.json:
    get:
      responses:
        "200":
          description: A hook.
          content:
            application/json:
              example: {"id": "h1"}
              schema: {type: object}
        "404": &hookNotFound
          description: "No such hook."
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
              examples:
                unknown: {value: {"message": "hook not found", "code": "hook_not_found", "details": [], "request_id": "r0"}}
    delete:
      responses:
        "204": {description: Deleted.}
        "404": *hookNotFound
  /v1/hooks/{id}/ping.json:
    post:
      responses:
        "204": {description: Pinged.}
        "404": *hookNotFound
components:
  schemas:
` + errorSchema
	var xs []apitest.Exchange
	for _, r := range []struct{ method, path string }{{"GET", "/v1/hooks/{id}.json"}, {"DELETE", "/v1/hooks/{id}.json"}, {"POST", "/v1/hooks/{id}/ping.json"}} {
		xs = append(xs, apitest.Exchange{Method: r.method, Path: r.path, Status: 404,
			Response: `{"message":"hook not found","code":"hook_not_found","details":[],"request_id":"r-` + r.method + `"}`})
	}
	out, _, err := fill([]byte(doc), xs)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "hook_not_found: {value:"); n != 1 {
		t.Errorf("the shared 404 got %d hook_not_found examples, want 1:\n%s", n, out)
	}
	if _, err := openapi3.NewLoader().LoadFromData(out); err != nil {
		t.Errorf("the filled file does not load: %v\n%s", err, out)
	}
}
