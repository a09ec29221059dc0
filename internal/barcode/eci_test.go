package barcode

import (
	"bytes"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/barcode/barcodetest"
)

// TestDecodeImageECI: gozxing's Aztec decoder dereferences a nil character
// set for an ECI designator it has no table entry for, such as 899 (binary);
// such a code is reported as unsupported, never a crash. A code without ECI
// drawn by the same test encoder reads back, so the codes are valid.
func TestDecodeImageECI(t *testing.T) {
	data := []byte("farebox \x00\xff binary")
	plain, err := barcodetest.AztecPNG(data, -1, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeImage(plain); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the test encoder's code without ECI: %q %v", got, err)
	}
	// ECI 3 (ISO-8859-1) is known to the decoder and reads back.
	latin, _ := barcodetest.AztecPNG(data, 3, 4)
	if got, err := DecodeImage(latin); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ECI 3: %q %v", got, err)
	}
	for _, eci := range []int{899, 50} {
		img, err := barcodetest.AztecPNG(data, eci, 4)
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range map[string]func([]byte) ([]byte, error){"DecodeImage": DecodeImage, "ParseInput": ParseInput} {
			got, err := f(img)
			if got != nil || apperr.KindOf(err) != apperr.Invalid || apperr.As(err).Code != CodeUnsupportedBarcode ||
				!strings.Contains(err.Error(), "ECI") {
				t.Errorf("ECI %d, %s: %q %v", eci, name, got, err)
			}
		}
	}
}
