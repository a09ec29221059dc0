package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Point is a longitude/latitude pair in degrees (GeoJSON order).
type Point struct{ Lon, Lat float64 }

// Rect is an axis-aligned box in degrees.
type Rect struct{ MinLon, MinLat, MaxLon, MaxLat float64 }

func (r Rect) contains(p Point) bool {
	return p.Lon >= r.MinLon && p.Lon <= r.MaxLon && p.Lat >= r.MinLat && p.Lat <= r.MaxLat
}

func (r Rect) intersects(o Rect) bool {
	return r.MinLon <= o.MaxLon && o.MinLon <= r.MaxLon && r.MinLat <= o.MaxLat && o.MinLat <= r.MaxLat
}

func (r Rect) union(o Rect) Rect {
	return Rect{math.Min(r.MinLon, o.MinLon), math.Min(r.MinLat, o.MinLat), math.Max(r.MaxLon, o.MaxLon), math.Max(r.MaxLat, o.MaxLat)}
}

// polygon is an exterior ring followed by holes; rings are closed (first == last).
type polygon [][]Point

// Shape is a parsed GeoJSON Polygon or MultiPolygon.
type Shape struct {
	polys []polygon
	Box   Rect
}

// ParseGeometry parses a GeoJSON Polygon or MultiPolygon and checks its rings.
func ParseGeometry(raw json.RawMessage) (*Shape, error) {
	var g struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("geometry is not a GeoJSON object: %v", err)
	}
	var polys [][][][2]float64
	switch g.Type {
	case "Polygon":
		var p [][][2]float64
		if err := json.Unmarshal(g.Coordinates, &p); err != nil {
			return nil, fmt.Errorf("Polygon coordinates: %v", err)
		}
		polys = [][][][2]float64{p}
	case "MultiPolygon":
		if err := json.Unmarshal(g.Coordinates, &polys); err != nil {
			return nil, fmt.Errorf("MultiPolygon coordinates: %v", err)
		}
	default:
		return nil, fmt.Errorf("geometry type must be Polygon or MultiPolygon, not %q", g.Type)
	}
	if len(polys) == 0 {
		return nil, errors.New("geometry has no polygon")
	}
	s := &Shape{Box: Rect{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}}
	for pi, p := range polys {
		if len(p) == 0 {
			return nil, fmt.Errorf("polygon %d has no ring", pi)
		}
		var poly polygon
		for ri, ring := range p {
			if len(ring) < 4 {
				return nil, fmt.Errorf("polygon %d ring %d needs at least 4 positions", pi, ri)
			}
			if ring[0] != ring[len(ring)-1] {
				return nil, fmt.Errorf("polygon %d ring %d is not closed (first and last position differ)", pi, ri)
			}
			pts := make([]Point, len(ring))
			for i, c := range ring {
				if c[0] < -180 || c[0] > 180 || c[1] < -90 || c[1] > 90 || math.IsNaN(c[0]) || math.IsNaN(c[1]) {
					return nil, fmt.Errorf("polygon %d ring %d position %d is not a longitude/latitude", pi, ri, i)
				}
				pts[i] = Point{c[0], c[1]}
				if ri == 0 {
					s.Box = s.Box.union(Rect{c[0], c[1], c[0], c[1]})
				}
			}
			poly = append(poly, pts)
		}
		s.polys = append(s.polys, poly)
	}
	return s, nil
}

// Contains reports whether p lies inside the shape or on its boundary
// (a point on a shared border belongs to both areas). Holes are excluded,
// their boundary included.
func (s *Shape) Contains(p Point) bool {
	if !s.Box.contains(p) {
		return false
	}
	for _, poly := range s.polys {
		in, onEdge := ringContains(poly[0], p)
		if onEdge {
			return true
		}
		if !in {
			continue
		}
		inHole := false
		for _, hole := range poly[1:] {
			h, edge := ringContains(hole, p)
			if edge {
				return true
			}
			if h {
				inHole = true
				break
			}
		}
		if !inHole {
			return true
		}
	}
	return false
}

const eps = 1e-12

// ringContains is the even-odd ray test; onEdge reports a point on the ring.
func ringContains(ring []Point, p Point) (in, onEdge bool) {
	for i, j := 0, len(ring)-1; i < len(ring); j, i = i, i+1 {
		a, b := ring[j], ring[i]
		if onSegment(a, b, p) {
			return false, true
		}
		if (a.Lat > p.Lat) != (b.Lat > p.Lat) {
			x := a.Lon + (p.Lat-a.Lat)*(b.Lon-a.Lon)/(b.Lat-a.Lat)
			if p.Lon < x {
				in = !in
			}
		}
	}
	return in, false
}

func onSegment(a, b, p Point) bool {
	cross := (b.Lon-a.Lon)*(p.Lat-a.Lat) - (b.Lat-a.Lat)*(p.Lon-a.Lon)
	if math.Abs(cross) > eps*math.Max(1, math.Abs(b.Lon-a.Lon)+math.Abs(b.Lat-a.Lat)) {
		return false
	}
	return p.Lon >= math.Min(a.Lon, b.Lon)-eps && p.Lon <= math.Max(a.Lon, b.Lon)+eps &&
		p.Lat >= math.Min(a.Lat, b.Lat)-eps && p.Lat <= math.Max(a.Lat, b.Lat)+eps
}

// Intersects reports whether the shape and the box share any point.
func (s *Shape) Intersects(r Rect) bool {
	if !s.Box.intersects(r) {
		return false
	}
	corners := []Point{{r.MinLon, r.MinLat}, {r.MaxLon, r.MinLat}, {r.MaxLon, r.MaxLat}, {r.MinLon, r.MaxLat}}
	for _, c := range corners {
		if s.Contains(c) {
			return true
		}
	}
	for _, poly := range s.polys {
		for _, ring := range poly {
			for i := 1; i < len(ring); i++ {
				if r.contains(ring[i]) {
					return true
				}
				for k := 0; k < 4; k++ {
					if segmentsCross(ring[i-1], ring[i], corners[k], corners[(k+1)%4]) {
						return true
					}
				}
			}
		}
	}
	return false
}

func orient(a, b, c Point) float64 {
	return (b.Lon-a.Lon)*(c.Lat-a.Lat) - (b.Lat-a.Lat)*(c.Lon-a.Lon)
}

func segmentsCross(p1, p2, q1, q2 Point) bool {
	d1, d2 := orient(q1, q2, p1), orient(q1, q2, p2)
	d3, d4 := orient(p1, p2, q1), orient(p1, p2, q2)
	if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) {
		return true
	}
	return onSegment(q1, q2, p1) || onSegment(q1, q2, p2) || onSegment(p1, p2, q1) || onSegment(p1, p2, q2)
}

// rtree is a static R-tree packed with Sort-Tile-Recursive over item boxes.
type rtree struct {
	levels [][]rnode // levels[0] are leaves (ranges of items); the last level is the root set
	items  []int     // item indexes in packed order
}

type rnode struct {
	box      Rect
	from, to int // children range in the level below (or items for leaves)
}

const rfan = 16

func buildRTree(boxes []Rect) rtree {
	if len(boxes) == 0 {
		return rtree{}
	}
	idx := make([]int, len(boxes))
	for i := range idx {
		idx[i] = i
	}
	// Sort-Tile-Recursive: slice by longitude, then sort each slice by latitude.
	cx := func(r Rect) float64 { return (r.MinLon + r.MaxLon) / 2 }
	cy := func(r Rect) float64 { return (r.MinLat + r.MaxLat) / 2 }
	sort.Slice(idx, func(a, b int) bool { return cx(boxes[idx[a]]) < cx(boxes[idx[b]]) })
	leaves := (len(idx) + rfan - 1) / rfan
	slices := int(math.Ceil(math.Sqrt(float64(leaves))))
	per := slices * rfan
	for s := 0; s < len(idx); s += per {
		part := idx[s:min(s+per, len(idx))]
		sort.Slice(part, func(a, b int) bool { return cy(boxes[part[a]]) < cy(boxes[part[b]]) })
	}
	t := rtree{}
	var level []rnode
	for s := 0; s < len(idx); s += rfan {
		n := rnode{box: boxes[idx[s]], from: s, to: min(s+rfan, len(idx))}
		for _, i := range idx[n.from:n.to] {
			n.box = n.box.union(boxes[i])
		}
		level = append(level, n)
	}
	t.levels = append(t.levels, level)
	for len(level) > rfan {
		var up []rnode
		for s := 0; s < len(level); s += rfan {
			n := rnode{box: level[s].box, from: s, to: min(s+rfan, len(level))}
			for _, c := range level[n.from:n.to] {
				n.box = n.box.union(c.box)
			}
			up = append(up, n)
		}
		t.levels = append(t.levels, up)
		level = up
	}
	t.items = idx
	return t
}

// search calls fn with every item whose box intersects r.
func (t *rtree) search(r Rect, fn func(item int)) {
	if len(t.levels) == 0 {
		return
	}
	top := len(t.levels) - 1
	for i := range t.levels[top] {
		t.visit(top, i, r, fn)
	}
}

func (t *rtree) visit(level, i int, r Rect, fn func(int)) {
	n := t.levels[level][i]
	if !n.box.intersects(r) {
		return
	}
	if level == 0 {
		for _, item := range t.items[n.from:n.to] {
			fn(item)
		}
		return
	}
	for c := n.from; c < n.to; c++ {
		t.visit(level-1, c, r, fn)
	}
}

// Polygons returns the shape's polygons, each an exterior ring followed by
// its holes (closed rings, longitude/latitude); callers must not modify
// them. The fare exports write them as GML (internal/fares).
func (s *Shape) Polygons() [][][]Point {
	out := make([][][]Point, len(s.polys))
	for i, p := range s.polys {
		out[i] = p
	}
	return out
}
