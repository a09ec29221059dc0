package gtfs

import (
	"bytes"
	"testing"
)

func BenchmarkParseWMATA(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		mustParse(b, "wmata-rail-2026.zip")
	}
}

func BenchmarkDecodeWMATA(b *testing.B) {
	f := mustParse(b, "wmata-rail-2026.zip")
	var buf bytes.Buffer
	if err := f.Encode(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
