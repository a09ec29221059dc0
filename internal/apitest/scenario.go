package apitest

import (
	"encoding/json"
	"testing"
)

// Scenario is one row of a table-driven API test: a request, the status it
// must answer, and checks on the body decoded into T, the type a partner
// would decode it into (a test's own struct with the JSON names of the
// interface, never the server's type: a renamed field must fail the test).
type Scenario[T any] struct {
	Name   string
	Req    Req
	Status int
	// Check inspects the decoded body and the raw response; nil checks the
	// status (and the OpenAPI validation of Do) only.
	Check func(t *testing.T, got T, r *Resp)
}

// Error is the error body of every endpoint:
// {"message","code","details":[{"field","message"}],"request_id"}.
type Error struct {
	Message   string        `json:"message"`
	Code      string        `json:"code"`
	Details   []ErrorDetail `json:"details"`
	RequestID string        `json:"request_id"`
}

// ErrorDetail names one offending field as a JSON pointer.
type ErrorDetail struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// RunScenarios sends the rows in order, each as a subtest named by its
// Name, with Do's OpenAPI validation. Every row runs, so one table reports
// every failing case; rows may build on the ones before them (an id one
// row's check stores in a variable the next row's request reads, when the
// table is built after that variable is set, or through a closure).
func RunScenarios[T any](t *testing.T, e *Env, rows []Scenario[T]) {
	t.Helper()
	for _, sc := range rows {
		t.Run(sc.Name, func(t *testing.T) {
			sub := *e
			sub.T = t
			r := sub.Do(sc.Req)
			if r.Status != sc.Status {
				t.Fatalf("%s %s: status %d, want %d; body: %s", sc.Req.Method, sc.Req.Path, r.Status, sc.Status, r.Body)
			}
			if sc.Check == nil {
				return
			}
			var got T
			if err := json.Unmarshal(r.Body, &got); err != nil {
				t.Fatalf("%s %s: decode into %T: %v; body: %s", sc.Req.Method, sc.Req.Path, got, err, r.Body)
			}
			sc.Check(t, got, r)
		})
	}
}
