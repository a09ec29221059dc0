package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/testtool"
)

// operationIDRe: camelCase, a verb first (getOrderV9, listEvents,
// getInvoicePDF).
var operationIDRe = regexp.MustCompile(`^[a-z]+[A-Z][A-Za-z0-9]*$|^[a-z]+$`)

// versionSuffixRe finds the API version an operationId names (placeOrderV9).
var versionSuffixRe = regexp.MustCompile(`V([0-9]+)$`)

// TestOpenAPIOperationIDs: every operation of api/openapi.yaml has an
// operationId (client generators name their functions after it and invent
// one otherwise), unique and camelCase; one that ends in a version (V9)
// is on that version's path (an operation shared by several versions, a
// YAML merge of one anchored operation, names the version). testdata/operation_ids.golden keeps them stable: a renamed id
// breaks every generated client, so a change shows in review; regenerate
// with `go test ./internal/httpapi -run TestOpenAPIOperationIDs -update`.
func TestOpenAPIOperationIDs(t *testing.T) {
	t.Parallel()
	doc, _, err := apitest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	seen := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			id := op.OperationID
			switch {
			case id == "":
				t.Errorf("%s has no operationId", where)
				continue
			case !operationIDRe.MatchString(id):
				t.Errorf("%s: operationId %q is not camelCase", where, id)
			case seen[id] != "":
				t.Errorf("operationId %q is used by %s and %s", id, seen[id], where)
			}
			seen[id] = where
			if m := versionSuffixRe.FindStringSubmatch(id); m != nil && !strings.HasPrefix(path, "/v"+m[1]+"/") {
				t.Errorf("%s: operationId %q names version %s", where, id, m[1])
			}
			lines = append(lines, fmt.Sprintf("%s %s %s", id, method, path))
		}
	}
	if len(lines) < 150 {
		t.Fatalf("only %d operations found", len(lines))
	}
	sort.Strings(lines)
	got := []byte("# operationId METHOD path\n" + strings.Join(lines, "\n") + "\n")
	// A renamed operationId breaks generated clients.
	testtool.Golden(t, filepath.Join("testdata", "operation_ids.golden"), got, *updateGolden,
		"go test ./internal/httpapi -run TestOpenAPIOperationIDs -update")
}

// openapiTool returns the path of an npm tool of testdata/openapi
// (package.json there; scripts/test.sh runs npm ci) and the directory.
func openapiTool(t *testing.T, name string) (bin, dir string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is required (apt-get install nodejs): ", err)
	}
	dir, _ = filepath.Abs(filepath.Join("testdata", "openapi"))
	bin = filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is missing: run `npm ci` in internal/httpapi/testdata/openapi: %v", name, err)
	}
	return bin, dir
}

type spectralResult struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Path     []string `json:"path"`
	Severity int      `json:"severity"` // 0 error, 1 warning, 2 info, 3 hint
	Range    struct {
		Start struct{ Line int } `json:"start"`
	} `json:"range"`
}

// spectral lints file with the spectral:oas ruleset (testdata/openapi/
// .spectral.yaml) and resolver.js, and returns its findings.
func spectral(t *testing.T, file string) []spectralResult {
	t.Helper()
	bin, dir := openapiTool(t, "spectral")
	cmd := exec.Command(bin, "lint", "--ruleset", filepath.Join(dir, ".spectral.yaml"),
		"--resolver", filepath.Join(dir, "resolver.js"), "--format", "json", "--quiet", file)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output() // exit status 1 when it finds errors
	var res []spectralResult
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		t.Fatalf("spectral %s: %v %v\n%s\n%s", file, err, jerr, out, stderr.Bytes())
	}
	return res
}

// TestOpenAPISpectral: Stoplight Spectral's spectral:oas ruleset finds no
// error in api/openapi.yaml (warnings are listed in the log). A "$ref" in
// a literal example value is data (testdata/openapi/resolver.js); the
// mutant document proves both that such a literal passes and that an array
// without items and a broken reference in a schema are still errors.
func TestOpenAPISpectral(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Validator)
	file, _ := filepath.Abs(filepath.Join("..", "..", "api", "openapi.yaml"))
	res := spectral(t, file)
	warnings := map[string]int{}
	for _, r := range res {
		if r.Severity == 0 {
			t.Errorf("api/openapi.yaml:%d: %s: %s (at %s)", r.Range.Start.Line+1, r.Code, r.Message, strings.Join(r.Path, "."))
		} else {
			warnings[r.Code]++
		}
	}
	t.Logf("spectral:oas warnings by rule: %v", warnings)

	mutant := filepath.Join(t.TempDir(), "mutant.yaml")
	if err := os.WriteFile(mutant, []byte(`openapi: 3.1.0
info: {title: mutant, version: "1", description: d, contact: {name: c}}
servers: [{url: "https://example.org"}]
tags: [{name: t, description: d}]
paths:
  /a:
    get:
      operationId: getA
      description: d
      tags: [t]
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {list: {type: array}, other: {$ref: "#/components/schemas/Missing"}, form: {type: object}}}
              example: {"list": [], "form": {"oneOf": [{"$ref": "#/definitions/photo_id_lite"}], "definitions": {"photo_id_lite": {"type": "object"}}}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	for _, r := range spectral(t, mutant) {
		if r.Severity == 0 {
			codes[r.Code] = true
			if strings.Contains(r.Message, "definitions") {
				t.Errorf("the $ref of an example literal was resolved: %+v", r)
			}
		}
	}
	if !codes["array-items"] || !codes["invalid-ref"] {
		t.Errorf("the mutant's array without items and broken schema reference were not reported as errors: %v", codes)
	}
}

// TestOpenAPIClientGenerator runs a real client generator on
// api/openapi.yaml (openapi-typescript) and compiles its output together
// with a small typed client (testdata/openapi/client.ts) with tsc --strict;
// every operationId is an entry of the generated `operations`.
func TestOpenAPIClientGenerator(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Validator)
	gen, dir := openapiTool(t, "openapi-typescript")
	tsc, _ := openapiTool(t, "tsc")
	file, _ := filepath.Abs(filepath.Join("..", "..", "api", "openapi.yaml"))
	out := t.TempDir()
	cmd := exec.Command(gen, file, "--output", filepath.Join(out, "api.d.ts"))
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, b)
	}
	client, err := os.ReadFile(filepath.Join(dir, "client.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "client.ts"), client, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(tsc, "--noEmit", "--strict", "--target", "es2022", "--lib", "es2022,dom",
		"--module", "es2022", "--moduleResolution", "bundler", "client.ts", "api.d.ts")
	cmd.Dir = out
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc on the generated client: %v\n%s", err, b)
	}
	generated, err := os.ReadFile(filepath.Join(out, "api.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	_, ops, ok := bytes.Cut(generated, []byte("export interface operations {"))
	if !ok {
		t.Fatal("the generated types have no operations interface")
	}
	doc, _, err := apitest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !bytes.Contains(ops, []byte("\n    "+op.OperationID+": {")) {
				t.Errorf("%s %s: operation %q is not in the generated client", method, path, op.OperationID)
			}
			n++
		}
	}
	if n < 150 {
		t.Fatalf("only %d operations", n)
	}
}
