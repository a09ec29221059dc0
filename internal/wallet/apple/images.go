package apple

import (
	"bytes"
	"image"
	"image/color"
	"image/png"

	xdraw "golang.org/x/image/draw"

	"github.com/farebox/farebox/internal/wallet"
)

// PassImages are the icon and logo files of a pass for brand b, at @1x,
// @2x and @3x: icon 29×29 points, logo 50 points high and at most 160 wide
// (Apple's boardingPass sizes). The brand's images (wallet.LoadBrand checked
// that they are at least the @3x size) are scaled down with Catmull-Rom;
// without one, farebox's glyph is drawn in code: a white ticket with two
// punched notches, on the brand's background for the icon and on
// transparency for the logo.
func PassImages(b wallet.Brand) (map[string][]byte, error) {
	bg := color.NRGBA{b.Background.R, b.Background.G, b.Background.B, 255}
	out := map[string][]byte{}
	for scale, suffix := range map[int]string{1: "", 2: "@2x", 3: "@3x"} {
		var icon, logo image.Image
		if b.Icon != nil {
			icon = scaled(b.Icon, wallet.IconPoints*scale, wallet.IconPoints*scale)
		} else {
			icon = drawGlyph(wallet.IconPoints*scale, wallet.IconPoints*scale, bg)
		}
		if b.Logo != nil {
			h := wallet.LogoMaxHeightPoints * scale
			w := (b.Logo.Bounds().Dx()*h + b.Logo.Bounds().Dy()/2) / b.Logo.Bounds().Dy()
			logo = scaled(b.Logo, max(1, min(w, wallet.LogoMaxWidthPoints*scale)), h)
		} else {
			logo = drawGlyph(50*scale, 50*scale, color.NRGBA{})
		}
		for name, img := range map[string]image.Image{"icon" + suffix + ".png": icon, "logo" + suffix + ".png": logo} {
			var buf bytes.Buffer
			if err := png.Encode(&buf, img); err != nil {
				return nil, err
			}
			out[name] = buf.Bytes()
		}
	}
	return out, nil
}

// scaled draws src into a w×h image.
func scaled(src image.Image, w, h int) *image.NRGBA {
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), xdraw.Src, nil)
	return dst
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
