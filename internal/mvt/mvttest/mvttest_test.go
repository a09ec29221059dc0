package mvttest_test

import (
	"math"
	"testing"

	"github.com/farebox/farebox/internal/mvt"
	"github.com/farebox/farebox/internal/mvt/mvttest"
	"github.com/farebox/farebox/internal/testtool"
	"github.com/google/go-cmp/cmp"
)

func TestRoundTrip(t *testing.T) {
	in := &mvt.Tile{Layers: []mvt.Layer{
		{Name: "lines", Extent: 4096, Features: []mvt.Feature{
			{ID: 7, HasID: true, Type: mvt.LineString, Geometry: [][]mvt.XY{{{X: 0, Y: 0}, {X: 10, Y: 5}, {X: -3, Y: 4200}}, {{X: 100, Y: 100}, {X: 101, Y: 99}}},
				Props: []mvt.Prop{{Key: "name", Value: "Ä-Linie ✓"}, {Key: "route_type", Value: int64(3)}, {Key: "neg", Value: int64(-42)}, {Key: "big", Value: uint64(math.MaxUint64)},
					{Key: "ratio", Value: 0.25}, {Key: "f", Value: float32(1.5)}, {Key: "ok", Value: true}}},
			{Type: mvt.LineString, Geometry: [][]mvt.XY{{{X: 5, Y: 5}, {X: 5, Y: 5}, {X: 6, Y: 6}}}, Props: []mvt.Prop{{Key: "name", Value: "Ä-Linie ✓"}, {Key: "ok", Value: false}}},
		}},
		{Name: "stations", Extent: 512, Features: []mvt.Feature{
			{Type: mvt.Point, Geometry: [][]mvt.XY{{{X: 1, Y: 2}, {X: -64, Y: 4160}}}, Props: []mvt.Prop{{Key: "id", Value: "farebox-station-x_1"}}},
		}},
	}}
	b := testtool.Must(mvt.Marshal(in))(t)
	out := testtool.Must(mvttest.Unmarshal(b))(t)
	// The duplicate vertex is dropped on the wire.
	in.Layers[0].Features[1].Geometry = [][]mvt.XY{{{X: 5, Y: 5}, {X: 6, Y: 6}}}
	if d := cmp.Diff(in, out); d != "" {
		t.Fatalf("round trip differs (-in +out):\n%s", d)
	}
	// Keys and values are shared within a layer: "name" and "Ä-Linie ✓"
	// appear once each in the bytes.
	if n := countSub(b, "Ä-Linie ✓"); n != 1 {
		t.Errorf("the shared value is written %d times, want 1", n)
	}
}

func countSub(b []byte, s string) int {
	n := 0
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			n++
		}
	}
	return n
}

func TestMarshalSkipsEmptyGeometryAndRejectsBadValues(t *testing.T) {
	b, err := mvt.Marshal(&mvt.Tile{Layers: []mvt.Layer{{Name: "l", Features: []mvt.Feature{
		{Type: mvt.LineString, Geometry: [][]mvt.XY{{{X: 1, Y: 1}}}},               // one point: no line
		{Type: mvt.LineString, Geometry: [][]mvt.XY{{{X: 1, Y: 1}, {X: 1, Y: 1}}}}, // zero length
		{Type: mvt.Point},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := mvttest.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Layers) != 1 || len(out.Layers[0].Features) != 0 || out.Layers[0].Extent != mvt.DefaultExtent {
		t.Fatalf("got %+v, want one empty layer with the default extent", out.Layers)
	}
	if _, err := mvt.Marshal(&mvt.Tile{Layers: []mvt.Layer{{Name: "l", Features: []mvt.Feature{{Type: mvt.Point, Geometry: [][]mvt.XY{{{X: 0, Y: 0}}},
		Props: []mvt.Prop{{Key: "x", Value: []int{1}}}}}}}}); err == nil {
		t.Fatal("a slice value was accepted")
	}
	if _, err := mvt.Marshal(&mvt.Tile{Layers: []mvt.Layer{{}}}); err == nil {
		t.Fatal("a layer without a name was accepted")
	}
	if _, err := mvttest.Unmarshal([]byte{0x1a, 0x05, 0x01}); err == nil {
		t.Fatal("truncated bytes decoded")
	}
}
