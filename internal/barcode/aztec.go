package barcode

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // DecodeImage reads GIF photos of codes
	_ "image/jpeg" // DecodeImage reads JPEG photos of codes
	"image/png"
	"strings"
	"unicode/utf8"

	"github.com/boombuler/barcode/aztec"
	"github.com/makiuchi-d/gozxing"
	zxaztec "github.com/makiuchi-d/gozxing/aztec"

	"github.com/farebox/farebox/internal/apperr"
)

// AztecECCPercent is the minimum error correction of the codes we draw
// (23 % is the Aztec recommendation and what ZXing uses by default).
const AztecECCPercent = 23

// MaxImagePixels bounds the images DecodeImage accepts (a phone photo has
// about 12 megapixels).
const MaxImagePixels = 40_000_000

// Matrix is an Aztec symbol as modules (true = dark), row-major.
type Matrix struct {
	Size    int
	Modules []bool
}

// At reports whether module (x, y) is dark.
func (m Matrix) At(x, y int) bool { return m.Modules[y*m.Size+x] }

// Aztec encodes data (the binary payload or its text form) as an Aztec symbol.
func Aztec(data []byte) (Matrix, error) {
	code, err := aztec.Encode(data, AztecECCPercent, 0)
	if err != nil {
		return Matrix{}, apperr.E("barcode.Aztec", apperr.Invalid, CodeBarcodeTooLarge, err.Error())
	}
	n := code.Bounds().Dx()
	m := Matrix{Size: n, Modules: make([]bool, n*n)}
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			r, _, _, _ := code.At(x, y).RGBA()
			m.Modules[y*n+x] = r < 0x8000
		}
	}
	return m, nil
}

// PNG draws data as an Aztec code: scale pixels per module and a quiet zone
// of quiet modules on every side, as a 1-bit grey PNG.
func PNG(data []byte, scale, quiet int) ([]byte, error) {
	if scale < 1 || scale > 64 || quiet < 0 || quiet > 16 {
		return nil, apperr.E("barcode.PNG", apperr.Invalid, CodeInvalidBarcodeScale, "scale must be 1..64, quiet zone 0..16")
	}
	m, err := Aztec(data)
	if err != nil {
		return nil, err
	}
	side := (m.Size + 2*quiet) * scale
	img := image.NewPaletted(image.Rect(0, 0, side, side), color.Palette{color.White, color.Black})
	for y := 0; y < m.Size; y++ {
		for x := 0; x < m.Size; x++ {
			if !m.At(x, y) {
				continue
			}
			x0, y0 := (x+quiet)*scale, (y+quiet)*scale
			for dy := 0; dy < scale; dy++ {
				row := img.Pix[(y0+dy)*img.Stride+x0:]
				for dx := 0; dx < scale; dx++ {
					row[dx] = 1
				}
			}
		}
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, apperr.Wrap("barcode.PNG", err)
	}
	return buf.Bytes(), nil
}

// Latin1 maps each byte to the character with the same code (U+0000..U+00FF):
// the message of an Apple Wallet barcode with messageEncoding "iso-8859-1".
func Latin1(b []byte) string {
	var sb strings.Builder
	sb.Grow(2 * len(b))
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// FromLatin1 reverses Latin1; a character above U+00FF is an error.
func FromLatin1(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF || r == utf8.RuneError {
			return nil, errors.New("character outside ISO-8859-1")
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// Text is the text form of a payload (base64url without padding): what a
// Google Wallet barcode value carries, since Google renders only UTF-8.
func Text(payload []byte) string { return base64.RawURLEncoding.EncodeToString(payload) }

// FromText decodes a text form: base64 in the URL or standard alphabet,
// padded or not, surrounding white space ignored.
func FromText(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.StdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, apperr.E("barcode.FromText", apperr.Invalid, CodeMalformedBarcode, "not base64 text")
}

// DecodeImage finds an Aztec code in a PNG, JPEG or GIF image and returns
// the bytes it carries (for a code of the text form, the text's bytes).
func DecodeImage(data []byte) ([]byte, error) {
	const op = "barcode.DecodeImage"
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeUnreadableImage, "not a PNG, JPEG or GIF image: "+err.Error())
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > MaxImagePixels {
		return nil, apperr.E(op, apperr.Invalid, CodeImageTooLarge, "the image is empty or larger than 40 megapixels")
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeUnreadableImage, "not a PNG, JPEG or GIF image: "+err.Error())
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeUnreadableImage, err.Error())
	}
	res, err := readAztec(bmp)
	if apperr.As(err) != nil {
		return nil, err
	}
	if err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeNoBarcodeFound, "no readable Aztec code in the image: "+err.Error())
	}
	// ZXing hands binary content back as ISO-8859-1 text.
	b, err := FromLatin1(res.GetText())
	if err != nil {
		return nil, apperr.E(op, apperr.Invalid, CodeMalformedBarcode, err.Error())
	}
	return b, nil
}

// readAztec runs gozxing's Aztec reader on bmp. gozxing v0.1.1 dereferences
// a nil character set when a valid code carries an ECI designator its table
// lacks (899 "binary", or an unassigned one such as 50): the panic is
// recovered here and reported as an unsupported code. A pre-check would
// need its own Aztec bit decoder; the reader keeps no state between calls,
// so recovering is safe.
func readAztec(bmp *gozxing.BinaryBitmap) (res *gozxing.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, apperr.E("barcode.DecodeImage", apperr.Invalid, CodeUnsupportedBarcode, fmt.Sprintf(
				"the Aztec code uses a character set designator (ECI) the reader does not support, such as 899 (binary); "+
					"encode the payload without ECI (reader failure: %v)", r))
		}
	}()
	hints := map[gozxing.DecodeHintType]interface{}{gozxing.DecodeHintType_TRY_HARDER: true}
	return zxaztec.NewAztecReader().Decode(bmp, hints)
}

// ParseInput turns what an inspector hands to `farebox inspect` into payload
// bytes: an image of the code, the raw binary payload, or its text form
// (base64, as in Google passes, or the ISO-8859-1 string of Apple passes).
func ParseInput(data []byte) ([]byte, error) {
	if isImage(data) {
		b, err := DecodeImage(data)
		if err != nil {
			return nil, err
		}
		data = b // the code carries the binary payload or its text form
	}
	// A UIC 918.3 container ("#UT", barcode/uic) goes through as it is.
	if bytes.HasPrefix(data, []byte("#UT")) {
		return data, nil
	}
	// So does a VDV-KA static barcode (barcode/vdv): its 128-byte signature object.
	if bytes.HasPrefix(data, []byte{0x9E, 0x81, 0x80}) {
		return data, nil
	}
	// A dynamic barcode ("FD", barcode/dynamic) wraps a payload; its parser
	// explains what is wrong with it.
	if IsDynamic(data) {
		return data, nil
	}
	// So does the text of a Google Wallet rotating barcode ("FR1.", barcode/dynamic).
	if t := bytes.TrimSpace(data); IsRotating(t) {
		return t, nil
	}
	hasMagic := func(b []byte) bool { return len(b) >= 2 && b[0] == magic0 && b[1] == magic1 }
	if hasMagic(data) {
		if _, err := Parse(data); err == nil {
			return data, nil
		}
	}
	if utf8.Valid(data) {
		s := strings.TrimSpace(string(data))
		// Latin-1 text keeps white-space characters inside the payload: try it untrimmed first.
		for _, t := range []string{string(data), strings.TrimRight(string(data), "\r\n"), s} {
			if b, err := FromLatin1(t); err == nil && IsDynamic(b) {
				return b, nil
			} else if err == nil && hasMagic(b) {
				if _, err := Parse(b); err == nil {
					return b, nil
				}
			}
		}
		if b, err := FromText(s); err == nil {
			return b, nil
		}
	}
	if hasMagic(data) {
		return data, nil // Verify explains what is wrong with it
	}
	return nil, apperr.E("barcode.ParseInput", apperr.Invalid, CodeMalformedBarcode,
		"input is neither an image, a binary payload nor its base64 text")
}

// DynamicMagic starts a dynamic barcode (package barcode/dynamic).
const DynamicMagic = "FD"

// IsDynamic reports whether b starts like a dynamic barcode: "FD" and
// format version 1.
func IsDynamic(b []byte) bool {
	return len(b) >= 3 && string(b[:2]) == DynamicMagic && b[2] == 1
}

// RotatingPrefix starts the text of a Google Wallet rotating barcode
// (package barcode/dynamic): "FR1." payload "." seconds "." TOTP value.
const RotatingPrefix = "FR1."

// IsRotating reports whether b starts like a rotating barcode's text.
func IsRotating(b []byte) bool { return bytes.HasPrefix(b, []byte(RotatingPrefix)) }

func isImage(b []byte) bool {
	return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || bytes.HasPrefix(b, []byte("\xff\xd8\xff")) ||
		bytes.HasPrefix(b, []byte("GIF8"))
}
