package browsertest

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// page is a 100 x 50 white image with n black pixels from the top left and
// one grey pixel (shade) at the bottom right.
func page(n int, shade uint8) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 100, 50))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for i := 0; i < n; i++ {
		img.SetRGBA(i%100, i/100, color.RGBA{A: 255})
	}
	img.SetRGBA(99, 49, color.RGBA{R: shade, G: shade, B: shade, A: 255})
	return img
}

// TestCheckGolden: the same image matches; anti-aliasing (a channel off
// by less than the threshold) matches; a few differing pixels within the
// fraction match; more fail with a diff image naming the pixels; another
// size fails; -update writes the golden; a missing golden says -update.
func TestCheckGolden(t *testing.T) {
	dir := t.TempDir()
	golden, got := filepath.Join(dir, "golden", "p.png"), filepath.Join(dir, "p.png")
	tol := Tolerance{Channel: 48, Fraction: 0.01} // 50 of 5000 pixels
	writePNG(t, got, page(0, 200))
	if err := CheckGolden(got, golden, false, tol); err == nil || !strings.Contains(err.Error(), "-update") {
		t.Errorf("missing golden: %v", err)
	}
	if err := CheckGolden(got, golden, true, tol); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		img *image.RGBA
		ok  bool
	}{"same": {page(0, 200), true}, "anti-aliased": {page(0, 160), true}, "within": {page(50, 200), true},
		"beyond": {page(51, 200), false}, "shade beyond the channel": {page(50, 100), false}} {
		writePNG(t, got, c.img)
		err := CheckGolden(got, golden, false, tol)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", name, err)
		}
		if !c.ok {
			d, derr := readPNG(got + ".diff.png")
			if derr != nil {
				t.Fatalf("%s: no diff image: %v", name, derr)
			}
			if r, _, _, _ := d.At(0, 0).RGBA(); r>>8 != 255 || !strings.Contains(err.Error(), "pixels") {
				t.Errorf("%s: diff image or message: %v", name, err)
			}
			os.Remove(got + ".diff.png")
		}
	}
	writePNG(t, got, image.NewRGBA(image.Rect(0, 0, 100, 51)))
	if err := CheckGolden(got, golden, false, tol); err == nil || !strings.Contains(err.Error(), "size 100x51, golden 100x50") {
		t.Errorf("other size: %v", err)
	}
}
