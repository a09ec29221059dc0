package testtool

import (
	"archive/zip"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Pkpass reads a .pkpass the way Wallet does (root files and those of
// xx.lproj folders only, stored uncompressed, no duplicates, readable
// CRCs) and returns its files.
func Pkpass(t testing.TB, data []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("pkpass is not a zip: %v", err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "/") || strings.Contains(f.Name, "..") || strings.Count(f.Name, "/") > 1 ||
			(strings.Contains(f.Name, "/") && !strings.HasSuffix(strings.Split(f.Name, "/")[0], ".lproj")) || strings.HasSuffix(f.Name, "/") {
			t.Errorf("unsafe, nested or folder entry %q", f.Name)
		}
		if f.Method != zip.Store {
			t.Errorf("%s is not stored", f.Name)
		}
		if _, dup := files[f.Name]; dup {
			t.Errorf("duplicate entry %q", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc) // checks the CRC at EOF
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		files[f.Name] = b
	}
	return files
}

// PkpassManifest compares a pass's manifest.json with its files, both
// ways: every file but manifest.json and signature is listed with its
// SHA-1, and every listed file is there.
func PkpassManifest(files map[string][]byte) error {
	var manifest map[string]string
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		return fmt.Errorf("manifest.json: %v", err)
	}
	for name, b := range files {
		if name == "manifest.json" || name == "signature" {
			if _, listed := manifest[name]; listed {
				return fmt.Errorf("manifest lists %s", name)
			}
			continue
		}
		sum := sha1.Sum(b)
		want, listed := manifest[name]
		if !listed {
			return fmt.Errorf("file %s missing from the manifest", name)
		}
		if want != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("manifest hash of %s: %q, file hashes to %x", name, want, sum)
		}
	}
	for name := range manifest {
		if _, ok := files[name]; !ok {
			return fmt.Errorf("manifest lists missing file %s", name)
		}
	}
	return nil
}
