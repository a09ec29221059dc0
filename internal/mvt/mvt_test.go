package mvt

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWorldAndFrame(t *testing.T) {
	for _, c := range []struct {
		lat, lon float64
		want     P
	}{{0, 0, P{0.5, 0.5}}, {0, -180, P{0, 0.5}}, {90, 180, P{1, 0}}, {-90, 0, P{0.5, 1}}} {
		got := World(c.lat, c.lon)
		if math.Abs(got.X-c.want.X) > 1e-9 || math.Abs(got.Y-c.want.Y) > 1e-9 {
			t.Errorf("World(%v, %v) = %v, want %v", c.lat, c.lon, got, c.want)
		}
	}
	// Times Square at z14 is in tile 4824/6157 (slippy map tile names).
	p := World(40.758, -73.9855)
	fr := NewTileFrame(14, 4824, 6157, 4096)
	q := fr.Project(p)
	if q.X < 0 || q.X >= 4096 || q.Y < 0 || q.Y >= 4096 {
		t.Fatalf("Times Square projects to %v, outside its tile", q)
	}
	minX, minY, maxX, maxY := fr.WorldBounds(0)
	if p.X < minX || p.X > maxX || p.Y < minY || p.Y > maxY {
		t.Fatalf("bounds %v %v %v %v miss %v", minX, minY, maxX, maxY, p)
	}
	// The deepest tile at the last index has its far edge at 1.
	fr = NewTileFrame(22, 1<<22-1, 1<<22-1, 4096)
	if _, _, mx, my := fr.WorldBounds(0); mx != 1 || my != 1 {
		t.Fatalf("z22 last tile ends at %v, %v", mx, my)
	}
}

func TestClipLine(t *testing.T) {
	// A line entering, leaving and re-entering the square [0,100] (no buffer).
	pts := []P{{-50, 50}, {50, 50}, {150, 50}, {150, 60}, {50, 60}, {50, 200}}
	got := ClipLine(pts, 100, 0)
	want := [][]P{{{0, 50}, {50, 50}, {100, 50}}, {{100, 60}, {50, 60}, {50, 100}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("clip (-want +got):\n%s", d)
	}
	// With a buffer of 10 the line is kept out to -10 and 110.
	got = ClipLine(pts[:3], 100, 10)
	if d := cmp.Diff([][]P{{{-10, 50}, {50, 50}, {110, 50}}}, got); d != "" {
		t.Fatalf("buffered clip (-want +got):\n%s", d)
	}
	if got := ClipLine([]P{{-5, -5}, {-5, 200}}, 100, 0); len(got) != 0 {
		t.Fatalf("a line outside was kept: %v", got)
	}
}

func TestSimplify(t *testing.T) {
	// Points within the tolerance of the chord go; the corner stays.
	pts := []P{{0, 0}, {10, 0.5}, {20, -0.5}, {30, 0}, {30, 30}}
	got := Simplify(pts, 1)
	if d := cmp.Diff([]P{{0, 0}, {30, 0}, {30, 30}}, got); d != "" {
		t.Fatalf("simplify (-want +got):\n%s", d)
	}
	if got := Simplify(pts, 0.1); len(got) != len(pts) {
		t.Fatalf("a small tolerance dropped points: %v", got)
	}
	// A long line does not recurse: 5,000 points on a zigzag (the worst case for Douglas–Peucker).
	long := make([]P, 5_000)
	for i := range long {
		long[i] = P{float64(i), float64(i % 2 * 10)}
	}
	if got := Simplify(long, 1); len(got) != len(long) {
		t.Fatalf("zigzag of amplitude 10 lost points at tolerance 1: %d", len(got))
	}
}
