package apitest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestValidateResponseChecksJSONBodies holds the cached JSON body check to
// what openapi3filter checked: an inline schema, a schema behind a $ref,
// a response behind a $ref (default), formats, and the content type.
func TestValidateResponseChecksJSONBodies(t *testing.T) {
	jsonHeader := http.Header{"Content-Type": []string{"application/json"}}
	clock := `{"id":"x-clock-1","object":"test_clock","name":null,"status":"ready","environment":"test","created":"2026-11-29T07:00:00Z","frozen_time":`
	cases := []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		wantErr            string // "" passes
	}{
		{"inline schema", "GET", "/v1/account.json", 200, jsonHeader,
			`{"account_id":"a","name":"مرحبا 🚆","environment":"live","key_id":"k"}`, ""},
		{"inline schema, a required field missing", "GET", "/v1/account.json", 200, jsonHeader,
			`{"account_id":"a","name":"n","environment":"live"}`, "key_id"},
		{"inline schema, a value outside its enum", "GET", "/v1/account.json", 200, jsonHeader,
			`{"account_id":"a","name":"n","environment":"prod","key_id":"k"}`, "environment"},
		{"default response behind a $ref", "GET", "/v1/account.json", 404, jsonHeader,
			`{"message":"m","code":"x","details":[],"request_id":"r"}`, ""},
		{"default response behind a $ref, a field missing", "GET", "/v1/account.json", 404, jsonHeader,
			`{"message":"m","details":[],"request_id":"r"}`, "code"},
		{"schema behind a $ref, formats hold", "GET", "/v1/test_clocks/x-clock-1.json", 200, jsonHeader,
			clock + `"2026-12-01T00:00:00Z"}`, ""},
		{"schema behind a $ref, a date-time that is none", "GET", "/v1/test_clocks/x-clock-1.json", 200, jsonHeader,
			clock + `"1 December"}`, "frozen_time"},
		{"a body that is not JSON", "GET", "/v1/account.json", 200, jsonHeader, `{"account_id":`, "not JSON"},
		{"an undescribed content type", "GET", "/v1/account.json", 200,
			http.Header{"Content-Type": []string{"application/problem+json"}}, `{}`, "Content-Type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, "http://farebox.invalid"+c.path, nil)
			err := ValidateResponse(req, &Resp{Status: c.status, Header: c.header, Body: []byte(c.body)})
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.wantErr != "" && err == nil:
				t.Fatal("passed")
			case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
				t.Fatalf("error does not name %q: %v", c.wantErr, err)
			}
		})
	}
}
