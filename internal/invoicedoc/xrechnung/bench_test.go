package xrechnung

import (
	"testing"

	"github.com/farebox/farebox/internal/invoicedoc/invoicetest"
)

func BenchmarkEncodeUBL(b *testing.B) {
	d := invoicetest.CollectionSplits()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeUBL(d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCII(b *testing.B) {
	d := invoicetest.CollectionSplits()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeCII(d); err != nil {
			b.Fatal(err)
		}
	}
}
