package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/catalog"
)

func TestCatalogImportExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"FAREBOX_DATA_DIR": dir}
	cli(t, env, "migrate", "--create") // a new installation
	exported := cli(t, env, "catalog", "export")
	f, err := catalog.Parse([]byte(exported))
	if err != nil {
		t.Fatalf("export is not a catalog file: %v", err)
	}
	if len(f.Areas) < 9 || len(f.Products) < 28 {
		t.Fatalf("export holds %d areas, %d products", len(f.Areas), len(f.Products))
	}
	goodGeometry := f.Areas[2].Geometry
	// A file with problems changes nothing and names each problem by path.
	f.Products[0].LocalTicketName = "Renamed"
	f.Products[1].Currency = "USD"
	f.Areas[2].Geometry = json.RawMessage(`{"type":"Point"}`)
	write := func(f *catalog.File) string {
		b, _ := json.Marshal(f)
		path := filepath.Join(dir, "import.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"catalog", "import", write(f)}, envFrom(env), nil, &out, &errb)
	if err == nil || !strings.Contains(errb.String(), "/products/1/currency") || !strings.Contains(errb.String(), "/areas/2/geometry") {
		t.Fatalf("bad import: err=%v stderr=%s", err, errb.String())
	}
	if after := cli(t, env, "catalog", "export"); after != exported {
		t.Error("a rejected import changed the catalog")
	}
	// The corrected file imports and its change shows in the next export.
	f.Products[1].Currency = "EUR"
	f.Areas[2].Geometry = goodGeometry
	if out := cli(t, env, "catalog", "import", write(f)); !strings.Contains(out, "imported") {
		t.Fatalf("import: %q", out)
	}
	after, _ := catalog.Parse([]byte(cli(t, env, "catalog", "export")))
	if after.Products[0].LocalTicketName != "Renamed" || len(after.Products) != len(f.Products) {
		t.Errorf("imported change missing: %q, %d products", after.Products[0].LocalTicketName, len(after.Products))
	}
}
