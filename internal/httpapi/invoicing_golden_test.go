package httpapi_test

import (
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/testtool"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata (those of the tests -run selects)")

// ids are the random parts of a downloaded document: record ids.
var ids = regexp.MustCompile(`farebox-([a-z]+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// golden compares a downloaded XML file with testdata/invoicing/<test>/name after
// replacing record ids by their kind; -update rewrites the file. Both
// engines must produce the same bytes.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	test, _, _ := strings.Cut(t.Name(), "/")
	testtool.Golden(t, filepath.Join("testdata", "invoicing", test, name), ids.ReplaceAll(got, []byte("farebox-$1-ID")), *updateGolden,
		"go test ./internal/httpapi -run "+test+" -update")
}
