package browsertest

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
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
	g8, w8 := rgba(got), rgba(want)
	if string(g8.Pix) == string(w8.Pix) {
		// The same pixels (a stable page): no diff image to draw.
		return Diff{Total: gb.Dx() * gb.Dy(), Image: image.NewRGBA(image.Rectangle{})}, nil
	}
	d := Diff{Total: gb.Dx() * gb.Dy(), Image: image.NewRGBA(image.Rect(0, 0, gb.Dx(), gb.Dy()))}
	for y := 0; y < gb.Dy(); y++ {
		for x := 0; x < gb.Dx(); x++ {
			g, w := g8.RGBAAt(x, y), w8.RGBAAt(x, y)
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

// rgba is img as 8-bit RGBA from (0, 0): the image itself when it is one
// (a decoded screenshot), else a converted copy.
func rgba(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok && r.Rect.Min == (image.Point{}) {
		return r
	}
	b := img.Bounds()
	r := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(r, r.Rect, img, b.Min, draw.Src)
	return r
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

// DocWidth is the widest a documentation copy of a golden screenshot is
// (docs/img/web): a wider golden (a 1280 px page) is shown at half its
// size, a phone's as it is.
const DocWidth = 720

// DocCopy is the documentation copy of the golden PNG at golden: the same
// pixels, or, for a golden wider than DocWidth, each 2 × 2 block averaged
// into one pixel.
func DocCopy(golden string) (*image.RGBA, error) {
	img, err := readPNG(golden)
	if err != nil {
		return nil, err
	}
	src := rgba(img)
	if src.Rect.Dx() <= DocWidth {
		return src, nil
	}
	w, h := src.Rect.Dx()/2, src.Rect.Dy()/2
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var sum [4]int
			for _, p := range [4]image.Point{{2 * x, 2 * y}, {2*x + 1, 2 * y}, {2 * x, 2*y + 1}, {2*x + 1, 2*y + 1}} {
				c := src.RGBAAt(p.X, p.Y)
				sum[0], sum[1], sum[2], sum[3] = sum[0]+int(c.R), sum[1]+int(c.G), sum[2]+int(c.B), sum[3]+int(c.A)
			}
			dst.SetRGBA(x, y, color.RGBA{R: uint8((sum[0] + 2) / 4), G: uint8((sum[1] + 2) / 4), B: uint8((sum[2] + 2) / 4), A: uint8((sum[3] + 2) / 4)})
		}
	}
	return dst, nil
}

// SameImage reports whether the PNG at path has exactly img's pixels.
func SameImage(path string, img *image.RGBA) (bool, error) {
	got, err := readPNG(path)
	if err != nil {
		return false, err
	}
	g := rgba(got)
	return g.Rect.Eq(img.Rect) && string(g.Pix) == string(img.Pix), nil
}

// WritePNG writes img to path as a PNG (best compression).
func WritePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
