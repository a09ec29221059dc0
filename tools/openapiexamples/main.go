// Command openapiexamples fills the examples and error codes that
// api/openapi.yaml lacks (docs/openapi.md) from answers the server really
// gave in the API tests:
//
//	FAREBOX_OPENAPI_RECORD=/tmp/rec go test -count=1 ./internal/httpapi
//	go run ./tools/openapiexamples -records /tmp/rec
//
// For every operation (an operation shared by YAML anchors once) it adds
// what is missing and keeps what is there: an `example` for a JSON request
// body and for each JSON success response, the codes of `x-error-codes`
// (the codes the tests received plus those every operation of its kind
// can answer: key errors with a Bearer key, body errors with a JSON body,
// idempotency errors with Idempotency-Key, 404 not_found with an id in the
// path, transit_loading and transit_unavailable on transit operations),
// and for each listed error status the Error content with one example per
// code the tests received. It edits the text line by line, so the rest of
// the file, comments and anchors included, stays as it is; it prints what
// it could not fill. Run TestOpenAPIExamples afterwards.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/farebox/farebox/internal/apitest"
	"go.yaml.in/yaml/v3"
)

func main() {
	file := flag.String("file", "api/openapi.yaml", "the OpenAPI document to fill in place")
	records := flag.String("records", "", "the directory of a recording run ("+apitest.RecordEnv+")")
	flag.Parse()
	if *records == "" {
		fmt.Fprintln(os.Stderr, "usage: openapiexamples -records DIR [-file api/openapi.yaml]")
		os.Exit(2)
	}
	xs, err := apitest.ReadExchanges(*records)
	if err == nil && len(xs) == 0 {
		err = fmt.Errorf("%s holds no recorded exchange: run the API tests with %s=%s", *records, apitest.RecordEnv, *records)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapiexamples:", err)
		os.Exit(1)
	}
	src, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapiexamples:", err)
		os.Exit(1)
	}
	out, notes, err := fill(src, xs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapiexamples:", err)
		os.Exit(1)
	}
	for _, n := range notes {
		fmt.Println(n)
	}
	if !bytes.Equal(out, src) {
		if err := os.WriteFile(*file, out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "openapiexamples:", err)
			os.Exit(1)
		}
	}
}

// operation is one operation node with the paths that use it.
type operation struct {
	node      *yaml.Node
	where     []string
	exchanges []apitest.Exchange
	codes     map[string]map[string]bool
}

// edit replaces del lines from line (1-based) with text, or inserts text
// before line when del is 0.
type edit struct {
	line, del int
	text      []string
	order     int // among edits at one line: higher first
}

// genericCodes are the codes whose answer reads the same on every
// operation, so an example recorded on one serves all.
var genericCodes = map[string]bool{
	"api_key_missing": true, "invalid_api_key": true, "invalid_authorization_header": true,
	"api_key_in_query_not_allowed": true, "body_too_large": true, "unsupported_media_type": true,
	"malformed_json": true, "body_required": true, "invalid_idempotency_key": true,
	"idempotency_key_reused": true, "idempotency_key_in_flight": true, "idempotency_key_outcome_unknown": true,
	"transit_loading": true, "transit_unavailable": true,
}

var statusText = map[string]string{
	"400": "The request is malformed", "401": "No valid API key", "403": "Not permitted",
	"404": "Not found (another account's record answers the same)", "409": "Conflicts with the current state",
	"413": "The body is too large", "415": "The body is not JSON", "422": "Well-formed but breaks a rule",
	"503": "Not available now; retry later",
}

// fill adds to the OpenAPI document src what the recorded exchanges xs
// show: each operation's x-error-codes, and the request, success and
// error examples it lacks. It returns the edited document and notes on
// what it could not do.
func fill(src []byte, xs []apitest.Exchange) ([]byte, []string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, nil, err
	}
	if len(root.Content) == 0 {
		return nil, nil, fmt.Errorf("empty document")
	}
	_, paths := get(root.Content[0], "paths")
	if paths == nil {
		return nil, nil, fmt.Errorf("no paths")
	}
	order, byRoute := operations(paths)
	f := &filler{generic: attachExchanges(xs, byRoute), doneMedia: map[*yaml.Node]bool{}, doneResponses: map[*yaml.Node]bool{}}
	f.shareResponses(order)
	for _, op := range order {
		f.operation(op)
	}
	return apply(src, f.edits), f.notes, nil
}

// operations are the operation nodes of paths in document order (an
// operation used by alias under several paths once) and by "METHOD path".
func operations(paths *yaml.Node) ([]*operation, map[string]*operation) {
	ops := map[*yaml.Node]*operation{}
	var order []*operation
	byRoute := map[string]*operation{}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		path, item := paths.Content[i].Value, deref(paths.Content[i+1])
		for j := 0; j+1 < len(item.Content); j += 2 {
			method := strings.ToUpper(item.Content[j].Value)
			n := deref(item.Content[j+1])
			op := ops[n]
			if op == nil {
				op = &operation{node: n}
				ops[n] = op
				order = append(order, op)
			}
			op.where = append(op.where, method+" "+path)
			byRoute[method+" "+path] = op
		}
	}
	return order, byRoute
}

// attachExchanges gives each operation its recorded exchanges and returns
// the shortest usable answer of each generic error code.
func attachExchanges(xs []apitest.Exchange, byRoute map[string]*operation) map[string]apitest.Exchange {
	generic := map[string]apitest.Exchange{}
	for _, x := range xs {
		op := byRoute[x.Method+" "+x.Path]
		if op == nil {
			continue
		}
		op.exchanges = append(op.exchanges, x)
		if c := errorCode(x); genericCodes[c] && usable(x.Response) {
			if g, ok := generic[c]; !ok || len(x.Response) < len(g.Response) {
				generic[c] = x
			}
		}
	}
	return generic
}

// filler collects the edits and notes of one run of fill.
type filler struct {
	generic map[string]apitest.Exchange
	// The codes and exchanges by responses node: operations sharing one
	// (a YAML anchor) share their error examples, so they list the union.
	byResponses          map[*yaml.Node]map[string]map[string]bool
	exchangesByResponses map[*yaml.Node][]apitest.Exchange
	doneMedia            map[*yaml.Node]bool // media and error response nodes already filled
	doneResponses        map[*yaml.Node]bool
	edits                []edit
	notes                []string
}

// shareResponses sets each operation's codes and collects the codes and
// exchanges of each responses node.
func (f *filler) shareResponses(order []*operation) {
	f.byResponses = map[*yaml.Node]map[string]map[string]bool{}
	f.exchangesByResponses = map[*yaml.Node][]apitest.Exchange{}
	for _, op := range order {
		_, responses := get(op.node, "responses")
		if responses == nil {
			continue // a YAML merge (<<: *op) inherits the merged operation's
		}
		op.codes = operationCodes(op)
		u := f.byResponses[responses]
		if u == nil {
			u = map[string]map[string]bool{}
			f.byResponses[responses] = u
		}
		for st, cs := range op.codes {
			for c := range cs {
				addCode(u, st, c)
			}
		}
		f.exchangesByResponses[responses] = append(f.exchangesByResponses[responses], op.exchanges...)
	}
}

// operation fills one operation: its x-error-codes, its request example
// and, once per responses node, the success and error examples.
func (f *filler) operation(op *operation) {
	responsesKey, responses := get(op.node, "responses")
	if responses == nil {
		return
	}
	codes := f.byResponses[responses]
	f.errorCodes(op, responsesKey, codes)
	f.requestExample(op)
	if f.doneResponses[responses] {
		return
	}
	f.doneResponses[responses] = true
	recorded := f.exchangesByResponses[responses]
	f.successExamples(op, responses, recorded)
	f.errorExamples(op, responses, codes, recorded)
}

// errorCodes writes the operation's x-error-codes line before responses,
// or replaces one that differs (a note when it is not one flow line).
func (f *filler) errorCodes(op *operation, responsesKey *yaml.Node, codes map[string]map[string]bool) {
	line := formatCodes(codes)
	if k, v := get(op.node, apitest.ErrorCodesKey); k == nil {
		f.edits = append(f.edits, edit{line: responsesKey.Line, text: []string{indent(responsesKey) + apitest.ErrorCodesKey + ": " + line}})
	} else if formatCodes(parseCodes(v)) != line {
		if v.Style&yaml.FlowStyle == 0 || lastLine(v) != k.Line {
			f.notes = append(f.notes, fmt.Sprintf("%s: write %s on one line in flow style to let the tool merge: %s", op.where[0], apitest.ErrorCodesKey, line))
		} else {
			f.edits = append(f.edits, edit{line: k.Line, del: 1, text: []string{indent(k) + apitest.ErrorCodesKey + ": " + line}})
		}
	}
}

// requestExample adds a recorded accepted request body as the JSON
// request body's example when it has none.
func (f *filler) requestExample(op *operation) {
	_, rb := get(op.node, "requestBody")
	if rb == nil {
		return
	}
	_, content := get(rb, "content")
	mk, media := get(content, "application/json")
	if media == nil || f.doneMedia[media] || hasExample(media) {
		return
	}
	f.doneMedia[media] = true
	if best := pickRequest(op.exchanges); best == "" {
		f.notes = append(f.notes, fmt.Sprintf("%s: no recorded accepted request body for the example", op.where[0]))
	} else if e, ok := insertExample(mk, media, "example: "+compact(best)); ok {
		f.edits = append(f.edits, e)
	} else {
		f.notes = append(f.notes, fmt.Sprintf("%s: write requestBody.content.application/json in block style to let the tool add the example", op.where[0]))
	}
}

// successExamples adds a recorded answer as the example of each 2xx JSON
// response without one.
func (f *filler) successExamples(op *operation, responses *yaml.Node, recorded []apitest.Exchange) {
	for i := 0; i+1 < len(responses.Content); i += 2 {
		status := responses.Content[i].Value
		if !strings.HasPrefix(status, "2") {
			continue
		}
		_, content := get(deref(responses.Content[i+1]), "content")
		mk, media := get(content, "application/json")
		if media == nil || f.doneMedia[media] || hasExample(media) {
			continue
		}
		f.doneMedia[media] = true
		if best := pickResponse(recorded, status); best == "" {
			f.notes = append(f.notes, fmt.Sprintf("%s: no recorded %s answer for the example", op.where[0], status))
		} else if e, ok := insertExample(mk, media, "example: "+compact(best)); ok {
			f.edits = append(f.edits, e)
		} else {
			f.notes = append(f.notes, fmt.Sprintf("%s: write responses.%q.content.application/json in block style to let the tool add the example", op.where[0], status))
		}
	}
}

// errorExamples fills each error status of codes, in status order.
func (f *filler) errorExamples(op *operation, responses *yaml.Node, codes map[string]map[string]bool, recorded []apitest.Exchange) {
	for _, status := range slices.Sorted(maps.Keys(codes)) {
		// A response written once under an anchor and used by alias
		// in other operations is one node: fill it once.
		if _, v := get(responses, status); v != nil {
			if f.doneMedia[v] {
				continue
			}
			f.doneMedia[v] = true
		}
		e, note := errorResponse(op, responses, status, codes[status], recorded, f.generic)
		f.edits = append(f.edits, e...)
		if note != "" {
			f.notes = append(f.notes, note)
		}
	}
}

// errorResponse adds the Error content and the missing examples of one
// documented (or newly documented) error status.
func errorResponse(op *operation, responses *yaml.Node, status string, codes map[string]bool, recorded []apitest.Exchange, generic map[string]apitest.Exchange) ([]edit, string) {
	k, v := get(responses, status)
	var existing map[string]bool
	var media, mediaKey, examples, examplesKey *yaml.Node
	if v != nil {
		if _, ref := get(v, "$ref"); ref == nil {
			_, content := get(v, "content")
			mediaKey, media = get(content, "application/json")
			if media != nil {
				examplesKey, examples = get(media, "examples")
				existing = map[string]bool{}
				if examples != nil {
					for i := 0; i+1 < len(examples.Content); i += 2 {
						existing[examples.Content[i].Value] = true
					}
				}
				if _, ex := get(media, "example"); ex != nil {
					return nil, "" // one example, kept as written
				}
			}
		}
	}
	var lines []string
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		if existing[c] {
			continue
		}
		best := ""
		for _, x := range recorded {
			if strconv.Itoa(x.Status) == status && errorCode(x) == c && usable(x.Response) && (best == "" || len(x.Response) < len(best)) {
				best = x.Response
			}
		}
		if g, ok := generic[c]; best == "" && ok && strconv.Itoa(g.Status) == status {
			best = g.Response
		}
		if best != "" {
			lines = append(lines, c+": {value: "+compact(best)+"}")
		}
	}
	col := responses.Content[0].Column - 1
	pad := func(n int) string { return strings.Repeat(" ", col+n) }
	block := func() []string {
		var bt []string
		for _, c := range slices.Sorted(maps.Keys(codes)) {
			bt = append(bt, "`"+c+"`")
		}
		text := statusText[status]
		if text == "" {
			text = "Error"
		}
		out := []string{pad(0) + strconv.Quote(status) + ":", pad(2) + "description: " + strconv.Quote(text+": "+strings.Join(bt, ", ")+"."),
			pad(2) + "content:", pad(4) + "application/json:", pad(6) + `schema: {$ref: "#/components/schemas/Error"}`}
		if len(lines) > 0 {
			out = append(out, pad(6)+"examples:")
			for _, l := range lines {
				out = append(out, pad(8)+l)
			}
		}
		return out
	}
	switch {
	case v == nil:
		rk := responses.Content[0]
		return []edit{{line: rk.Line, text: block(), order: 2}}, missing(op, status, lines, existing)
	case media == nil:
		if _, ref := get(v, "$ref"); ref != nil {
			return []edit{{line: k.Line, del: lastLine(v) - k.Line + 1, text: block(), order: 3}}, missing(op, status, lines, existing)
		}
		return nil, fmt.Sprintf("%s: response %s has no application/json content; describe it with the Error schema", op.where[0], status)
	case len(lines) == 0:
		return nil, missing(op, status, lines, existing)
	case examples != nil:
		if examples.Style&yaml.FlowStyle != 0 || len(examples.Content) == 0 {
			return nil, fmt.Sprintf("%s: write responses.%q examples in block style to let the tool add to them", op.where[0], status)
		}
		ind := strings.Repeat(" ", examples.Content[0].Column-1)
		var text []string
		for _, l := range lines {
			text = append(text, ind+l)
		}
		return []edit{{line: examplesKey.Line + 1, text: text, order: 1}}, ""
	default:
		if media.Style&yaml.FlowStyle != 0 || len(media.Content) == 0 {
			return nil, fmt.Sprintf("%s: write responses.%q.content.application/json in block style to let the tool add examples", op.where[0], status)
		}
		ind := strings.Repeat(" ", media.Content[0].Column-1)
		text := []string{ind + "examples:"}
		for _, l := range lines {
			text = append(text, ind+"  "+l)
		}
		return []edit{{line: mediaKey.Line + 1, text: text, order: 1}}, ""
	}
}

func missing(op *operation, status string, lines []string, existing map[string]bool) string {
	if len(lines) == 0 && len(existing) == 0 {
		return fmt.Sprintf("%s: no recorded %s answer for an error example", op.where[0], status)
	}
	return ""
}

// operationCodes are the codes the tests received (a 4xx other than 429,
// a documented 5xx) with those every operation of its kind can answer.
func operationCodes(op *operation) map[string]map[string]bool {
	codes := map[string]map[string]bool{}
	_, responses := get(op.node, "responses")
	documented := func(st string) bool { k, _ := get(responses, st); return k != nil }
	if _, v := get(op.node, apitest.ErrorCodesKey); v != nil {
		for st, cs := range parseCodes(v) {
			for c := range cs {
				addCode(codes, st, c)
			}
		}
	}
	for _, x := range op.exchanges {
		st := strconv.Itoa(x.Status)
		if x.Status < 400 || x.Status == 429 || (x.Status >= 500 && !documented(st)) {
			continue
		}
		if c := errorCode(x); c != "" {
			addCode(codes, st, c)
		}
	}
	bearer, queryKey := false, false
	if _, sec := get(op.node, "security"); sec != nil {
		for _, s := range sec.Content {
			if k, _ := get(s, "bearer"); k != nil {
				bearer = true
			}
			if k, _ := get(s, "apiKeyQuery"); k != nil {
				queryKey = true
			}
		}
	}
	if bearer {
		for _, c := range []string{"api_key_missing", "invalid_api_key", "invalid_authorization_header"} {
			addCode(codes, "401", c)
		}
		if !queryKey {
			addCode(codes, "401", "api_key_in_query_not_allowed")
		}
	}
	idempotent, idInPath := false, false
	if _, params := get(op.node, "parameters"); params != nil {
		for _, p := range params.Content {
			p = deref(p)
			if _, ref := get(p, "$ref"); ref != nil && strings.HasSuffix(ref.Value, "/IdempotencyKey") {
				idempotent = true
			}
			_, in := get(p, "in")
			_, name := get(p, "name")
			if in != nil && name != nil && in.Value == "path" && strings.HasSuffix(name.Value, "_id") {
				idInPath = true
			}
		}
	}
	if idInPath {
		addCode(codes, "404", "not_found")
	}
	if _, rb := get(op.node, "requestBody"); rb != nil {
		for _, c := range []string{"malformed_json", "wrong_type", "invalid_string"} {
			addCode(codes, "400", c)
		}
		if _, req := get(rb, "required"); req != nil && req.Value == "true" {
			addCode(codes, "400", "body_required")
		}
		if bearer {
			addCode(codes, "400", "unknown_field")
		}
		addCode(codes, "413", "body_too_large")
		addCode(codes, "415", "unsupported_media_type")
	}
	if idempotent {
		addCode(codes, "400", "invalid_idempotency_key")
		for _, c := range []string{"idempotency_key_reused", "idempotency_key_in_flight", "idempotency_key_outcome_unknown"} {
			addCode(codes, "409", c)
		}
	}
	if _, tags := get(op.node, "tags"); tags != nil && len(tags.Content) > 0 && tags.Content[0].Value == "transit" && documented("503") {
		addCode(codes, "503", "transit_loading")
		addCode(codes, "503", "transit_unavailable")
	}
	return codes
}

func addCode(m map[string]map[string]bool, status, code string) {
	if m[status] == nil {
		m[status] = map[string]bool{}
	}
	m[status][code] = true
}

func parseCodes(v *yaml.Node) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	var m map[string][]string
	if err := v.Decode(&m); err != nil {
		return out
	}
	for st, cs := range m {
		for _, c := range cs {
			addCode(out, st, c)
		}
	}
	return out
}

func formatCodes(codes map[string]map[string]bool) string {
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(codes)) {
		parts = append(parts, strconv.Quote(st)+": ["+strings.Join(slices.Sorted(maps.Keys(codes[st])), ", ")+"]")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func errorCode(x apitest.Exchange) string {
	var b struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal([]byte(x.Response), &b)
	return b.Code
}

// usable reports whether a recorded body reads as an example: JSON, no
// control characters, no text outside the Basic Multilingual Plane's
// scripts a German or English reader meets, no runs a limits test sends,
// at most a few KiB.
func usable(s string) bool {
	if len(s) > 9000 || !json.Valid([]byte(s)) || !utf8.ValidString(s) || strings.Contains(s, `\u0000`) || strings.Contains(s, `\ud8`) || strings.Contains(s, `\udc`) {
		return false
	}
	var prev rune
	run := 0
	for _, r := range s {
		if (r < 0x20 && r != '\n') || r > 0x2FFF || r == utf8.RuneError {
			return false
		}
		if r == prev && r != '0' && r != ' ' {
			if run++; run >= 7 {
				return false
			}
		} else {
			run = 0
		}
		prev = r
	}
	return !strings.Contains(s, "9223372036854775807") && !strings.Contains(s, "92.233.720.368")
}

// pickRequest prefers the accepted body naming the most fields, then the longest.
func pickRequest(xs []apitest.Exchange) string {
	best := ""
	for _, x := range xs {
		if x.Status < 200 || x.Status > 299 || x.Request == "" || len(x.Request) > 800 || !usable(x.Request) {
			continue
		}
		kx, kb := strings.Count(x.Request, `":`), strings.Count(best, `":`)
		if best == "" || kx > kb || (kx == kb && len(x.Request) > len(best)) {
			best = x.Request
		}
	}
	return best
}

// pickResponse prefers a non-empty answer, then the longest.
func pickResponse(xs []apitest.Exchange, status string) string {
	empty := func(s string) bool {
		s = strings.TrimSpace(s)
		return s == "[]" || strings.Contains(s, `"data":[]`)
	}
	best := ""
	for _, x := range xs {
		if strconv.Itoa(x.Status) != status || !usable(x.Response) {
			continue
		}
		if best == "" || (empty(best) && !empty(x.Response)) || (empty(best) == empty(x.Response) && len(x.Response) > len(best)) {
			best = x.Response
		}
	}
	return best
}

var localURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)

// compact writes JSON on one line in the file's style ("k": v, keys in the
// server's order), with the test server's address as the documented host.
func compact(raw string) string {
	raw = localURL.ReplaceAllString(raw, "https://api.farebox.example")
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	var value func() error
	value = func() error {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := t.(json.Delim)
		if !ok {
			enc, _ := json.Marshal(t)
			enc = bytes.ReplaceAll(enc, []byte(`\u003c`), []byte("<"))
			enc = bytes.ReplaceAll(enc, []byte(`\u003e`), []byte(">"))
			enc = bytes.ReplaceAll(enc, []byte(`\u0026`), []byte("&"))
			b.Write(enc)
			return nil
		}
		isObject := d == '{'
		b.WriteRune(rune(d))
		for first := true; dec.More(); first = false {
			if !first {
				b.WriteString(", ")
			}
			if isObject {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				enc, _ := json.Marshal(k)
				b.Write(enc)
				b.WriteString(": ")
			}
			if err := value(); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		if isObject {
			b.WriteString("}")
		} else {
			b.WriteString("]")
		}
		return nil
	}
	if err := value(); err != nil {
		return raw
	}
	return b.String()
}

func insertExample(key, media *yaml.Node, line string) (edit, bool) {
	if media.Style&yaml.FlowStyle != 0 || len(media.Content) == 0 {
		return edit{}, false
	}
	return edit{line: key.Line + 1, text: []string{indent(media.Content[0]) + line}, order: 1}, true
}

func hasExample(media *yaml.Node) bool {
	k1, _ := get(media, "example")
	k2, _ := get(media, "examples")
	return k1 != nil || k2 != nil
}

func apply(src []byte, edits []edit) []byte {
	lines := strings.Split(string(src), "\n")
	// Bottom up, so line numbers stay true; of the inserts before one line
	// the last made goes in first, so they end up in the order made.
	idx := make([]int, len(edits))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		ea, eb := edits[idx[a]], edits[idx[b]]
		if ea.line != eb.line {
			return ea.line > eb.line
		}
		if ea.order != eb.order {
			return ea.order > eb.order
		}
		return idx[a] > idx[b]
	})
	for _, i := range idx {
		e := edits[i]
		i := e.line - 1
		rest := slices.Clone(lines[i+e.del:])
		lines = append(append(lines[:i], e.text...), rest...)
	}
	return []byte(strings.Join(lines, "\n"))
}

func get(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], deref(m.Content[i+1])
		}
	}
	return nil, nil
}

func deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

func lastLine(n *yaml.Node) int {
	last := n.Line
	for _, c := range n.Content {
		last = max(last, lastLine(c))
	}
	return last
}

func indent(n *yaml.Node) string { return strings.Repeat(" ", n.Column-1) }
