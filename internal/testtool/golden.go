package testtool

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Golden compares got with the golden file at path; with update it
// rewrites the file instead (making its directory). A missing file or a
// difference fails the test with the file, the first line that differs and
// rerun, the command that rewrites it after review.
func Golden(t testing.TB, path string, got []byte, update bool, rerun string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file missing (%s): %v", rerun, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (review, then %s):\n%s", path, rerun, FirstDiff(got, want))
	}
}

// FirstDiff names the first line in which got and want differ, with both.
func FirstDiff(got, want []byte) string {
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if !bytes.Equal(gl[i], wl[i]) {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + string(gl[i]) + "\nwant: " + string(wl[i])
		}
	}
	return "lengths differ"
}
