package wallet

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Brand is the operator's appearance on passes and in the rendering
// engine: names, colours and the icon and logo artwork. DevelopmentBrand is
// the default; LoadBrand builds and validates a configured one.
type Brand struct {
	// Organization is the organisation selling the tickets: Apple's
	// organizationName and logo text, Google's issuer name, the engine's
	// header.
	Organization string
	// Operator is the transport company issuing the tickets (Apple back
	// field "Ausgegeben von", Google transitOperatorName, the engine's
	// header line); Organization when not configured.
	Operator                      string
	Foreground, Background, Label Color
	// Icon and Logo are the decoded artwork; nil draws farebox's glyph.
	Icon, Logo image.Image
	// Development is the built-in farebox brand (serve warns).
	Development bool
}

// Color is an opaque sRGB colour.
type Color struct{ R, G, B uint8 }

// RGB is Apple's pass.json form "rgb(r, g, b)".
func (c Color) RGB() string { return fmt.Sprintf("rgb(%d, %d, %d)", c.R, c.G, c.B) }

// Hex is "#rrggbb" (Google, CSS).
func (c Color) Hex() string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

var (
	hexColorRE = regexp.MustCompile(`^#([0-9a-fA-F]{6})$`)
	rgbColorRE = regexp.MustCompile(`^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$`)
)

// ParseColor reads "#rrggbb" or "rgb(r, g, b)" (0–255 each).
func ParseColor(s string) (Color, error) {
	s = strings.TrimSpace(s)
	if m := hexColorRE.FindStringSubmatch(s); m != nil {
		v, _ := strconv.ParseUint(m[1], 16, 32)
		return Color{uint8(v >> 16), uint8(v >> 8), uint8(v)}, nil
	}
	if m := rgbColorRE.FindStringSubmatch(s); m != nil {
		var c [3]uint8
		for i := range c {
			n, _ := strconv.Atoi(m[i+1])
			if n > 255 {
				return Color{}, fmt.Errorf("%q: %d is above 255", s, n)
			}
			c[i] = uint8(n)
		}
		return Color{c[0], c[1], c[2]}, nil
	}
	return Color{}, fmt.Errorf("%q is not a colour like #005c44 or rgb(0, 92, 68)", s)
}

// luminance is the WCAG relative luminance.
func (c Color) luminance() float64 {
	ch := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(c.R) + 0.7152*ch(c.G) + 0.0722*ch(c.B)
}

// Contrast is the WCAG contrast ratio of two colours (1 to 21).
func Contrast(a, b Color) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// MinContrast is the least contrast of text (foreground, label) against
// the background a brand may have: WCAG's 3:1 for large text, since pass
// texts are set large and a ticket must stay readable in sunlight.
const MinContrast = 3.0

// Development brand: farebox's own name and green.
const DevelopmentOrganization = "farebox"

var (
	devForeground = Color{255, 255, 255}
	devBackground = Color{0, 92, 68}
	devLabel      = Color{196, 232, 214}
)

// DevelopmentBrand is the brand of an unconfigured service.
func DevelopmentBrand() Brand {
	return Brand{Organization: DevelopmentOrganization, Operator: DevelopmentOrganization,
		Foreground: devForeground, Background: devBackground, Label: devLabel, Development: true}
}

// Image sizes Apple requires of pass artwork, in points (the files carry @1x,
// @2x and @3x): the icon is 29×29, the logo fits 160×50. A configured image
// must be at least the @3x size (so no file is scaled up) and at most
// MaxBrandImagePixels on a side.
const (
	IconPoints          = 29
	LogoMaxWidthPoints  = 160
	LogoMaxHeightPoints = 50
	MaxBrandImagePixels = 2048
	maxBrandImageBytes  = 4 << 20
)

// BrandSettings are the configured texts (flags) of a brand; empty fields
// take the development brand's values.
type BrandSettings struct {
	Organization, Operator        string
	Foreground, Background, Label string
	IconFile, LogoFile            string // PNG files
}

// Configured reports whether any brand setting is given.
func (s BrandSettings) Configured() bool { return s != BrandSettings{} }

// LoadBrand validates s and reads its images: every problem is reported,
// each naming its flag (--brand-…). Nothing configured gives the
// development brand. A configured brand needs its organisation name;
// colours must parse and give text MinContrast against the background; the
// icon must be a square PNG of at least 87×87 pixels (29 points @3x), the
// logo a PNG at least 150 pixels high (50 points @3x) and at most 3.2 times
// as wide as high (160×50 points).
func LoadBrand(s BrandSettings) (Brand, error) {
	b := DevelopmentBrand()
	if !s.Configured() {
		return b, nil
	}
	b.Development = false
	var errs []error
	bad := func(flag string, format string, a ...any) {
		errs = append(errs, fmt.Errorf("--brand-%s: %s", flag, fmt.Sprintf(format, a...)))
	}
	b.Organization, b.Operator = strings.TrimSpace(s.Organization), strings.TrimSpace(s.Operator)
	switch {
	case b.Organization == "":
		bad("organization", "required when any other --brand-* setting is given")
	case len(b.Organization) > 100 || strings.ContainsAny(b.Organization, "\r\n\t"):
		bad("organization", "at most 100 bytes on one line")
	}
	if b.Operator == "" {
		b.Operator = b.Organization
	} else if len(b.Operator) > 100 || strings.ContainsAny(b.Operator, "\r\n\t") {
		bad("operator", "at most 100 bytes on one line")
	}
	color := func(flag, v string, dst *Color) {
		if v == "" {
			return
		}
		c, err := ParseColor(v)
		if err != nil {
			bad(flag, "%v", err)
			return
		}
		*dst = c
	}
	color("foreground-color", s.Foreground, &b.Foreground)
	color("background-color", s.Background, &b.Background)
	color("label-color", s.Label, &b.Label)
	if len(errs) == 0 {
		for flag, c := range map[string]Color{"foreground-color": b.Foreground, "label-color": b.Label} {
			if r := Contrast(c, b.Background); r < MinContrast {
				bad(flag, "%s on the background %s has a contrast of %.2f:1; at least %.0f:1 is needed to stay readable", c.Hex(), b.Background.Hex(), r, MinContrast)
			}
		}
	}
	if s.IconFile != "" {
		img, err := readPNG(s.IconFile)
		switch {
		case err != nil:
			bad("icon", "%v", err)
		case img.Bounds().Dx() != img.Bounds().Dy():
			bad("icon", "%s is %dx%d pixels; the icon must be square", s.IconFile, img.Bounds().Dx(), img.Bounds().Dy())
		case img.Bounds().Dx() < 3*IconPoints:
			bad("icon", "%s is %dx%d pixels; at least %dx%d are needed (Apple's icon@3x, %d points)", s.IconFile, img.Bounds().Dx(), img.Bounds().Dy(), 3*IconPoints, 3*IconPoints, IconPoints)
		default:
			b.Icon = img
		}
	}
	if s.LogoFile != "" {
		img, err := readPNG(s.LogoFile)
		switch {
		case err != nil:
			bad("logo", "%v", err)
		case img.Bounds().Dy() < 3*LogoMaxHeightPoints:
			bad("logo", "%s is %dx%d pixels; at least %d pixels high are needed (Apple's logo@3x, %d points)", s.LogoFile, img.Bounds().Dx(), img.Bounds().Dy(), 3*LogoMaxHeightPoints, LogoMaxHeightPoints)
		case img.Bounds().Dx()*LogoMaxHeightPoints > img.Bounds().Dy()*LogoMaxWidthPoints:
			bad("logo", "%s is %dx%d pixels; a logo may be at most %.1f times as wide as high (Apple's %dx%d points)", s.LogoFile, img.Bounds().Dx(), img.Bounds().Dy(), float64(LogoMaxWidthPoints)/LogoMaxHeightPoints, LogoMaxWidthPoints, LogoMaxHeightPoints)
		default:
			b.Logo = img
		}
	}
	return b, errors.Join(errs...)
}

// readPNG decodes a PNG file, refusing other formats and oversized images
// before decoding their pixels.
func readPNG(path string) (image.Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) > maxBrandImageBytes {
		return nil, fmt.Errorf("%s has %d bytes; at most %d", path, len(data), maxBrandImageBytes)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s is no PNG image: %v", path, err)
	}
	if cfg.Width > MaxBrandImagePixels || cfg.Height > MaxBrandImagePixels {
		return nil, fmt.Errorf("%s is %dx%d pixels; at most %d on a side", path, cfg.Width, cfg.Height, MaxBrandImagePixels)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s is no readable PNG image: %v", path, err)
	}
	return img, nil
}

// GermanDate writes a "YYYY-MM-DD" date as German passes show it,
// "31.12.1979"; anything else is returned unchanged.
func GermanDate(s string) string {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		return s
	}
	return d.Format("02.01.2006")
}
