package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testBadge = `<?xml version="1.0" encoding="UTF-8"?><svg xmlns="http://www.w3.org/2000/svg" width="110" height="34" viewBox="0 0 110 34"><rect width="110" height="34" rx="6"/><text x="10" y="22" fill="#fff">Wallet</text></svg>`

// TestLoadBadges: no directory, none; the files of the directory by kind
// and language as data: URLs, other files ignored; a missing directory,
// a file that is not SVG, with a script or an event attribute, or too
// large is refused at start-up, naming the file.
func TestLoadBadges(t *testing.T) {
	if b, err := LoadBadges(""); err != nil || len(b) != 0 {
		t.Fatalf("no directory: %v %v", b, err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"apple-wallet-de.svg": testBadge, "google-wallet-en.svg": testBadge, "google-wallet-fr.svg": "x", "notes.txt": "x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := LoadBadges(dir)
	if err != nil || len(b) != 2 {
		t.Fatalf("badges %v %v", b, err)
	}
	if u, ok := b.Badge("apple", "de"); !ok || !strings.HasPrefix(string(u), "data:image/svg+xml;base64,PD94bWwg") {
		t.Errorf("apple/de: %.60s %v", u, ok)
	}
	if _, ok := b.Badge("apple", "en"); ok {
		t.Error("apple/en without a file")
	}
	if _, err := LoadBadges(filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "--wallet-badges") {
		t.Errorf("missing directory: %v", err)
	}
	for name, body := range map[string]string{
		"not svg":   `<html><body/></html>`,
		"not xml":   `<svg><rect></svg>`,
		"script":    `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`,
		"onload":    `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`,
		"foreign":   `<svg xmlns="http://www.w3.org/2000/svg"><foreignObject/></svg>`,
		"too large": `<svg xmlns="http://www.w3.org/2000/svg">` + strings.Repeat(" ", MaxBadgeBytes) + `</svg>`,
		"empty":     ``,
	} {
		bad := t.TempDir()
		path := filepath.Join(bad, "google-wallet-de.svg")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadBadges(bad); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzCheckBadge: any input is accepted or refused without a panic; an
// accepted one is within the size limit and names an svg element.
func FuzzCheckBadge(f *testing.F) {
	for _, s := range []string{testBadge, `<svg/>`, `<svg><script/></svg>`, `<a/>`, ``, `<svg onclick="x"/>`, `<?xml version="1.0"?><!DOCTYPE svg><svg/>`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckBadge(b) == nil && (len(b) > MaxBadgeBytes || !strings.Contains(string(b), "svg")) {
			t.Errorf("accepted %q", b)
		}
	})
}
