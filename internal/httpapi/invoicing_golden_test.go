package httpapi_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata (those of the tests -run selects)")

// ids are the random parts of a downloaded document: record ids.
var ids = regexp.MustCompile(`farebox-([a-z]+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// golden compares a downloaded XML file with testdata/invoicing/<test>/name after
// replacing record ids by their kind; -update rewrites the file. Both
// engines must produce the same bytes.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	norm := ids.ReplaceAll(got, []byte("farebox-$1-ID"))
	test, _, _ := strings.Cut(t.Name(), "/")
	path := filepath.Join("testdata", "invoicing", test, name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, norm, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file missing (run with -update): %v", err)
	}
	if !bytes.Equal(norm, want) {
		t.Errorf("%s differs from its golden file (review, then go test ./internal/httpapi -run TestInvoicingFlows -update):\n%s", name, firstDiff(norm, want))
	}
}

func firstDiff(a, b []byte) string {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(al) && i < len(bl); i++ {
		if !bytes.Equal(al[i], bl[i]) {
			return "line " + itoa(i+1) + ":\n got: " + string(al[i]) + "\nwant: " + string(bl[i])
		}
	}
	return "lengths differ"
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
