package shareddata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The repository's testdata/ is found from a package directory; an
// explicitly empty FAREBOX_SHARED_DATA means "no shared data" (CI), so File
// never falls back to ../shared then; a set one is used as it is.
func TestPathAndShared(t *testing.T) {
	p := Path("README.md")
	if _, err := os.Stat(p); err != nil || filepath.Base(filepath.Dir(p)) != "testdata" {
		t.Fatalf("testdata/README.md not found: %s %v", p, err)
	}
	if _, err := os.Stat(Path("einvoice/schemas/ubl-2.1/maindoc/UBL-Invoice-2.1.xsd")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAREBOX_SHARED_DATA", "")
	if s, ok := Shared("gtfs/x.zip"); ok || !strings.Contains(s, "FAREBOX_SHARED_DATA-is-empty") {
		t.Fatalf("empty FAREBOX_SHARED_DATA: %s %v", s, ok)
	}
	if got := File("gtfs/not-in-testdata.zip"); got != Path("gtfs/not-in-testdata.zip") {
		t.Fatalf("File fell back to %s", got)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "gtfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gtfs", "only-shared.zip"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAREBOX_SHARED_DATA", dir)
	if s, ok := Shared("gtfs/x.zip"); !ok || s != filepath.Join(dir, "gtfs", "x.zip") {
		t.Fatalf("set FAREBOX_SHARED_DATA: %s %v", s, ok)
	}
	if got := File("gtfs/only-shared.zip"); got != filepath.Join(dir, "gtfs", "only-shared.zip") {
		t.Fatalf("File did not fall back to the shared data: %s", got)
	}
	if got := File("gtfs/sample-gtfs-feed-0.13.0.zip"); got != Path("gtfs/sample-gtfs-feed-0.13.0.zip") {
		t.Fatalf("File preferred the shared data over the repository: %s", got)
	}
}
