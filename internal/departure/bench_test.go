package departure

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/mvt"
	"github.com/farebox/farebox/internal/mvt/mvttest"
	"github.com/farebox/farebox/internal/shareddata"
)

func benchBoard(b *testing.B, ix *Index, id string, at time.Time, n int) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		deps, err := ix.Departures(id, at.Add(time.Duration(i%600)*time.Minute), n)
		if err != nil || len(deps) == 0 {
			b.Fatalf("%v %d", err, len(deps))
		}
	}
}

// BenchmarkDeparturesSmall: WMATA Metro Center (three platforms); the
// WMATA feed comes from the shared data (no registry serves it).
func BenchmarkDeparturesSmall(b *testing.B) {
	ix := index(b, nil, "wmata", "wmata-rail-2026.zip")
	benchBoard(b, ix, "farebox-station-wmata_STN_A01_C01", time.Date(2026, 5, 1, 6, 0, 0, 0, loadLoc(b, "America/New_York")), 10)
}

var (
	nycOnce sync.Once
	nycIdx  *Index
)

// loadNYC builds the index of all nine New York feeds once per binary
// (about 10 s of setup; benchmarks only run with -bench).
func loadNYC(b *testing.B) {
	nycOnce.Do(func() {
		// testdata/gtfs/nyc has the three feeds the tests read; all nine
		// come from `go run ./tools/testdata -nyc all` or the shared data.
		dir := dataDir + "nyc"
		paths, _ := filepath.Glob(dir + "/*.zip")
		if len(paths) != 9 {
			if s, ok := shareddata.Shared("gtfs/nyc"); ok {
				dir = s
				paths, _ = filepath.Glob(dir + "/*.zip")
			}
		}
		if len(paths) != 9 {
			b.Fatalf("BenchmarkDeparturesNYC needs the nine NYC feeds in %s (found %d): run `%s -nyc all`", dir, len(paths), shareddata.Fetch)
		}
		var args []string
		for _, p := range paths {
			id := filepath.Base(p)
			args = append(args, id[:len(id)-len(".zip")], p)
		}
		nycIdx = index(b, nil, args...)
	})
	if nycIdx == nil {
		b.Fatal("the NYC index failed to load (see the first error)")
	}
}

// BenchmarkDeparturesNYC queries the busiest station with all nine NYC feeds
// loaded.
func BenchmarkDeparturesNYC(b *testing.B) {
	loadNYC(b)
	id, _ := nycIdx.BusiestStation()
	at := time.Date(2026, 10, 6, 8, 0, 0, 0, loadLoc(b, "America/New_York"))
	b.Run("max10", func(b *testing.B) { benchBoard(b, nycIdx, id, at, 10) })
	b.Run("max100", func(b *testing.B) { benchBoard(b, nycIdx, id, at, 100) })
	// What a request costs without and with the board cache: the board and
	// its JSON, at a time that moves by a few milliseconds per query within
	// one minute (a client asking for "now").
	for _, n := range []int{10, 100} {
		name := "max" + strconv.Itoa(n)
		b.Run("json/"+name, func(b *testing.B) { benchJSON(b, nycIdx, id, at, n, false) })
		b.Run("cached/"+name, func(b *testing.B) { benchJSON(b, nycIdx, id, at, n, true) })
		b.Run("cached/"+name+"/parallel", func(b *testing.B) { benchJSONParallel(b, nycIdx, id, at, n) })
	}
	// Misses: the times of max10 (a new minute per query), each building
	// an entry; the cache starts empty every 600 queries.
	b.Run("cached/max10/miss", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := 0; i < b.N; i++ {
			if i%600 == 0 {
				nycIdx.cache = newBoardCache(0)
			}
			var err error
			if buf, err = nycIdx.AppendDeparturesJSON(buf[:0], id, at.Add(time.Duration(i%600)*time.Minute), 10); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchJSON: Departures + AppendDeparturesJSON, or the cached
// Index.AppendDeparturesJSON, into a reused buffer.
func benchJSON(b *testing.B, ix *Index, id string, at time.Time, n int, cached bool) {
	b.ReportAllocs()
	buf := make([]byte, 0, 64<<10)
	for i := 0; i < b.N; i++ {
		t := at.Add(time.Duration(i%60000) * time.Millisecond)
		if cached {
			var err error
			if buf, err = ix.AppendDeparturesJSON(buf[:0], id, t, n); err != nil {
				b.Fatal(err)
			}
			continue
		}
		deps, err := ix.Departures(id, t, n)
		if err != nil {
			b.Fatal(err)
		}
		buf = AppendDeparturesJSON(buf[:0], deps)
	}
}

func benchJSONParallel(b *testing.B, ix *Index, id string, at time.Time, n int) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 0, 64<<10)
		for i := 0; pb.Next(); i++ {
			var err error
			if buf, err = ix.AppendDeparturesJSON(buf[:0], id, at.Add(time.Duration(i*7%60000)*time.Millisecond), n); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDeparturesRealtime: Caltrain 22nd Street with its TripUpdates
// served through a realtime.Hub, computed and cached.
func BenchmarkDeparturesRealtime(b *testing.B) {
	ix := index(b, caltrainHub(b), "ct", "caltrain-2023.zip")
	id, at := "farebox-station-ct_22nd_street", time.Date(2023, 11, 7, 17, 0, 0, 0, la(b))
	b.Run("json/max10", func(b *testing.B) { benchJSON(b, ix, id, at, 10, false) })
	b.Run("cached/max10", func(b *testing.B) { benchJSON(b, ix, id, at, 10, true) })
	b.Run("cached/max10/parallel", func(b *testing.B) { benchJSONParallel(b, ix, id, at, 10) })
}

// BenchmarkMapTilesNYC: a z14 tile in Manhattan (Times Square) and the z10
// tile of New York City, both maps, computed without the cache and served
// from it, over all nine New York feeds. The map data gathered on the first
// tile is reported once as map-MiB (heap growth).
func BenchmarkMapTilesNYC(b *testing.B) {
	loadNYC(b)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	md := nycIdx.mapData()
	runtime.GC()
	runtime.ReadMemStats(&after)
	shapeBytes, points := 0, 0
	for _, fi := range nycIdx.feeds {
		points += len(fi.f.Shapes.Lat)
		shapeBytes += 8*len(fi.f.Shapes.Lat) + 4*len(fi.f.Shapes.First) + 4*len(fi.f.Trips.Shape)
	}
	b.Logf("map data: %d lines, %d stations, heap +%.1f MiB; shapes in the feeds: %d points, %.1f MiB of columns",
		len(md.lines), len(md.stations), float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), points, float64(shapeBytes)/(1<<20))
	for _, c := range []struct {
		name    string
		z, x, y uint32
	}{{"z14-manhattan", 14, 4824, 6157}, {"z10-nyc", 10, 301, 385}} {
		for _, kind := range []MapKind{StationMap, TransitMap} {
			name := c.name + "-" + [...]string{"stations", "transit"}[kind]
			b.Run(name+"-computed", func(b *testing.B) {
				var n int
				for b.Loop() {
					raw, err := nycIdx.encodeTile(kind, c.z, c.x, c.y)
					if err != nil {
						b.Fatal(err)
					}
					n = len(raw)
				}
				b.ReportMetric(float64(n), "tile-bytes")
			})
			b.Run(name+"-cached", func(b *testing.B) {
				if _, err := nycIdx.Tile(kind, int64(c.z), int64(c.x), int64(c.y)); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if _, err := nycIdx.Tile(kind, int64(c.z), int64(c.x), int64(c.y)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkTileSizes logs, per zoom 0–16, the uncompressed bytes and
// feature counts of both maps' tile holding the busiest station, for
// WMATA and (when present) all nine New York feeds: the figures of
// docs/maps.md "Thinning". It measures sizes, not time:
//
//	go test ./internal/departure -run '^$' -bench TileSizes -benchtime 1x
func BenchmarkTileSizes(b *testing.B) {
	report := func(b *testing.B, ix *Index) {
		id, _ := ix.BusiestStation()
		fi, stop, _ := ix.parseStationID(id)
		p := mvt.World(fi.f.Stops.Lat[stop], fi.f.Stops.Lon[stop])
		var out strings.Builder
		fmt.Fprintf(&out, "busiest station %s\n%4s %14s | station map: %8s %9s %9s | transit map: %6s %9s %9s %9s\n", id, "z", "tile", "stations", "bytes", "gzip", "lines", "distinct", "bytes", "gzip")
		for z := uint32(0); z <= 16; z++ {
			n := float64(uint32(1) << z)
			x, y := uint32(p.X*n), uint32(p.Y*n)
			var counts [2]int
			var sizes, gz [2]int
			distinct := 0
			for kind := StationMap; kind <= TransitMap; kind++ {
				raw, err := ix.encodeTile(kind, z, x, y)
				if err != nil {
					b.Fatal(err)
				}
				sizes[kind] = len(raw)
				t, err := ix.Tile(kind, int64(z), int64(x), int64(y))
				if err != nil {
					b.Fatal(err)
				}
				gz[kind] = len(t.Gzip)
				tile, err := mvttest.Unmarshal(raw)
				if err != nil {
					b.Fatal(err)
				}
				for _, l := range tile.Layers {
					if l.Name == "lines" {
						counts[1] = len(l.Features)
						seen := map[string]bool{}
						for _, f := range l.Features {
							seen[fmt.Sprint(f.Geometry)] = true
						}
						distinct = len(seen)
					} else if kind == StationMap {
						counts[0] = len(l.Features)
					}
				}
			}
			fmt.Fprintf(&out, "%4d %14s | %21d %9d %9d | %19d %9d %9d %9d\n", z, fmt.Sprintf("%d/%d/%d", z, x, y), counts[0], sizes[0], gz[0], counts[1], distinct, sizes[1], gz[1])
		}
		b.Log("\n" + out.String())
	}
	b.Run("wmata", func(b *testing.B) {
		report(b, index(b, nil, "wmata", "wmata-rail-2026.zip"))
	})
	if paths, _ := filepath.Glob(dataDir + "nyc/*.zip"); len(paths) == 9 {
		b.Run("nyc", func(b *testing.B) {
			loadNYC(b)
			report(b, nycIdx)
		})
	}
}
