package departure

import (
	"bytes"
	"compress/gzip"
	"container/list"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/mvt"
)

// Vector tiles of the feeds (docs/maps.md): the station map has one layer
// "stations" (points), the transit map a layer "lines" (the routes' shapes
// or, without shapes.txt, their stop sequences) under the same stations.
// The map data is gathered once per index on the first tile; tiles are
// cached per index (a reloaded feed builds a new index, so its tiles can
// never be stale).

// MapKind selects a tile source.
type MapKind uint8

// Tile sources.
const (
	StationMap MapKind = iota
	TransitMap
)

// MaxZoom is the deepest zoom level served.
const MaxZoom = 22

// Tile geometry: units per side, the buffer kept around the tile (so lines
// and station symbols continue across tile edges) and the Douglas–Peucker
// tolerance, all in tile units (4096 per side: a 512-pixel tile has 8
// units per pixel, so the tolerance is half a pixel).
const (
	tileExtent    = mvt.DefaultExtent
	tileBuffer    = 128
	tileTolerance = 4
)

// DefaultTileCacheBytes caps the tile cache of an index.
const DefaultTileCacheBytes = 64 << 20

// MapTile is an encoded tile, plain and gzip-compressed.
type MapTile struct {
	Raw, Gzip []byte
}

type mapStation struct {
	p                   mvt.P
	id, name, kind, lns string
	feed                string
	// Importance (thinStations): guided before bus-only, then departures,
	// then routes; minZoom is the first zoom whose tiles show the station.
	bus           bool
	deps, nroutes int
	minZoom       uint32
}

// Station thinning (docs/maps.md "Thinning"): below thinMaxZoom+1 the
// world is divided, per zoom, into a grid of thinCells × thinCells cells
// per tile, aligned to the tiles, and a tile shows in each cell only its
// most important station. A tile therefore carries at most
// (thinCells+2)² stations (its cells and those its buffer reaches),
// whatever the zoom, and neighbouring tiles agree on what is shown.
const (
	thinCells   = 16 // cells per tile side: 32 pixels of a 512-pixel tile
	thinMaxZoom = 13 // from zoom 14 on every station is shown
)

type mapLine struct {
	fi                     *feedIndex
	route                  int32
	shape                  int32   // shape index, or -1: stops holds the stop sequence
	stops                  []int32 // stop indices when shape < 0
	minX, minY, maxX, maxY float64 // world bounds
}

// mapRoute is one route's lines: a tile draws them as one feature.
type mapRoute struct {
	fi                     *feedIndex
	route                  int32
	lines                  []int32 // into mapData.lines
	minX, minY, maxX, maxY float64 // world bounds of all its lines
}

type mapData struct {
	stations []mapStation
	lines    []mapLine
	routes   []mapRoute // in feed order, then routes.txt order
}

// kindRank orders the vehicle kinds a station shows as its own kind: the
// "biggest" mode stopping there.
var kindRank = map[string]int{"rail": 0, "subway": 1, "tram": 2, "ferry": 3, "funicular": 4, "aerial": 5, "bus": 6, "other": 7}

func (ix *Index) mapData() *mapData {
	ix.mapOnce.Do(func() { ix.maps = ix.buildMapData() })
	return ix.maps
}

func (ix *Index) buildMapData() *mapData {
	md := &mapData{}
	for _, fi := range ix.feeds {
		f := fi.f
		// routes per station
		routes := map[int32]map[int32]bool{}
		seen := map[string]bool{}
		for t := 0; t < f.Trips.Len(); t++ {
			r := f.Trips.Route[t]
			lo, hi := f.Trips.First[t], f.Trips.First[t+1]
			for i := lo; i < hi; i++ {
				st := fi.stationOf(f.StopTimes.Stop[i])
				if routes[st] == nil {
					routes[st] = map[int32]bool{}
				}
				routes[st][r] = true
			}
			if hi-lo < 2 {
				continue
			}
			sh := int32(-1)
			if f.Trips.Shape != nil {
				sh = f.Trips.Shape[t]
			}
			var key string
			var stops []int32
			if sh >= 0 {
				key = "s" + strconv.Itoa(int(sh)) + "r" + strconv.Itoa(int(r))
			} else {
				stops = make([]int32, 0, hi-lo)
				var b strings.Builder
				b.WriteString("r" + strconv.Itoa(int(r)))
				for i := lo; i < hi; i++ {
					s := fi.stationOf(f.StopTimes.Stop[i])
					stops = append(stops, s)
					b.WriteString("," + strconv.Itoa(int(s)))
				}
				key = b.String()
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			ln := mapLine{fi: fi, route: r, shape: sh, stops: stops, minX: math.Inf(1), minY: math.Inf(1), maxX: math.Inf(-1), maxY: math.Inf(-1)}
			ln.each(func(p mvt.P) {
				ln.minX, ln.minY = min(ln.minX, p.X), min(ln.minY, p.Y)
				ln.maxX, ln.maxY = max(ln.maxX, p.X), max(ln.maxY, p.Y)
			})
			md.lines = append(md.lines, ln)
		}
		md.groupRoutes(fi)
		for _, se := range ix.stations {
			if se.fi != fi {
				continue
			}
			var names []string
			kind := "other"
			rs := make([]int32, 0, len(routes[se.stop]))
			for r := range routes[se.stop] {
				rs = append(rs, r)
			}
			sort.Slice(rs, func(a, b int) bool { return rs[a] < rs[b] })
			dup := map[string]bool{}
			for _, r := range rs {
				if n := fi.lineName[r]; !dup[n] {
					dup[n] = true
					names = append(names, n)
				}
				if k := fi.tripType[r].Kind; kindRank[k] < kindRank[kind] {
					kind = k
				}
			}
			deps := 0
			for _, st := range fi.departStops(se.stop) {
				deps += int(fi.evStart[st+1]-fi.evStart[st]) + int(fi.fqStart[st+1]-fi.fqStart[st])
			}
			s := &f.Stops
			md.stations = append(md.stations, mapStation{p: mvt.World(s.Lat[se.stop], s.Lon[se.stop]), id: se.id, name: s.Name[se.stop],
				kind: kind, lns: strings.Join(names, ","), feed: fi.id, bus: kind == "bus" || kind == "other", deps: deps, nroutes: len(rs)})
		}
	}
	md.thinStations()
	return md
}

// moreImportant orders stations for thinning: stations of rail, subway,
// tram, ferry, funicular or aerial lines before the rest (kind bus or
// other: served by buses, by lines of kind other, or by nothing), then
// more departures (timetable stop times from the
// station and its platforms, all service days together; a frequency-based
// trip counts once per stop), then more routes, then the station id.
func moreImportant(a, b *mapStation) int {
	if a.bus != b.bus {
		if b.bus {
			return -1
		}
		return 1
	}
	if a.deps != b.deps {
		return b.deps - a.deps
	}
	if a.nroutes != b.nroutes {
		return b.nroutes - a.nroutes
	}
	return strings.Compare(a.id, b.id)
}

// thinStations sets every station's minZoom: the first zoom at which it is
// the most important station of its grid cell. A zoom's cells split into
// four at the next, so a station shown at a zoom is shown at every deeper
// one.
func (md *mapData) thinStations() {
	order := make([]int, len(md.stations))
	for i := range order {
		order[i] = i
		md.stations[i].minZoom = thinMaxZoom + 1
	}
	sort.SliceStable(order, func(a, b int) bool { return moreImportant(&md.stations[order[a]], &md.stations[order[b]]) < 0 })
	for z := uint32(0); z <= thinMaxZoom; z++ {
		n := float64(uint64(thinCells) << z) // cells per world side
		taken := make(map[[2]int64]bool)
		for _, i := range order {
			s := &md.stations[i]
			cell := [2]int64{int64(s.p.X * n), int64(s.p.Y * n)}
			if taken[cell] {
				continue
			}
			taken[cell] = true
			s.minZoom = min(s.minZoom, z)
		}
	}
}

// groupRoutes adds the routes of fi's lines (the lines of fi are the last
// ones gathered) in routes.txt order.
func (md *mapData) groupRoutes(fi *feedIndex) {
	byRoute := map[int32][]int32{}
	for li := range md.lines {
		if md.lines[li].fi == fi {
			r := md.lines[li].route
			byRoute[r] = append(byRoute[r], int32(li))
		}
	}
	for r := range fi.f.Routes {
		lines := byRoute[int32(r)]
		if len(lines) == 0 {
			continue
		}
		mr := mapRoute{fi: fi, route: int32(r), lines: lines, minX: math.Inf(1), minY: math.Inf(1), maxX: math.Inf(-1), maxY: math.Inf(-1)}
		for _, li := range lines {
			ln := &md.lines[li]
			mr.minX, mr.minY = min(mr.minX, ln.minX), min(mr.minY, ln.minY)
			mr.maxX, mr.maxY = max(mr.maxX, ln.maxX), max(mr.maxY, ln.maxY)
		}
		md.routes = append(md.routes, mr)
	}
}

// mergeParts is the parts of one route's lines without repeats: every
// segment (two consecutive vertices, in either direction) is kept the
// first time it occurs, so lines that share track (the shapes of one route's
// trips often overlap entirely) draw it once; a part is cut where it runs
// over segments already drawn.
func mergeParts(parts [][]mvt.XY) [][]mvt.XY {
	type seg struct{ a, b mvt.XY }
	seen := make(map[seg]bool)
	var out [][]mvt.XY
	for _, part := range parts {
		var cur []mvt.XY
		for i := 1; i < len(part); i++ {
			a, b := part[i-1], part[i]
			if a == b {
				continue
			}
			k := seg{a, b}
			if b.X < a.X || b.X == a.X && b.Y < a.Y {
				k = seg{b, a}
			}
			if seen[k] {
				if len(cur) >= 2 {
					out = append(out, cur)
				}
				cur = nil
				continue
			}
			seen[k] = true
			if len(cur) == 0 {
				cur = append(cur, a)
			}
			cur = append(cur, b)
		}
		if len(cur) >= 2 {
			out = append(out, cur)
		}
	}
	return out
}

// each calls fn with every vertex of the line in world coordinates.
func (ln *mapLine) each(fn func(mvt.P)) {
	ln.eachLatLon(func(lat, lon float64) { fn(mvt.World(lat, lon)) })
}

// eachLatLon calls fn with every vertex of the line in degrees.
func (ln *mapLine) eachLatLon(fn func(lat, lon float64)) {
	f := ln.fi.f
	if ln.shape >= 0 {
		sh := &f.Shapes
		for i := sh.First[ln.shape]; i < sh.First[ln.shape+1]; i++ {
			fn(float64(sh.Lat[i])*1e-7, float64(sh.Lon[i])*1e-7)
		}
		return
	}
	for _, s := range ln.stops {
		fn(f.Stops.Lat[s], f.Stops.Lon[s])
	}
}

// runsNear cuts the line into the runs of segments that may cross the
// tile's buffered square (lonLo..lonHi, latLo..latHi) and projects only
// those: a segment with both ends beyond the same side cannot cross it,
// and ClipLine would drop it anyway, so a long line touching a z14 tile
// costs comparisons, not projections, for its far vertices.
func (ln *mapLine) runsNear(fr mvt.TileFrame, latLo, latHi, lonLo, lonHi float64) [][]mvt.P {
	code := func(lat, lon float64) uint8 {
		var c uint8
		if lon < lonLo {
			c |= 1
		} else if lon > lonHi {
			c |= 2
		}
		if lat < latLo {
			c |= 4
		} else if lat > latHi {
			c |= 8
		}
		return c
	}
	var runs [][]mvt.P
	var cur []mvt.P
	var pLat, pLon float64
	var pCode uint8
	first := true
	ln.eachLatLon(func(lat, lon float64) {
		c := code(lat, lon)
		if !first && pCode&c == 0 {
			if len(cur) == 0 {
				cur = append(cur, fr.Project(mvt.World(pLat, pLon)))
			}
			cur = append(cur, fr.Project(mvt.World(lat, lon)))
		} else if len(cur) > 0 {
			runs = append(runs, cur)
			cur = nil
		}
		pLat, pLon, pCode, first = lat, lon, c, false
	})
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	return runs
}

// latOfWorldY is the latitude of Web Mercator world coordinate y.
func latOfWorldY(y float64) float64 {
	return math.Atan(math.Sinh(math.Pi*(1-2*y))) * 180 / math.Pi
}

// ValidTile reports which of z, x, y is out of range ("" when none):
// 0 ≤ z ≤ MaxZoom and 0 ≤ x, y < 2^z.
func ValidTile(z, x, y int64) string {
	switch {
	case z < 0 || z > MaxZoom:
		return "z"
	case x < 0 || x >= 1<<z:
		return "x"
	case y < 0 || y >= 1<<z:
		return "y"
	}
	return ""
}

// Tile returns tile z/x/y of a map, from the index's tile cache when it
// holds it.
func (ix *Index) Tile(kind MapKind, z, x, y int64) (MapTile, error) {
	if p := ValidTile(z, x, y); p != "" {
		return MapTile{}, apperr.Param("departure.Tile", p, "tile "+p+" is out of range: 0 ≤ z ≤ 22 and 0 ≤ x, y < 2^z")
	}
	if kind > TransitMap {
		return MapTile{}, apperr.E("departure.Tile", apperr.Invalid, apperr.CodeInvalidParameter, "unknown map")
	}
	key := tileKey{kind, uint8(z), uint32(x), uint32(y)}
	if t, ok := ix.tiles.get(key); ok {
		return t, nil
	}
	raw, err := ix.encodeTile(kind, uint32(z), uint32(x), uint32(y))
	if err != nil {
		return MapTile{}, err
	}
	var zb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zb, gzip.BestSpeed)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	t := MapTile{Raw: raw, Gzip: zb.Bytes()}
	ix.tiles.put(key, t)
	return t, nil
}

// tileWindow is what a tile reaches: its frame, and the square of the
// tile and its buffer in world coordinates and in degrees.
type tileWindow struct {
	fr                         mvt.TileFrame
	minX, minY, maxX, maxY     float64
	latLo, latHi, lonLo, lonHi float64
}

func newTileWindow(z, x, y uint32) tileWindow {
	w := tileWindow{fr: mvt.NewTileFrame(z, x, y, tileExtent)}
	w.minX, w.minY, w.maxX, w.maxY = w.fr.WorldBounds(tileBuffer)
	w.latLo, w.latHi = latOfWorldY(w.maxY), latOfWorldY(w.minY)
	w.lonLo, w.lonHi = w.minX*360-180, w.maxX*360-180
	return w
}

// tileParts is the line in a tile: its parts clipped to the tile and its
// buffer, simplified for the zoom and rounded to tile coordinates, before
// mergeParts joins them with those of the route's other lines.
func (ln *mapLine) tileParts(w *tileWindow) [][]mvt.XY {
	if ln.maxX < w.minX || ln.minX > w.maxX || ln.maxY < w.minY || ln.minY > w.maxY {
		return nil
	}
	var parts [][]mvt.XY
	for _, run := range ln.runsNear(w.fr, w.latLo, w.latHi, w.lonLo, w.lonHi) {
		for _, part := range mvt.ClipLine(run, tileExtent, tileBuffer) {
			if q := mvt.Round(mvt.Simplify(part, tileTolerance)); len(q) >= 2 {
				parts = append(parts, q)
			}
		}
	}
	return parts
}

// encodeTile builds tile z/x/y without the cache.
func (ix *Index) encodeTile(kind MapKind, z, x, y uint32) ([]byte, error) {
	md := ix.mapData()
	w := newTileWindow(z, x, y)
	fr, minX, minY, maxX, maxY := w.fr, w.minX, w.minY, w.maxX, w.maxY
	var tile mvt.Tile
	if kind == TransitMap {
		layer := mvt.Layer{Name: "lines", Extent: tileExtent}
		for ri := range md.routes {
			mr := &md.routes[ri]
			if mr.maxX < minX || mr.minX > maxX || mr.maxY < minY || mr.minY > maxY {
				continue
			}
			var parts [][]mvt.XY
			for _, li := range mr.lines {
				parts = append(parts, md.lines[li].tileParts(&w)...)
			}
			if parts = mergeParts(parts); len(parts) == 0 {
				continue
			}
			f := mr.fi.f
			r := &f.Routes[mr.route]
			color := ""
			if r.Color != "" {
				color = "#" + r.Color
			}
			tt := mr.fi.tripType[mr.route]
			layer.Features = append(layer.Features, mvt.Feature{Type: mvt.LineString, Geometry: parts, Props: []mvt.Prop{
				{Key: "line_name", Value: mr.fi.lineName[mr.route]},
				{Key: "route_id", Value: r.ID},
				{Key: "feed_id", Value: mr.fi.id},
				{Key: "color", Value: color},
				{Key: "route_type", Value: int64(r.Type)},
				{Key: "kind", Value: tt.Kind},
				{Key: "product", Value: tt.Product},
				{Key: "short_name", Value: r.ShortName},
				{Key: "long_name", Value: r.LongName},
			}})
		}
		tile.Layers = append(tile.Layers, layer)
	}
	layer := mvt.Layer{Name: "stations", Extent: tileExtent}
	for i := range md.stations {
		s := &md.stations[i]
		if s.minZoom > z || s.p.X < minX || s.p.X > maxX || s.p.Y < minY || s.p.Y > maxY {
			continue
		}
		layer.Features = append(layer.Features, mvt.Feature{Type: mvt.Point, Geometry: [][]mvt.XY{mvt.Round([]mvt.P{fr.Project(s.p)})},
			Props: []mvt.Prop{{Key: "id", Value: s.id}, {Key: "name", Value: s.name}, {Key: "kind", Value: s.kind},
				{Key: "lines", Value: s.lns}, {Key: "feed_id", Value: s.feed}}})
	}
	tile.Layers = append(tile.Layers, layer)
	return mvt.Marshal(&tile)
}

type tileKey struct {
	kind MapKind
	z    uint8
	x, y uint32
}

// tileCache is a byte-bounded LRU of encoded tiles, safe for concurrent use.
type tileCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	ll    *list.List
	items map[tileKey]*list.Element
}

type tileItem struct {
	key tileKey
	t   MapTile
}

func newTileCache(max int64) *tileCache {
	if max == 0 {
		max = DefaultTileCacheBytes
	}
	return &tileCache{max: max, ll: list.New(), items: map[tileKey]*list.Element{}}
}

func (c *tileCache) get(k tileKey) (MapTile, bool) {
	if c.max < 0 {
		return MapTile{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*tileItem).t, true
	}
	return MapTile{}, false
}

func (c *tileCache) put(k tileKey, t MapTile) {
	n := int64(len(t.Raw) + len(t.Gzip) + 64)
	if c.max < 0 || n > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	c.items[k] = c.ll.PushFront(&tileItem{k, t})
	c.size += n
	for c.size > c.max {
		e := c.ll.Back()
		it := e.Value.(*tileItem)
		c.ll.Remove(e)
		delete(c.items, it.key)
		c.size -= int64(len(it.t.Raw) + len(it.t.Gzip) + 64)
	}
}

// TileCacheLen is the number of cached tiles (tests).
func (ix *Index) TileCacheLen() int {
	ix.tiles.mu.Lock()
	defer ix.tiles.mu.Unlock()
	return ix.tiles.ll.Len()
}
