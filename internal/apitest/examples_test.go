package apitest

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/farebox/farebox/internal/testtool"
)

// TestExampleProblemsFindsEachGap feeds the checker a document with one
// gap of each kind and wants each named with its operation and status.
func TestExampleProblemsFindsEachGap(t *testing.T) {
	const doc = `
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /v1/a.json:
    post: &a
      requestBody:
        content:
          application/json:
            schema: {type: object, required: [name], properties: {name: {type: string}}}
      x-error-codes: {"404": [thing_not_found], "410": [gone]}
      responses:
        "201":
          description: ok
          content:
            application/json:
              schema: {type: object, required: [id], properties: {id: {type: string}}}
              example: {"id": 7}
        "404":
          description: nf
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
              examples:
                other: {value: {"message": "order not found", "code": "order_not_found"}}
        "422":
          description: bad
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
  /v2/a.json:
    post: *a
  /v1/b.json:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: string}
              example: fine
components:
  schemas:
    Error: {type: object, required: [message, code], properties: {message: {type: string}, code: {type: string}}}
`
	d, err := openapi3.NewLoader().LoadFromData([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(ExampleProblems(d), "\n")
	testtool.Contains(t, got,
		`POST /v1/a.json (the same operation at POST /v2/a.json): request body application/json has no example`,
		`POST /v1/a.json (the same operation at POST /v2/a.json): response 201 application/json example `+"`example`"+` does not match its schema`,
		`POST /v1/a.json (the same operation at POST /v2/a.json): response 404 example "other" has code "order_not_found", which is not in x-error-codes."404" [thing_not_found]`,
		`POST /v1/a.json (the same operation at POST /v2/a.json): response 422 lists no error codes`,
		`POST /v1/a.json (the same operation at POST /v2/a.json): response 422 application/json has no example`,
		`POST /v1/a.json (the same operation at POST /v2/a.json): x-error-codes lists status 410, which is not a documented response`,
		`GET /v1/b.json: no x-error-codes`,
	)
	if n := strings.Count(got, "\n") + 1; n != 7 {
		t.Errorf("%d problems, want 7:\n%s", n, got)
	}
}

// TestCheckErrorCodeRefusesUnlistedCodes: an error answer whose status the
// operation lists must carry a listed code; other statuses are not checked.
func TestCheckErrorCodeRefusesUnlistedCodes(t *testing.T) {
	op := &openapi3.Operation{Extensions: map[string]any{ErrorCodesKey: map[string]any{"404": []any{"order_not_found"}}}}
	body := func(code string) []byte {
		return []byte(`{"message":"m","code":"` + code + `","details":[],"request_id":"r"}`)
	}
	if err := checkErrorCode(op, "GET /x", &Resp{Status: 404, Body: body("order_not_found")}); err != nil {
		t.Errorf("listed code refused: %v", err)
	}
	err := checkErrorCode(op, "GET /x", &Resp{Status: 404, Body: body("coupon_not_found")})
	if err == nil || !strings.Contains(err.Error(), `GET /x answered 404 "coupon_not_found"`) {
		t.Errorf("unlisted code: %v", err)
	}
	if err := checkErrorCode(op, "GET /x", &Resp{Status: 429, Body: body("rate_limited")}); err != nil {
		t.Errorf("a status under default was checked: %v", err)
	}
	if err := checkErrorCode(&openapi3.Operation{Extensions: map[string]any{ErrorCodesKey: "404"}}, "GET /x", &Resp{Status: 404, Body: body("x")}); err == nil {
		t.Error("a malformed x-error-codes passed")
	}
}
