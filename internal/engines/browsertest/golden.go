package browsertest

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
)

// Golden screenshots (docs/web.md "Golden screenshots"): a browser test
// saves a page's screenshot (fixed data, fixed clock, random ids masked,
// animations off) and compares it with the PNG kept in testdata/golden,
// with a tolerance for the few pixels font rasterisation may move.

// Tolerance is how far a screenshot may be from its golden: a pixel
// differs when one of its channels is more than Channel (0–255) apart;
// the screenshot matches while at most Fraction of its pixels differ.
type Tolerance struct {
	Channel  uint8
	Fraction float64
}

// DefaultTolerance lets anti-aliasing move (channels within 48) and 0.5 %
// of the pixels differ: a changed word, colour or layout differs in far
// more.
var DefaultTolerance = Tolerance{Channel: 48, Fraction: 0.005}

// Diff is the comparison of two images of the same size: the pixels that
// differ, of how many, and an image of them (the golden faded, the
// differing pixels red).
type Diff struct {
	Differing, Total int
	Image            *image.RGBA
}

// Fraction is the share of differing pixels.
func (d Diff) Fraction() float64 {
	if d.Total == 0 {
		return 0
	}
	return float64(d.Differing) / float64(d.Total)
}

// Compare compares got with want pixel by pixel; images of different sizes
// are an error (a layout change, never within a tolerance).
func Compare(got, want image.Image, channel uint8) (Diff, error) {
	gb, wb := got.Bounds(), want.Bounds()
	if gb.Dx() != wb.Dx() || gb.Dy() != wb.Dy() {
		return Diff{}, fmt.Errorf("size %dx%d, golden %dx%d", gb.Dx(), gb.Dy(), wb.Dx(), wb.Dy())
	}
	d := Diff{Total: gb.Dx() * gb.Dy(), Image: image.NewRGBA(image.Rect(0, 0, gb.Dx(), gb.Dy()))}
	for y := 0; y < gb.Dy(); y++ {
		for x := 0; x < gb.Dx(); x++ {
			g := color.RGBAModel.Convert(got.At(gb.Min.X+x, gb.Min.Y+y)).(color.RGBA)
			w := color.RGBAModel.Convert(want.At(wb.Min.X+x, wb.Min.Y+y)).(color.RGBA)
			if far(g.R, w.R, channel) || far(g.G, w.G, channel) || far(g.B, w.B, channel) || far(g.A, w.A, channel) {
				d.Differing++
				d.Image.SetRGBA(x, y, color.RGBA{R: 255, A: 255})
				continue
			}
			// The golden, faded, for orientation.
			d.Image.SetRGBA(x, y, color.RGBA{R: 255 - (255-w.R)/4, G: 255 - (255-w.G)/4, B: 255 - (255-w.B)/4, A: 255})
		}
	}
	return d, nil
}

func far(a, b, limit uint8) bool {
	if a > b {
		return a-b > limit
	}
	return b-a > limit
}

// CheckGolden compares the screenshot at got with the golden PNG at
// golden. With update it copies got to golden instead. On a mismatch it
// writes the diff image next to got (<got>.diff.png) and returns an error
// naming both files.
func CheckGolden(got, golden string, update bool, tol Tolerance) error {
	if update {
		b, err := os.ReadFile(got)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			return err
		}
		return os.WriteFile(golden, b, 0o644)
	}
	g, err := readPNG(got)
	if err != nil {
		return err
	}
	w, err := readPNG(golden)
	if err != nil {
		return fmt.Errorf("%w (make it with -update)", err)
	}
	d, err := Compare(g, w, tol.Channel)
	if err != nil {
		return fmt.Errorf("%s against %s: %w", got, golden, err)
	}
	if d.Fraction() <= tol.Fraction {
		return nil
	}
	diff := got + ".diff.png"
	f, err := os.Create(diff)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := png.Encode(f, d.Image); err != nil {
		return err
	}
	return fmt.Errorf("%s differs from %s in %d of %d pixels (%.2f %%, tolerance %.2f %%): see %s; if the change is meant, run the test with -update",
		got, golden, d.Differing, d.Total, 100*d.Fraction(), 100*tol.Fraction, diff)
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}
