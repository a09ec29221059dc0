package apitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// ErrorCodesKey is the operation extension of api/openapi.yaml that lists
// the error codes an operation answers, by documented status:
//
//	x-error-codes: {"401": [api_key_missing, invalid_api_key], "404": [order_not_found]}
//
// ValidateResponse holds every error answer of an API test to it, and
// ExampleProblems holds every error example to it (docs/openapi.md).
const ErrorCodesKey = "x-error-codes"

// ErrorCodes returns op's x-error-codes by status; ok is false when the
// operation has none or the extension is not a map of string lists.
func ErrorCodes(op *openapi3.Operation) (codes map[string][]string, ok bool, err error) {
	raw, ok := op.Extensions[ErrorCodesKey]
	if !ok {
		return nil, false, nil
	}
	m, isMap := raw.(map[string]any)
	if !isMap {
		return nil, true, fmt.Errorf("%s is a %T, want a map of status to a list of codes", ErrorCodesKey, raw)
	}
	codes = make(map[string][]string, len(m))
	for status, v := range m {
		list, isList := v.([]any)
		if !isList {
			return nil, true, fmt.Errorf("%s[%q] is a %T, want a list of codes", ErrorCodesKey, status, v)
		}
		for _, c := range list {
			s, isString := c.(string)
			if !isString {
				return nil, true, fmt.Errorf("%s[%q] holds %v (%T), want code strings", ErrorCodesKey, status, c, c)
			}
			codes[status] = append(codes[status], s)
		}
	}
	return codes, true, nil
}

// jsonMedia reports whether a media type carries JSON, the bodies that
// must have examples (PDFs, passes, XML, HTML and metrics text need none).
func jsonMedia(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// ExampleProblems walks every operation of doc and returns what lacks or
// breaks the examples convention of docs/openapi.md, one sentence each,
// naming the operation (all paths sharing it), the response status and
// media type, and what to add or fix. Operations shared by YAML anchors
// across API versions are reported once with every path that has them.
func ExampleProblems(doc *openapi3.T) []string {
	type group struct {
		wheres []string
		probs  []string
	}
	groups := map[string]*group{} // by the operation's JSON: YAML aliases make equal copies
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			key, err := json.Marshal(op)
			if err != nil {
				key = []byte(method + " " + path)
			}
			g := groups[string(key)]
			if g == nil {
				g = &group{probs: operationProblems(doc, op)}
				groups[string(key)] = g
			}
			g.wheres = append(g.wheres, method+" "+path)
		}
	}
	var out []string
	for _, g := range groups {
		sort.Strings(g.wheres)
		w := g.wheres[0]
		if len(g.wheres) > 1 {
			w += " (the same operation at " + strings.Join(g.wheres[1:], ", ") + ")"
		}
		for _, p := range g.probs {
			out = append(out, w+": "+p)
		}
	}
	sort.Strings(out)
	return out
}

func operationProblems(doc *openapi3.T, op *openapi3.Operation) []string {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	opts := []openapi3.SchemaValidationOption{openapi3.MultiErrors()}
	if doc.IsOpenAPI31OrLater() {
		opts = append(opts, openapi3.EnableJSONSchema2020())
	}
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		for _, mt := range slices.Sorted(maps.Keys(rb.Value.Content)) {
			if !jsonMedia(mt) {
				continue
			}
			media := rb.Value.Content[mt]
			exs := mediaExamples(media)
			if len(exs) == 0 {
				add("request body %s has no example: add `example:` (a body the server accepts) under requestBody.content.%s", mt, mt)
			}
			for _, ex := range exs {
				if err := visit(media, ex.value, append(opts, openapi3.VisitAsRequest())); err != nil {
					add("request body %s example %s does not match its schema: %v", mt, ex.name, err)
				}
			}
		}
	}
	codes, hasCodes, err := ErrorCodes(op)
	if err != nil {
		add("%v", err)
	}
	if !hasCodes {
		add("no %s: list the error codes of each documented error status, e.g. %s: {\"404\": [coupon_not_found]}", ErrorCodesKey, ErrorCodesKey)
	}
	responses := op.Responses.Map()
	for _, status := range slices.Sorted(maps.Keys(responses)) {
		if status == "default" {
			continue
		}
		resp := responses[status].Value
		isError := strings.HasPrefix(status, "4") || strings.HasPrefix(status, "5")
		if isError && hasCodes && len(codes[status]) == 0 {
			add("response %s lists no error codes: add %s.%q: [the codes this operation answers with %s]", status, ErrorCodesKey, status, status)
		}
		if resp == nil {
			continue
		}
		hasJSON := false
		for _, mt := range slices.Sorted(maps.Keys(resp.Content)) {
			if !jsonMedia(mt) {
				continue
			}
			hasJSON = true
			media := resp.Content[mt]
			exs := mediaExamples(media)
			if len(exs) == 0 {
				if isError {
					add("response %s %s has no example: add `examples:` with one named example per code (%s) under responses.%q.content.%s", status, mt, strings.Join(codes[status], ", "), status, mt)
				} else {
					add("response %s %s has no example: add `example:` (a real answer) under responses.%q.content.%s", status, mt, status, mt)
				}
			}
			for _, ex := range exs {
				if err := visit(media, ex.value, append(opts, openapi3.VisitAsResponse())); err != nil {
					add("response %s %s example %s does not match its schema: %v", status, mt, ex.name, err)
				}
				if !isError {
					continue
				}
				code, _ := ex.value.(map[string]any)["code"].(string)
				if hasCodes && !slices.Contains(codes[status], code) {
					add("response %s example %s has code %q, which is not in %s.%q %v", status, ex.name, code, ErrorCodesKey, status, codes[status])
				}
			}
		}
		if isError && !hasJSON {
			add("error response %s has no application/json content: describe it with the Error schema and examples", status)
		}
	}
	for _, status := range slices.Sorted(maps.Keys(codes)) {
		if responses[status] == nil {
			add("%s lists status %s, which is not a documented response", ErrorCodesKey, status)
		}
		for _, c := range codes[status] {
			if !snake(c) {
				add("%s.%q holds %q, which is not a snake_case error code", ErrorCodesKey, status, c)
			}
		}
	}
	return probs
}

type namedExample struct {
	name  string
	value any
}

func mediaExamples(m *openapi3.MediaType) []namedExample {
	var out []namedExample
	if m.Example != nil {
		out = append(out, namedExample{"`example`", m.Example})
	}
	for _, name := range slices.Sorted(maps.Keys(m.Examples)) {
		if ex := m.Examples[name]; ex != nil && ex.Value != nil && ex.Value.Value != nil {
			out = append(out, namedExample{fmt.Sprintf("%q", name), ex.Value.Value})
		} else {
			out = append(out, namedExample{fmt.Sprintf("%q", name), nil})
		}
	}
	return out
}

func visit(m *openapi3.MediaType, v any, opts []openapi3.SchemaValidationOption) error {
	if m.Schema == nil || m.Schema.Value == nil {
		return fmt.Errorf("the media type has no schema")
	}
	if v == nil {
		return fmt.Errorf("the example has no value")
	}
	if err := m.Schema.Value.VisitJSON(v, opts...); err != nil {
		return errors.New(schemaErrorText(err))
	}
	return nil
}

// schemaErrorText is a schema error on one line per failure: the JSON
// pointer of the value and the reason, without the schema dump.
func schemaErrorText(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		parts := make([]string, 0, len(me))
		for _, e := range me {
			parts = append(parts, schemaErrorText(e))
		}
		return strings.Join(parts, "; ")
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return "/" + strings.Join(se.JSONPointer(), "/") + ": " + se.Reason
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

func snake(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}
