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

// BenchmarkParseFeeds parses (and encodes, as an import does) the feeds
// the suite has without the shared folder: BART and the NYC subway
// (tools/testdata). bench/guard.sh runs it in CI.
func BenchmarkParseFeeds(b *testing.B) {
	for _, name := range []string{"bart-2019.zip", "nyc/subway.zip"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				f := mustParse(b, name)
				var buf bytes.Buffer
				if err := f.Encode(&buf); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
			}
			b.ReportMetric(float64(size), "snapshot-bytes")
		})
	}
}
