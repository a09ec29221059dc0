package apple

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"sync"
)

// Images are drawn in code (no artwork files): a white ticket glyph with two
// punched notches, on the pass colour for the icon and on transparency for
// the logo. Sizes follow Apple's boardingPass guidance: icon 29×29 points,
// logo at most 160×50 points, each at @1x, @2x and @3x.
var (
	imagesOnce sync.Once
	images     map[string][]byte
	imagesErr  error
)

func passImages() (map[string][]byte, error) {
	imagesOnce.Do(func() {
		images = map[string][]byte{}
		bg := color.NRGBA{0, 92, 68, 255}
		for scale, suffix := range map[int]string{1: "", 2: "@2x", 3: "@3x"} {
			icon := drawGlyph(29*scale, 29*scale, bg)
			logo := drawGlyph(50*scale, 50*scale, color.NRGBA{})
			for name, img := range map[string]image.Image{"icon" + suffix + ".png": icon, "logo" + suffix + ".png": logo} {
				var buf bytes.Buffer
				if err := png.Encode(&buf, img); err != nil {
					imagesErr = err
					return
				}
				images[name] = buf.Bytes()
			}
		}
	})
	return images, imagesErr
}

// drawGlyph paints a w×h image: background bg, a centred white ticket with
// semicircular notches on both long sides and a dashed tear line.
func drawGlyph(w, h int, bg color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	white := color.NRGBA{255, 255, 255, 255}
	x0, x1 := w*12/100, w*88/100
	y0, y1 := h*28/100, h*72/100
	notch := (y1 - y0) / 5
	cy := (y0 + y1) / 2
	tear := x0 + (x1-x0)*68/100
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := bg
			in := x >= x0 && x < x1 && y >= y0 && y < y1
			dl, dr := sq(x-x0)+sq(y-cy), sq(x-x1)+sq(y-cy)
			if in && dl > sq(notch) && dr > sq(notch) {
				c = white
				if x == tear && (y/max(1, h/20))%2 == 0 {
					c = bg
				}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

func sq(v int) int { return v * v }
