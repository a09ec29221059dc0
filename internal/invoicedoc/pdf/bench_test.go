package pdf

import (
	"testing"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
	"github.com/farebox/farebox/internal/invoicedoc/xrechnung"
)

// BenchmarkRender renders the collection-with-splits invoice (one page,
// Factur-X attachment). The CII encoding is done once outside the loop.
func BenchmarkRender(b *testing.B) {
	benchRender(b, invoicetest.CollectionSplits())
}

// BenchmarkRenderScripts renders the collection-with-splits invoice with
// an Arabic address line and notes in Hebrew, CJK, Greek, Cyrillic, emoji
// and mathematical letters (text.go's path, fallback fonts subset).
func BenchmarkRenderScripts(b *testing.B) {
	d := invoicetest.CollectionSplits()
	d.Buyer.AddressLines[0] = "شركة النقل العام"
	d.Texts.Notes = "הערה 12 · 東京 中文 · Ελληνικά · Русский · 😀 · 𝔘𝔫𝔦\nمدينة الرياض، شارع الملك فهد 12"
	benchRender(b, d)
}

// benchRender renders d with its Factur-X attachment, encoded once outside
// the loop.
func benchRender(b *testing.B, d *invoicedoc.Document) {
	cii := mustCII(b, d)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(d, cii); err != nil {
			b.Fatal(err)
		}
	}
}

// notesText is n characters of invoice-like German text; without spaces it
// is one unbroken word.
func notesText(n int, spaces bool) string {
	const words = "Fahrkarte Verkehrsverbund Monatskarte Zahlungsaufforderung Beispielstadt Haltestelle "
	var b []rune
	for len(b) < n {
		for _, r := range words {
			if len(b) == n {
				break
			}
			if r == ' ' && !spaces {
				r = 'x'
			}
			b = append(b, r)
		}
	}
	return string(b)
}

// BenchmarkNotes renders an ordinary invoice with notes of growing length,
// with and without spaces: the cost per character stays the same.
func BenchmarkNotes(b *testing.B) {
	for _, spaces := range []bool{true, false} {
		for _, n := range []int{500, 1000, 2000, 5000} {
			name := "words"
			if !spaces {
				name = "unbroken"
			}
			b.Run(name+"-"+itoa(n), func(b *testing.B) {
				d := invoicetest.SingleCustomer()
				d.Texts.Notes = notesText(n, spaces)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Render(d, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkLargest renders the largest allowed invoice: every text at its
// maximum length (with and without spaces), 100 items with 255-character
// names, split participants and a 200-character buyer reference.
func BenchmarkLargest(b *testing.B) {
	for _, spaces := range []bool{true, false} {
		name := "words"
		if !spaces {
			name = "unbroken"
		}
		b.Run(name, func(b *testing.B) {
			benchRender(b, extremeDoc(spaces))
		})
	}
}

// mustCII is d's CII encoding, the Factur-X attachment of its PDF.
func mustCII(tb testing.TB, d *invoicedoc.Document) []byte {
	tb.Helper()
	cii, err := xrechnung.EncodeCII(d)
	if err != nil {
		tb.Fatal(err)
	}
	return cii
}
