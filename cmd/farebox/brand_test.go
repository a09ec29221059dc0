package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeBrandSettings: a bad brand stops `farebox serve` before it opens
// anything, naming each bad flag and why.
func TestServeBrandSettings(t *testing.T) {
	dir := t.TempDir()
	writeImg := func(name string, w, h int) string {
		var buf bytes.Buffer
		if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notPNG := filepath.Join(dir, "logo.jpg")
	if err := os.WriteFile(notPNG, []byte("\xff\xd8\xff\xe0 not a png"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"colours without an organisation", map[string]string{"FAREBOX_BRAND_BACKGROUND_COLOR": "#123456"},
			[]string{"--brand-organization: required"}},
		{"bad colour", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS", "FAREBOX_BRAND_BACKGROUND_COLOR": "green"},
			[]string{"--brand-background-color", `"green" is not a colour`}},
		{"unreadable text", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS", "FAREBOX_BRAND_BACKGROUND_COLOR": "#f0f0f0"},
			[]string{"--brand-foreground-color", "contrast of 1.14:1"}},
		{"small, non-square icon and a JPEG logo", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS",
			"FAREBOX_BRAND_ICON": writeImg("icon.png", 60, 60), "FAREBOX_BRAND_LOGO": notPNG},
			[]string{"--brand-icon", "60x60 pixels; at least 87x87", "--brand-logo", "is no PNG image"}},
		{"wide logo, oblong icon", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS",
			"FAREBOX_BRAND_ICON": writeImg("wide-icon.png", 100, 90), "FAREBOX_BRAND_LOGO": writeImg("wide.png", 600, 150)},
			[]string{"--brand-icon", "must be square", "--brand-logo", "at most 3.2 times as wide as high"}},
		{"missing file", map[string]string{"FAREBOX_BRAND_ORGANIZATION": "VMS", "FAREBOX_BRAND_LOGO": filepath.Join(dir, "nope.png")},
			[]string{"--brand-logo", "no such file"}},
	} {
		env := map[string]string{"FAREBOX_DATA_DIR": filepath.Join(t.TempDir(), "data"), "FAREBOX_ADDR": "127.0.0.1:0"}
		for k, v := range c.env {
			env[k] = v
		}
		err := serve(context.Background(), nil, envFrom(env), io.Discard, io.Discard, nil)
		for _, want := range c.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v; want it to say %q", c.name, err, want)
			}
		}
		if _, statErr := os.Stat(env["FAREBOX_DATA_DIR"]); statErr == nil {
			t.Errorf("%s: the data dir was created before the brand was checked", c.name)
		}
	}
}
