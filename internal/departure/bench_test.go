package departure

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
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

// BenchmarkDeparturesSmall: WMATA Metro Center (three platforms), always available.
func BenchmarkDeparturesSmall(b *testing.B) {
	ix := index(b, nil, "wmata", "wmata-rail-2026.zip")
	benchBoard(b, ix, "farebox-station-wmata_STN_A01_C01", time.Date(2026, 5, 1, 6, 0, 0, 0, loadLoc(b, "America/New_York")), 10)
}

var (
	nycOnce sync.Once
	nycIdx  *Index
)

// BenchmarkDeparturesNYC queries the busiest station with all nine NYC feeds
// loaded (about 10 s of setup; benchmarks only run with -bench).
func BenchmarkDeparturesNYC(b *testing.B) {
	nycOnce.Do(func() {
		paths, _ := filepath.Glob(dataDir + "nyc/*.zip")
		if len(paths) != 9 {
			b.Fatalf("BenchmarkDeparturesNYC needs the nine NYC feeds in %snyc/ (found %d)", dataDir, len(paths))
		}
		var args []string
		for _, p := range paths {
			rel, _ := filepath.Rel(dataDir, p)
			id := filepath.Base(p)
			args = append(args, id[:len(id)-len(".zip")], rel)
		}
		nycIdx = index(b, nil, args...)
	})
	if nycIdx == nil {
		b.Fatal("the NYC index failed to load (see the first error)")
	}
	id, _ := nycIdx.BusiestStation()
	at := time.Date(2026, 10, 6, 8, 0, 0, 0, loadLoc(b, "America/New_York"))
	b.Run("max10", func(b *testing.B) { benchBoard(b, nycIdx, id, at, 10) })
	b.Run("max100", func(b *testing.B) { benchBoard(b, nycIdx, id, at, 100) })
}
