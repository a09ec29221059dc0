package uic

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/barcodetest"
)

// TestKitineraryReadsOurBarcodes hands KDE Itinerary, an independent
// decoder of railway barcodes, farebox's UIC barcodes as the raw container
// and as the Aztec PNG a wallet shows, for both container versions, and
// checks the traveller, validity, product and issuer it extracts.
func TestKitineraryReadsOurBarcodes(t *testing.T) {
	dir := t.TempDir()
	c := sampleClaims()
	// 10:30 Berlin time: shows how 22.12 reads FCB times (below).
	c.ValidFrom = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	for _, version := range []int{1, 2} {
		b, err := Issue(c, Product{Number: 9999, Area: "Deutschland"}, devIssuer(t, version), issued)
		if err != nil {
			t.Fatal(err)
		}
		img, err := barcode.PNG(b, 4, 4)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{"raw.bin": b, "aztec.png": img} {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			res := barcodetest.Kitinerary(t, path)
			if len(res) != 1 {
				t.Fatalf("v%d %s: %d results, want one ticket", version, name, len(res))
			}
			k := res[0]
			if k.Type != "Ticket" || k.Name != c.ProductName || k.UnderName.GivenName != c.FirstName ||
				k.UnderName.FamilyName != c.LastName || k.IssuedBy.Identifier != "uic:9999" ||
				k.IssuedBy.Name != "farebox development" || k.TicketNumber != "4A6B9C8D7E6F5A4B3C2D" {
				t.Errorf("v%d %s: extracted %+v", version, name, k)
			}
			// Dates are exact. KDE Itinerary 22.12 reads FCB validity times
			// (minutes of the day) as seconds: 10:30 comes out as 00:10:30
			// and 23:59 as 00:23:59. We assert exactly that reading, so a
			// fixed version makes this test name the change.
			if k.ValidFrom != "2026-12-01T00:10:30+01:00" || k.ValidUntil != "2026-12-31T00:23:59+01:00" {
				t.Errorf("v%d %s: validity %s .. %s", version, name, k.ValidFrom, k.ValidUntil)
			}
		}
	}
}
