package departure

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/mvt"
	"github.com/farebox/farebox/internal/mvt/mvttest"
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
	dec, err := mvttest.Unmarshal(tile.Raw)
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
	// Every vertex is a station's position (shown at this zoom or not),
	// or where the line leaves the tile's buffer.
	fr := mvt.NewTileFrame(uint32(z), uint32(x), uint32(y), tileExtent)
	at := map[mvt.XY]bool{}
	for _, s := range ix.mapData().stations {
		at[mvt.Round([]mvt.P{fr.Project(s.p)})[0]] = true
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

// The culling of far segments (runsNear) and the merging per route give
// exactly the segments of projecting and clipping every vertex of every
// line of the route: one feature per route, each segment once.
func TestTransitTileCullingKeepsGeometry(t *testing.T) {
	ix := index(t, nil, "caltrain", "caltrain-2023.zip", "bart", "bart-2019.zip")
	md := ix.mapData()
	for _, c := range [][3]float64{{14, 37.776404, -122.394911}, {12, 37.803768, -122.271450}, {10, 37.5, -122.25}, {16, 37.776404, -122.394911}, {17, 37.803768, -122.271450}, {3, 37, -122}} {
		z, x, y := tileAt(int(c[0]), c[1], c[2])
		got := decodeTile(t, ix, TransitMap, z, x, y)["lines"].Features
		fr := mvt.NewTileFrame(uint32(z), uint32(x), uint32(y), tileExtent)
		want := map[string]map[[2]mvt.XY]bool{} // feed and route → segments
		for li := range md.lines {
			ln := &md.lines[li]
			var pts []mvt.P
			ln.each(func(p mvt.P) { pts = append(pts, fr.Project(p)) })
			for _, part := range mvt.ClipLine(pts, tileExtent, tileBuffer) {
				if q := mvt.Round(mvt.Simplify(part, tileTolerance)); len(q) >= 2 {
					key := ln.fi.id + "/" + ln.fi.f.Routes[ln.route].ID
					if want[key] == nil {
						want[key] = map[[2]mvt.XY]bool{}
					}
					addSegments(want[key], q)
				}
			}
		}
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("z%d: %d line features, %d routes in the tile", z, len(got), len(want))
		}
		for _, f := range got {
			p := props(f)
			key := p["feed_id"].(string) + "/" + p["route_id"].(string)
			segs := map[[2]mvt.XY]bool{}
			for _, part := range f.Geometry {
				if n := len(segs); addSegments(segs, part) != len(part)-1+n {
					t.Fatalf("z%d %s: a segment drawn twice", z, key)
				}
			}
			if w := want[key]; w == nil || !maps.Equal(segs, w) {
				t.Fatalf("z%d %s: %d segments, projecting every line of the route gives %d", z, key, len(segs), len(w))
			}
			delete(want, key) // a second feature of the route fails above
		}
	}
}

// addSegments adds the undirected segments of a polyline (repeated
// vertices dropped, as the encoder does) and returns how many the set holds.
func addSegments(set map[[2]mvt.XY]bool, part []mvt.XY) int {
	part = dedupXY(part)
	for i := 1; i < len(part); i++ {
		a, b := part[i-1], part[i]
		if b.X < a.X || b.X == a.X && b.Y < a.Y {
			a, b = b, a
		}
		set[[2]mvt.XY{a, b}] = true
	}
	return len(set)
}

// Lines of one route that share track are one feature per tile whose parts
// never repeat a segment. Around Times Sq-42 St the NYC subway's routes run
// on many overlapping shapes each (the 5 has 35 in the feed); before, a
// tile drew one feature per shape: at z14, 200 features for 22 routes.
func TestTransitTileMergesLinesPerRoute(t *testing.T) {
	ix := index(t, nil, "subway", "nyc/subway.zip")
	md := ix.mapData()
	for _, z := range []int{8, 11, 14, 16} {
		zz, x, y := tileAt(z, 40.755477, -73.987691)
		// What the tile was built from: each line (shape) of a route
		// clipped on its own, as the code before merging drew it.
		w := newTileWindow(uint32(zz), uint32(x), uint32(y))
		perShape := map[string]int{}             // route → lines in the tile
		union := map[string]map[[2]mvt.XY]bool{} // route → segments of its lines
		repeats := false
		for li := range md.lines {
			ln := &md.lines[li]
			parts := ln.tileParts(&w)
			if len(parts) == 0 {
				continue
			}
			id := ln.fi.f.Routes[ln.route].ID
			perShape[id]++
			if union[id] == nil {
				union[id] = map[[2]mvt.XY]bool{}
			}
			for _, part := range parts {
				if n := len(union[id]); addSegments(union[id], part) != len(dedupXY(part))-1+n {
					repeats = true
				}
			}
		}
		unmerged := 0
		for _, n := range perShape {
			unmerged += n
		}
		// The tile is a case for merging: the unmerged lines give more
		// features than routes and draw segments more than once.
		if unmerged < 2*len(perShape) || !repeats {
			t.Fatalf("z%d: %d lines of %d routes, repeated segments %v: not a tile where lines overlap", z, unmerged, len(perShape), repeats)
		}

		feats := decodeTile(t, ix, TransitMap, zz, x, y)["lines"].Features
		routes := map[string]bool{}
		for _, f := range feats {
			p := props(f)
			id := p["route_id"].(string)
			if routes[id] {
				t.Fatalf("z%d: route %s has two features", z, id)
			}
			routes[id] = true
			if f.Type != mvt.LineString || len(f.Geometry) == 0 {
				t.Fatalf("z%d: route %s: %v with %d parts", z, id, f.Type, len(f.Geometry))
			}
			segs := map[[2]mvt.XY]bool{}
			for _, part := range f.Geometry {
				if n := len(segs); addSegments(segs, part) != len(part)-1+n {
					t.Fatalf("z%d: route %s draws a segment twice", z, id)
				}
			}
			// Merging drops repeats only: the feature draws every segment
			// of the route's lines.
			if !maps.Equal(segs, union[id]) {
				t.Fatalf("z%d: route %s draws %d segments, its %d lines %d", z, id, len(segs), perShape[id], len(union[id]))
			}
		}
		if len(feats) != len(perShape) {
			t.Fatalf("z%d: %d features for %d routes", z, len(feats), len(perShape))
		}
		t.Logf("z%d: %d features, %d unmerged", z, len(feats), unmerged)
		// Times Sq-42 St: the 1, 2, 3, 7, N, Q, R and W stop there, the
		// A, C and E a block west at 42 St-Port Authority.
		for _, want := range []string{"1", "2", "3", "7", "N", "Q", "R", "W", "A", "C", "E"} {
			if !routes[want] || perShape[want] < 2 {
				t.Errorf("z%d: route %s: feature %v, %d lines (routes %v)", z, want, routes[want], perShape[want], routes)
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

// Below zoom 14 a tile shows in each grid cell (16 × 16 per tile) only the
// most important station of all feeds in that cell, so no tile carries
// more than 18 × 18 stations; from zoom 14 on, every station. Before,
// every tile showed every station inside it (z0: all of them).
func TestStationTilesThinByImportance(t *testing.T) {
	ix := index(t, nil, "subway", "nyc/subway.zip", "mnr", "nyc/metro-north.zip", "caltrain", "caltrain-2023.zip", "bart", "bart-2019.zip", "trimet", "trimet-2routes-2021.zip")
	md := ix.mapData()
	byID := map[string]*mapStation{}
	for i := range md.stations {
		byID[md.stations[i].id] = &md.stations[i]
	}
	for _, c := range [][2]float64{{40.755477, -73.987691}, {40.752998, -73.977056}, {37.776404, -122.394911}, {37.803768, -122.271450}, {45.52, -122.68}} {
		prevShown := map[string]bool{}
		for z := 0; z <= 16; z++ {
			zz, x, y := tileAt(z, c[0], c[1])
			tile, err := ix.Tile(StationMap, zz, x, y)
			if err != nil {
				t.Fatal(err)
			}
			if z <= 13 && len(tile.Raw) > 32<<10 {
				t.Errorf("z%d tile %d/%d: %d bytes", z, x, y, len(tile.Raw))
			}
			feats := decodeTile(t, ix, StationMap, zz, x, y)["stations"].Features
			if z <= 13 && len(feats) > (thinCells+2)*(thinCells+2) {
				t.Errorf("z%d: %d stations", z, len(feats))
			}
			fr := mvt.NewTileFrame(uint32(zz), uint32(x), uint32(y), tileExtent)
			minX, minY, maxX, maxY := fr.WorldBounds(tileBuffer)
			shown := map[string]bool{}
			cells := map[[2]int64]string{}
			n := float64(int64(thinCells) << z)
			for _, f := range feats {
				id := props(f)["id"].(string)
				s := byID[id]
				shown[id] = true
				cell := [2]int64{int64(s.p.X * n), int64(s.p.Y * n)}
				if other, dup := cells[cell]; dup && z <= 13 {
					t.Fatalf("z%d: %s and %s share a grid cell", z, id, other)
				}
				cells[cell] = id
			}
			// Every station in the tile is shown, or a more important one
			// of its cell is; every station of the zoom before still is.
			for i := range md.stations {
				s := &md.stations[i]
				if s.p.X < minX || s.p.X > maxX || s.p.Y < minY || s.p.Y > maxY {
					continue
				}
				if prevShown[s.id] && !shown[s.id] {
					t.Fatalf("z%d: %s shown at z%d but not here", z, s.id, z-1)
				}
				if shown[s.id] {
					continue
				}
				if z > 13 {
					t.Fatalf("z%d: %s not shown", z, s.id)
				}
				cell := [2]int64{int64(s.p.X * n), int64(s.p.Y * n)}
				best, ok := cells[cell]
				if !ok {
					// Its cell's best lies outside the buffer: then so would s,
					// unless the cell straddles the buffer's edge.
					continue
				}
				if moreImportant(byID[best], s) > 0 {
					t.Fatalf("z%d: %s is shown in place of the more important %s", z, best, s.id)
				}
			}
			prevShown = shown
		}
	}
	// Departures (boarding stop times, all service days) decide among rail
	// and subway stations, across feeds. Metro-North's Harlem-125 St, where
	// nearly every Metro-North train stops in both directions (26733), beats
	// every other of the 527 stations of its z0 cell (all of both feeds
	// south of 40.98° N, the row's edge): shown from z0. Stamford (12569),
	// 7 km north of that edge, is the busiest station of the cell north of
	// it: z0 too. Grand Central (20365: only trains leaving the terminus
	// count) shares Harlem-125 St's cell up to z7 (6.6 km apart) and heads
	// its own from z8. The subway's Times Sq-42 St of the 1/2/3 (2753) is
	// in Grand Central's cell up to z9 (915 m apart) and the busiest of its
	// own from z10. The subway's Grand Central-42 St (2738), 137 m from
	// Metro-North's, shares a cell with it through z13: only z14, where
	// every station is shown, shows it.
	for id, want := range map[string]uint32{"farebox-station-mnr_4": 0, "farebox-station-mnr_124": 0, "farebox-station-mnr_1": 8,
		"farebox-station-subway_127": 10, "farebox-station-subway_631": 14} {
		if s := byID[id]; s == nil || s.minZoom != want {
			t.Errorf("%s: %+v, want min zoom %d", id, s, want)
		}
	}
}
