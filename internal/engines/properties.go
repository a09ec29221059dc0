package engines

import (
	"encoding/base64"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/wallet"
)

// Keys of ticket.ticket.properties the rendering engine reads.
const (
	// PropBarcode holds {"format":"aztec","encoding":"base64url","payload":…}:
	// the signed inspection payload, for clients that draw it themselves.
	PropBarcode = "inspection_barcode"
	// PropBarcodePNG holds "data:image/png;base64,…": the Aztec code of the
	// binary payload, BarcodeModulePixels per module with a quiet zone of
	// BarcodeQuietModules, so the image itself scans (farebox inspect reads it).
	PropBarcodePNG = "inspection_barcode_png"
)

// Geometry of the PNG in PropBarcodePNG. A one-pixel-per-module image
// without a quiet zone (before issue 16) could not be read by any scanner
// or by farebox inspect; 4 modules of white margin are the Aztec minimum
// readers expect.
const (
	BarcodeModulePixels = 4
	BarcodeQuietModules = 4
)

// BarcodeProperty is the value of PropBarcode.
type BarcodeProperty struct {
	Format   string `json:"format"`   // "aztec"
	Encoding string `json:"encoding"` // "base64url" (no padding)
	Payload  string `json:"payload"`  // barcode.Text(payload)
}

// BarcodeProperties returns the entries to merge into ticket.properties for
// a signed inspection payload.
func BarcodeProperties(payload []byte) (map[string]any, error) {
	png, err := barcode.PNG(payload, BarcodeModulePixels, BarcodeQuietModules)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		PropBarcode:    BarcodeProperty{Format: "aztec", Encoding: "base64url", Payload: barcode.Text(payload)},
		PropBarcodePNG: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png),
	}, nil
}

// PropBrand holds the operator's brand for the rendering engine:
// {"organization","operator","foreground","background","label"} (colours
// "#rrggbb") and, with a configured logo, "logo_png" ("data:image/png;base64,…",
// 100 pixels high). The engine draws its header with it; without it (an
// older server) the engine shows farebox's development brand.
const PropBrand = "brand"

// BrandLogoPixels is the height of the engine's logo image: 50 points at 2x.
const BrandLogoPixels = 100

// BrandProperty is the value of PropBrand for b; logoPNG is b's logo already
// drawn BrandLogoPixels high (nil: none).
func BrandProperty(b wallet.Brand, logoPNG []byte) map[string]any {
	m := map[string]any{"organization": b.Organization, "operator": b.Operator,
		"foreground": b.Foreground.Hex(), "background": b.Background.Hex(), "label": b.Label.Hex()}
	if len(logoPNG) > 0 {
		m["logo_png"] = "data:image/png;base64," + base64.StdEncoding.EncodeToString(logoPNG)
	}
	return m
}

// PropDeviceBinding holds, for a ticket of a product with inspection
// profile dynamic (docs/barcodes.md, "Dynamic barcodes"),
// {"url","path","window_seconds","bound"}: where the engine binds the
// ticket to the key it makes in the device (POST, body {"public_key"}),
// and the length of the windows it signs. url is absolute when the
// service knows its public URL, else "" (the engine then resolves path
// against its own location).
const PropDeviceBinding = "device_binding"

// DeviceBindingPath is the bind endpoint of ticket id.
func DeviceBindingPath(id string) string { return "/v9/ticketing/tickets/" + id + "/device.json" }

// DeviceBindingProperty is the value of PropDeviceBinding.
func DeviceBindingProperty(publicURL, ticketID string, windowSeconds int, bound bool) map[string]any {
	path, url := DeviceBindingPath(ticketID), ""
	if publicURL != "" {
		url = publicURL + path
	}
	return map[string]any{"url": url, "path": path, "window_seconds": windowSeconds, "bound": bound}
}
