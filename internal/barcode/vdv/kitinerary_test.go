package vdv

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/barcodetest"
)

// TestKitinerarySeesOurBarcodes: KDE Itinerary 22.12 has a VDV decoder
// but decodes a ticket only when the CA named by the barcode's CAR is among
// the VDV CA certificates it ships (it recovers the organisation
// certificate with that CA's key, then the ticket). For farebox's
// barcodes, signed under a development or any not-yet-VDV-issued chain,
// it recognises the format (signature, remainder, certificate, CAR),
// reads the CAR exactly as farebox wrote it, looks the CA up and stops
// with an empty result. Both the raw bytes and the Aztec PNG are checked.
func TestKitinerarySeesOurBarcodes(t *testing.T) {
	dir := t.TempDir()
	for name, iss := range map[string]*Issuer{"live": func() *Issuer { i, _ := livePKI(t); return i }(), "dev": sharedDev(t).Issuer} {
		b, err := Issue(sampleClaims(), dticket, iss, issued)
		if err != nil {
			t.Fatal(err)
		}
		img, err := barcode.PNG(b, 4, 4)
		if err != nil {
			t.Fatal(err)
		}
		car := strings.ToUpper(hex.EncodeToString(iss.Info.CAR[:]))
		for kind, data := range map[string][]byte{"raw": b, "png": img} {
			f := filepath.Join(dir, name+"."+kind)
			if err := os.WriteFile(f, data, 0o600); err != nil {
				t.Fatal(err)
			}
			res, log := barcodetest.KitineraryLog(t, f)
			if len(res) != 0 {
				t.Errorf("%s %s: KDE Itinerary decoded %+v without the CA certificate", name, kind, res)
			}
			if !strings.Contains(log, "found encrypted key") || !strings.Contains(strings.ToUpper(log), "COULD NOT FIND CA CERTIFICATE \""+car+"\"") {
				t.Errorf("%s %s: KDE Itinerary did not read the barcode as VDV up to the CA lookup of %s:\n%s", name, kind, car, log)
			}
		}
	}
}
