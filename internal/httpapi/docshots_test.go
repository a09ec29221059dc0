package httpapi_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/engines/browsertest"
)

// The screenshots docs/web.md shows are made from the golden ones: an
// image docs/img/web/<name>.png is browsertest.DocCopy of
// testdata/golden/<name>.png. TestGoldenPagesInChromium -update rewrites
// them with the goldens; TestWebDocScreenshots -update alone rewrites them
// from the goldens as they are.
const (
	webDoc     = "../../docs/web.md"
	docShotDir = "../../docs/img/web"
	goldenDir  = "testdata/golden"
)

var (
	docShotRef   = regexp.MustCompile(`\(img/web/([a-z0-9-]+)\.png\)`)
	goldenDocRef = regexp.MustCompile(`\(\.\./internal/httpapi/testdata/golden/([a-z0-9-]+)\.png\)`)
)

// docShots are the names of the screenshots docs/web.md shows
// (img/web/<name>.png), in order, each once.
func docShots() ([]string, error) {
	b, err := os.ReadFile(webDoc)
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, m := range docShotRef.FindAllStringSubmatch(string(b), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	return names, nil
}

// writeDocShots writes the documentation copy of each golden docs/web.md
// shows, and removes a copy it no longer shows.
func writeDocShots() error {
	names, err := docShots()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, n := range names {
		keep[n+".png"] = true
		img, err := browsertest.DocCopy(filepath.Join(goldenDir, n+".png"))
		if err != nil {
			return err
		}
		if same, _ := browsertest.SameImage(filepath.Join(docShotDir, n+".png"), img); same {
			continue // unchanged: the file's bytes stay
		}
		if err := browsertest.WritePNG(filepath.Join(docShotDir, n+".png"), img); err != nil {
			return err
		}
	}
	files, err := os.ReadDir(docShotDir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if !keep[f.Name()] {
			if err := os.Remove(filepath.Join(docShotDir, f.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestWebDocScreenshots: every screenshot docs/web.md shows is the current
// copy of a golden screenshot (a golden changed by -update without its
// copy, a copy edited by hand or a shown image without a golden fails);
// docs/img/web holds no image the page does not show; every golden the
// page links exists, and the page links every golden, so its table lists
// them all. -update rewrites the copies from the goldens.
func TestWebDocScreenshots(t *testing.T) {
	if *updateGolden {
		if err := writeDocShots(); err != nil {
			t.Fatal(err)
		}
	}
	names, err := docShots()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("docs/web.md shows no screenshot of img/web")
	}
	shown := map[string]bool{}
	for _, n := range names {
		shown[n+".png"] = true
		want, err := browsertest.DocCopy(filepath.Join(goldenDir, n+".png"))
		if err != nil {
			t.Errorf("docs/web.md shows img/web/%s.png, which is no golden screenshot: %v", n, err)
			continue
		}
		same, err := browsertest.SameImage(filepath.Join(docShotDir, n+".png"), want)
		if err != nil {
			t.Errorf("docs/web.md shows img/web/%s.png: %v (make it with -run TestWebDocScreenshots -update)", n, err)
		} else if !same {
			t.Errorf("docs/img/web/%s.png is not the copy of the current golden %s/%s.png: run -run TestWebDocScreenshots -update", n, goldenDir, n)
		}
	}
	files, err := os.ReadDir(docShotDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !shown[f.Name()] {
			t.Errorf("docs/img/web/%s is not shown by docs/web.md (-update removes it)", f.Name())
		}
	}
	doc, err := os.ReadFile(webDoc)
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, m := range goldenDocRef.FindAllStringSubmatch(string(doc), -1) {
		linked[m[1]+".png"] = true
		if _, err := os.Stat(filepath.Join(goldenDir, m[1]+".png")); err != nil {
			t.Errorf("docs/web.md links the golden %s.png, which does not exist", m[1])
		}
	}
	goldens, err := filepath.Glob(filepath.Join(goldenDir, "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	var unlisted []string
	for _, g := range goldens {
		if !linked[filepath.Base(g)] {
			unlisted = append(unlisted, strings.TrimSuffix(filepath.Base(g), ".png"))
		}
	}
	sort.Strings(unlisted)
	if len(unlisted) > 0 {
		t.Errorf("docs/web.md \"Golden screenshots\" does not link %d goldens: %v", len(unlisted), unlisted)
	}
}
