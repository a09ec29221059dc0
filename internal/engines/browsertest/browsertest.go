// Package browsertest runs the engines' browser scripts
// (internal/engines/testdata/browser/*.js, puppeteer-core driving Debian's
// Chromium) from Go tests. A missing node, Chromium or npm package fails the
// test with the command that installs it; it skips only under -short,
// the fast tier (testtool.FullSuiteOnly).
package browsertest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/testtool"
)

// Dir is internal/engines/testdata/browser, where the scripts and their
// package-lock.json live.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "browser")
}

// Run writes cfg (plus "chromium" and "outDir") to a config file, runs
// `node <Dir>/<script> <config>`, decodes <outDir>/results.json into res and
// returns outDir. Screenshots stay in $FAREBOX_ENGINE_SCREENSHOTS when set.
// Under -short it skips the test (testtool.Browser): callers skip first,
// before their setup, and this catches a browser test that does not.
func Run(t testing.TB, script string, cfg map[string]any, res any) string {
	t.Helper()
	testtool.FullSuiteOnly(t, testtool.Browser)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required (apt-get install nodejs): ", err)
	}
	chromium := os.Getenv("FAREBOX_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatal("chromium is required (apt-get install chromium): ", err)
	}
	dir := Dir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "puppeteer-core")); err != nil {
		t.Fatal("puppeteer-core is missing: run `npm ci` in internal/engines/testdata/browser: ", err)
	}
	out := os.Getenv("FAREBOX_ENGINE_SCREENSHOTS")
	if out == "" {
		out = t.TempDir()
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg["chromium"], cfg["outDir"] = chromium, out
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, script), cfgPath)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, msg)
	}
	data, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, res); err != nil {
		t.Fatal(err)
	}
	return out
}

// ScanScreenshot reads the barcode image a browser test saved (a missing
// file fails the test) and returns the payload scanned from it.
func ScanScreenshot(t testing.TB, path string) ([]byte, error) {
	t.Helper()
	img, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return barcode.ParseInput(img)
}
