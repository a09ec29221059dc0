package mvt

import "math"

// P is a point in float coordinates (world or tile units).
type P struct{ X, Y float64 }

// maxLat is the latitude where Web Mercator's square world ends.
const maxLat = 85.05112878

// World projects a WGS 84 position to Web Mercator world coordinates in
// [0, 1] × [0, 1] (origin at the north-west corner, y down).
func World(lat, lon float64) P {
	lat = math.Max(-maxLat, math.Min(maxLat, lat))
	s := math.Sin(lat * math.Pi / 180)
	return P{X: (lon + 180) / 360, Y: 0.5 - math.Log((1+s)/(1-s))/(4*math.Pi)}
}

// TileFrame maps world coordinates to the tile units of tile z/x/y.
type TileFrame struct {
	Z, X, Y uint32
	Extent  float64
	scale   float64
}

// NewTileFrame is the frame of tile z/x/y with extent units per side.
func NewTileFrame(z, x, y uint32, extent int) TileFrame {
	return TileFrame{Z: z, X: x, Y: y, Extent: float64(extent), scale: math.Ldexp(float64(extent), int(z))}
}

// Project maps a world point to tile units.
func (f TileFrame) Project(p P) P {
	return P{X: p.X*f.scale - float64(f.X)*f.Extent, Y: p.Y*f.scale - float64(f.Y)*f.Extent}
}

// WorldBounds is the tile's square in world coordinates grown by buffer
// tile units on every side: minX, minY, maxX, maxY.
func (f TileFrame) WorldBounds(buffer float64) (minX, minY, maxX, maxY float64) {
	minX = (float64(f.X)*f.Extent - buffer) / f.scale
	minY = (float64(f.Y)*f.Extent - buffer) / f.scale
	maxX = (float64(f.X+1)*f.Extent + buffer) / f.scale
	maxY = (float64(f.Y+1)*f.Extent + buffer) / f.scale
	return
}

// ClipLine cuts a polyline (tile units) to the square [-buffer,
// extent+buffer]²; every run inside becomes its own part (Liang–Barsky per
// segment).
func ClipLine(pts []P, extent, buffer float64) [][]P {
	lo, hi := -buffer, extent+buffer
	var parts [][]P
	var cur []P
	flush := func() {
		if len(cur) >= 2 {
			parts = append(parts, cur)
		}
		cur = nil
	}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		t0, t1, ok := clipSegment(a, b, lo, hi)
		if !ok {
			flush()
			continue
		}
		pa := P{a.X + t0*(b.X-a.X), a.Y + t0*(b.Y-a.Y)}
		pb := P{a.X + t1*(b.X-a.X), a.Y + t1*(b.Y-a.Y)}
		if len(cur) == 0 || t0 > 0 {
			flush()
			cur = append(cur, pa)
		}
		cur = append(cur, pb)
		if t1 < 1 {
			flush()
		}
	}
	flush()
	return parts
}

// clipSegment returns the parameter range of segment a→b inside the square.
func clipSegment(a, b P, lo, hi float64) (t0, t1 float64, ok bool) {
	t0, t1 = 0, 1
	dx, dy := b.X-a.X, b.Y-a.Y
	for _, c := range [4][2]float64{{-dx, a.X - lo}, {dx, hi - a.X}, {-dy, a.Y - lo}, {dy, hi - a.Y}} {
		p, q := c[0], c[1]
		if p == 0 {
			if q < 0 {
				return 0, 0, false
			}
			continue
		}
		r := q / p
		if p < 0 {
			if r > t1 {
				return 0, 0, false
			}
			t0 = max(t0, r)
		} else {
			if r < t0 {
				return 0, 0, false
			}
			t1 = min(t1, r)
		}
	}
	return t0, t1, true
}

// Simplify is Douglas–Peucker with tolerance tol (same units as pts); the
// end points are always kept. It runs iteratively (no recursion depth
// limit on long lines).
func Simplify(pts []P, tol float64) []P {
	if len(pts) < 3 {
		return pts
	}
	keep := make([]bool, len(pts))
	keep[0], keep[len(pts)-1] = true, true
	stack := [][2]int{{0, len(pts) - 1}}
	tol2 := tol * tol
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		best, bi := -1.0, -1
		for i := s[0] + 1; i < s[1]; i++ {
			if d := segDist2(pts[i], pts[s[0]], pts[s[1]]); d > best {
				best, bi = d, i
			}
		}
		if bi >= 0 && best > tol2 {
			keep[bi] = true
			stack = append(stack, [2]int{s[0], bi}, [2]int{bi, s[1]})
		}
	}
	out := make([]P, 0, len(pts)/2+2)
	for i, k := range keep {
		if k {
			out = append(out, pts[i])
		}
	}
	return out
}

// segDist2 is the squared distance from p to segment a–b.
func segDist2(p, a, b P) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = math.Max(0, math.Min(1, ((p.X-a.X)*dx+(p.Y-a.Y)*dy)/l))
	}
	ex, ey := a.X+t*dx-p.X, a.Y+t*dy-p.Y
	return ex*ex + ey*ey
}

// Round converts a part to integer tile units.
func Round(pts []P) []XY {
	out := make([]XY, len(pts))
	for i, p := range pts {
		out[i] = XY{int32(math.Round(p.X)), int32(math.Round(p.Y))}
	}
	return out
}
