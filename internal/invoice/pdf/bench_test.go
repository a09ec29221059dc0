package pdf

import (
	"testing"

	"github.com/farebox/farebox/internal/invoice/invoicetest"
	"github.com/farebox/farebox/internal/invoice/xrechnung"
)

// BenchmarkRender renders the collection-with-splits invoice (one page,
// Factur-X attachment). The CII encoding is done once outside the loop.
func BenchmarkRender(b *testing.B) {
	d := invoicetest.CollectionSplits()
	cii, err := xrechnung.EncodeCII(d)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(d, cii); err != nil {
			b.Fatal(err)
		}
	}
}
