package departure

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/mvt"
)

// tileAt is the tile z/x/y holding (lat, lon).
func tileAt(z int, lat, lon float64) (int64, int64, int64) {
	p := mvt.World(lat, lon)
	n := math.Ldexp(1, z)
	return int64(z), int64(p.X * n), int64(p.Y * n)
}

func decodeTile(t *testing.T, ix *Index, kind MapKind, z, x, y int64) map[string]mvt.Layer {
	t.Helper()
	tile, err := ix.Tile(kind, z, x, y)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(tile.Gzip))
	if err != nil {
		t.Fatal(err)
	}
	unz, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unz, tile.Raw) {
		t.Fatalf("the gzip tile is not the raw tile compressed (%v)", err)
	}
	dec, err := mvt.Unmarshal(tile.Raw)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]mvt.Layer{}
	for _, l := range dec.Layers {
		out[l.Name] = l
	}
	return out
}

func props(f mvt.Feature) map[string]any {
	m := map[string]any{}
	for _, p := range f.Props {
		m[p.Key] = p.Value
	}
	return m
}

// checkInside fails when a vertex lies outside the tile and its buffer.
func checkInside(t *testing.T, l mvt.Layer) {
	t.Helper()
	for _, f := range l.Features {
		for _, part := range f.Geometry {
			for _, p := range part {
				if p.X < -tileBuffer || p.X > tileExtent+tileBuffer || p.Y < -tileBuffer || p.Y > tileExtent+tileBuffer {
					t.Fatalf("layer %s: vertex %v outside the buffer", l.Name, p)
				}
			}
		}
	}
}

func TestStationAndTransitTilesCaltrain(t *testing.T) {
	ix := index(t, nil, "caltrain", "caltrain-2023.zip")
	z, x, y := tileAt(13, 37.776404, -122.394911)
	st := decodeTile(t, ix, StationMap, z, x, y)
	if len(st) != 1 || len(st["stations"].Features) == 0 {
		t.Fatalf("station map layers %v", st)
	}
	checkInside(t, st["stations"])
	var sf map[string]any
	for _, f := range st["stations"].Features {
		if p := props(f); p["id"] == "farebox-station-caltrain_san_francisco" {
			sf = p
			if f.Type != mvt.Point || len(f.Geometry) != 1 || len(f.Geometry[0]) != 1 {
				t.Fatalf("station geometry %+v", f)
			}
		}
	}
	if sf == nil {
		t.Fatal("San Francisco is not on its z13 tile")
	}
	if sf["name"] != "San Francisco Caltrain Station" || sf["kind"] != "rail" || sf["feed_id"] != "caltrain" ||
		!strings.Contains(sf["lines"].(string), "L1") {
		t.Fatalf("San Francisco props %v", sf)
	}
	// The station id is the one the API answers to.
	if _, err := ix.StationByID(sf["id"].(string)); err != nil {
		t.Fatalf("the tile's station id is unknown to the API: %v", err)
	}

	tr := decodeTile(t, ix, TransitMap, z, x, y)
	lines := tr["lines"]
	if len(tr) != 2 || len(lines.Features) == 0 || len(tr["stations"].Features) != len(st["stations"].Features) {
		t.Fatalf("transit map: %d layers, %d lines", len(tr), len(lines.Features))
	}
	checkInside(t, lines)
	for _, f := range lines.Features {
		p := props(f)
		if f.Type != mvt.LineString || p["route_type"] != int64(2) || p["kind"] != "rail" || len(p["color"].(string)) != 7 || p["line_name"] == "" {
			t.Fatalf("line feature %v %v", f.Type, p)
		}
	}
}

// Zooming out simplifies: the whole line at z8 has far fewer vertices
// than the shape, and every shape vertex at z18 survives clipping only
// near its tile.
func TestTransitTileSimplifiesPerZoom(t *testing.T) {
	ix := index(t, nil, "caltrain", "caltrain-2023.zip")
	count := func(z int) int {
		zz, x, y := tileAt(z, 37.5, -122.25)
		n := 0
		for _, f := range decodeTile(t, ix, TransitMap, zz, x, y)["lines"].Features {
			for _, p := range f.Geometry {
				n += len(p)
			}
		}
		return n
	}
	f := ix.feeds[0].f
	total := len(f.Shapes.Lat)
	if c8 := count(8); c8 == 0 || c8*5 > total {
		t.Fatalf("z8 keeps %d of %d shape points", c8, total)
	}
	if c14, c8 := count(14), count(8); c14 == 0 || c14 == c8 {
		t.Fatalf("z14 keeps %d points, z8 %d", c14, c8)
	}
}

// Without shapes.txt the lines follow the stop sequence.
func TestTransitTileWithoutShapes(t *testing.T) {
	f := *feed(t, "caltrain-2023.zip")
	f.Trips.Shape = nil
	ix, err := New([]FeedInput{{ID: "caltrain", Feed: &f}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	z, x, y := tileAt(9, 37.5, -122.25)
	lines := decodeTile(t, ix, TransitMap, z, x, y)["lines"]
	if len(lines.Features) == 0 {
		t.Fatal("no lines without shapes")
	}
	// Every vertex is a station's position, or where the line leaves the
	// tile's buffer.
	st := decodeTile(t, ix, StationMap, z, x, y)["stations"]
	at := map[mvt.XY]bool{}
	for _, s := range st.Features {
		at[s.Geometry[0][0]] = true
	}
	for _, l := range lines.Features {
		for _, part := range l.Geometry {
			for _, p := range part {
				edge := p.X == -tileBuffer || p.Y == -tileBuffer || p.X == tileExtent+tileBuffer || p.Y == tileExtent+tileBuffer
				if !at[p] && !edge {
					t.Fatalf("vertex %v is no station", p)
				}
			}
		}
	}
}

func TestTileCacheAndBadInput(t *testing.T) {
	ix := index(t, nil, "caltrain", "caltrain-2023.zip")
	a, _ := ix.Tile(TransitMap, 10, 163, 396)
	b, _ := ix.Tile(TransitMap, 10, 163, 396)
	if &a.Raw[0] != &b.Raw[0] || ix.TileCacheLen() != 1 {
		t.Fatalf("the second request was not served from the cache (%d cached)", ix.TileCacheLen())
	}
	if _, err := ix.Tile(StationMap, 10, 163, 396); err != nil || ix.TileCacheLen() != 2 {
		t.Fatalf("station map shares the transit map's entry: %v, %d cached", err, ix.TileCacheLen())
	}
	// Extremes: the last tile of z22 is valid (and empty), one past is not.
	if _, err := ix.Tile(StationMap, 22, 1<<22-1, 1<<22-1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		z, x, y int64
		field   string
	}{{23, 0, 0, "z"}, {-1, 0, 0, "z"}, {0, 1, 0, "x"}, {0, 0, 1, "y"}, {22, 1 << 22, 0, "x"}, {3, 0, -1, "y"}, {1, -1, 0, "x"}} {
		_, err := ix.Tile(StationMap, c.z, c.x, c.y)
		var e *apperr.Error
		if !errors.As(err, &e) || e.Kind != apperr.Invalid || len(e.Details) != 1 || e.Details[0].Field != c.field {
			t.Errorf("%d/%d/%d: %v, want an invalid %s", c.z, c.x, c.y, err, c.field)
		}
	}
}

func TestTileCacheIsBounded(t *testing.T) {
	c := newTileCache(1000)
	for i := 0; i < 100; i++ {
		c.put(tileKey{StationMap, 5, uint32(i), 0}, MapTile{Raw: make([]byte, 100), Gzip: make([]byte, 50)})
	}
	if c.size > 1000 || c.ll.Len() != 1000/(150+64) {
		t.Fatalf("cache holds %d bytes in %d tiles", c.size, c.ll.Len())
	}
	if _, ok := c.get(tileKey{StationMap, 5, 99, 0}); !ok {
		t.Fatal("the newest tile was evicted")
	}
	if _, ok := c.get(tileKey{StationMap, 5, 0, 0}); ok {
		t.Fatal("the oldest tile was kept")
	}
	off := newTileCache(-1)
	off.put(tileKey{}, MapTile{Raw: []byte{1}})
	if _, ok := off.get(tileKey{}); ok {
		t.Fatal("a disabled cache kept a tile")
	}
}

// The culling of far segments (runsNear) gives exactly the geometry of
// projecting and clipping every vertex.
func TestTransitTileCullingKeepsGeometry(t *testing.T) {
	ix := index(t, nil, "caltrain", "caltrain-2023.zip", "bart", "bart-2019.zip")
	md := ix.mapData()
	for _, c := range [][3]float64{{14, 37.776404, -122.394911}, {12, 37.803768, -122.271450}, {10, 37.5, -122.25}, {16, 37.776404, -122.394911}, {17, 37.803768, -122.271450}, {3, 37, -122}} {
		z, x, y := tileAt(int(c[0]), c[1], c[2])
		got := decodeTile(t, ix, TransitMap, z, x, y)["lines"].Features
		fr := mvt.NewTileFrame(uint32(z), uint32(x), uint32(y), tileExtent)
		var want [][][]mvt.XY
		for li := range md.lines {
			var pts []mvt.P
			md.lines[li].each(func(p mvt.P) { pts = append(pts, fr.Project(p)) })
			var parts [][]mvt.XY
			for _, part := range mvt.ClipLine(pts, tileExtent, tileBuffer) {
				if q := mvt.Round(mvt.Simplify(part, tileTolerance)); len(q) >= 2 {
					parts = append(parts, q)
				}
			}
			if len(parts) > 0 {
				want = append(want, parts)
			}
		}
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("z%d: %d line features, projecting everything gives %d", z, len(got), len(want))
		}
		for i := range got {
			// The encoder drops repeated vertices.
			for k := range want[i] {
				want[i][k] = dedupXY(want[i][k])
			}
			if !equalParts(got[i].Geometry, want[i]) {
				t.Fatalf("z%d line %d: %v, want %v", z, i, got[i].Geometry, want[i])
			}
		}
	}
}

func dedupXY(p []mvt.XY) []mvt.XY {
	out := p[:1]
	for _, q := range p[1:] {
		if q != out[len(out)-1] {
			out = append(out, q)
		}
	}
	return out
}

func equalParts(a, b [][]mvt.XY) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}
