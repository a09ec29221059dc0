package httpapi_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/testtool"
)

// TestRouteGolden: testdata/routes.golden is the route table as the server
// builds it, one line per route after the version loop: method, path, auth
// group, whom a request is billed to, and the handler's name as the runtime
// knows it. A change of the surface shows in review as a diff of this file;
// regenerate it with `go test ./internal/httpapi -run TestRouteGolden -update`.
func TestRouteGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 8, 1, ' ', 0)
	fmt.Fprintln(w, "# METHOD\tPATH\tAUTH\tBILLS\tHANDLER")
	routes := httpapi.New(httpapi.Deps{}).Routes()
	for _, rt := range routes {
		if rt.Handler == "" || strings.ContainsAny(rt.Handler, ".()") {
			t.Errorf("%s %s: handler name %q is not a method name", rt.Method, rt.Path, rt.Handler)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", rt.Method, rt.Path, rt.Auth, rt.Bills, rt.Handler)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "# %d routes\n", len(routes))
	testtool.Golden(t, filepath.Join("testdata", "routes.golden"), b.Bytes(), *updateGolden,
		"go test ./internal/httpapi -run TestRouteGolden -update")
}
