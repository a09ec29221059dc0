package xrechnung

import (
	"testing"

	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
)

func BenchmarkEncodeUBL(b *testing.B) { benchEncode(b, EncodeUBL) }

func BenchmarkEncodeCII(b *testing.B) { benchEncode(b, EncodeCII) }

// benchEncode measures one encoder on the collection invoice with splits.
func benchEncode(b *testing.B, encode func(*invoicedoc.Document) ([]byte, error)) {
	d := invoicetest.CollectionSplits()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encode(d); err != nil {
			b.Fatal(err)
		}
	}
}
