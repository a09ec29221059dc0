package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/apitest"
	"github.com/farebox/farebox/internal/app/transit"
	"github.com/farebox/farebox/internal/httpapi"
	"github.com/farebox/farebox/internal/mvt"
	"github.com/farebox/farebox/internal/mvt/mvttest"
	"github.com/farebox/farebox/internal/testtool"
)

// tileOf is the z/x/y path part of the tile holding (lat, lon).
func tileOf(z int, lat, lon float64) string {
	p := mvt.World(lat, lon)
	n := math.Ldexp(1, z)
	return fmt.Sprintf("%d-%d-%d", z, int(p.X*n), int(p.Y*n))
}

type nodeTile struct {
	Path            string `json:"path"`
	Status          int    `json:"status"`
	ContentType     string `json:"contentType"`
	ContentEncoding string `json:"contentEncoding"`
	RequestID       string `json:"requestId"`
	Layers          map[string]struct {
		Version  int `json:"version"`
		Extent   int `json:"extent"`
		Features []struct {
			Type       int              `json:"type"`
			Properties map[string]any   `json:"properties"`
			Geometry   [][][2]int32     `json:"geometry"`
			GeoJSON    *json.RawMessage `json:"geojson"`
		} `json:"features"`
	} `json:"layers"`
}

// decodeWithMapbox fetches paths from the server with node's fetch and
// decodes them with @mapbox/vector-tile (testdata/mvt/decode.mjs).
func decodeWithMapbox(t *testing.T, e *apitest.Env, paths ...string) []nodeTile {
	t.Helper()
	out := runMVTScript(t, "@mapbox/vector-tile", append([]string{"decode.mjs", e.URL, e.LiveKey}, paths...)...)
	var res []nodeTile
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	return res
}

var bartFeeds = []feedSpec{{"caltrain", "caltrain-2023.zip", ""}, {"bart", "bart-2019.zip", ""}}

// TestVectorTilesDecodeWithMapbox serves tiles of Caltrain and BART from a
// real server and decodes them with Mapbox's decoder: the same features,
// properties and vertices as our decoder reads, stations where the feed
// puts them, gzip on the wire, and every request billed.
func TestVectorTilesDecodeWithMapbox(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, bartFeeds...), func(t *testing.T, e *apitest.Env) {
		known := map[string][2]float64{
			"farebox-station-caltrain_san_francisco": {37.776404, -122.394911},
			"farebox-station-bart_12TH":              {37.803768, -122.271450},
		}
		var paths []string
		for _, kind := range []string{"station_map", "transit_map"} {
			for _, tile := range []string{tileOf(13, 37.776404, -122.394911), tileOf(12, 37.803768, -122.271450), "0-0-0", "9-82-198"} {
				paths = append(paths, "/v1/"+kind+"/"+tile+".mvt")
			}
		}
		res := decodeWithMapbox(t, e, paths...)
		if len(res) != len(paths) {
			t.Fatalf("%d answers for %d paths", len(res), len(paths))
		}
		seen := map[string]bool{}
		lineFeatures := 0
		for _, nt := range res {
			if nt.Status != 200 || nt.ContentType != "application/vnd.mapbox-vector-tile" || nt.ContentEncoding != "gzip" {
				t.Fatalf("%s: %d %s %s", nt.Path, nt.Status, nt.ContentType, nt.ContentEncoding)
			}
			if rows := e.UsageRows(nt.RequestID); len(rows) != 1 || !rows[0].Counted || rows[0].Status != 200 {
				t.Fatalf("%s: ledger %+v", nt.Path, rows)
			}
			// Our own decoding of the same bytes (uncompressed this time).
			r := e.Must(200, apitest.Req{Method: "GET", Path: nt.Path, Key: e.LiveKey, Header: map[string]string{"Accept-Encoding": "identity"}})
			if r.Header.Get("Content-Encoding") != "" {
				t.Fatalf("%s: compressed although the client refused", nt.Path)
			}
			ours, err := mvttest.Unmarshal(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			if len(ours.Layers) != len(nt.Layers) {
				t.Fatalf("%s: %d layers, mapbox %d", nt.Path, len(ours.Layers), len(nt.Layers))
			}
			var z, x, y int
			fmt.Sscanf(filepath.Base(nt.Path), "%d-%d-%d.mvt", &z, &x, &y)
			for _, l := range ours.Layers {
				ml := nt.Layers[l.Name]
				if ml.Version != 2 || ml.Extent != 4096 || len(ml.Features) != len(l.Features) {
					t.Fatalf("%s %s: version %d extent %d, %d features (ours %d)", nt.Path, l.Name, ml.Version, ml.Extent, len(ml.Features), len(l.Features))
				}
				for i, f := range l.Features {
					mf := ml.Features[i]
					if mf.Type != int(f.Type) || len(mf.Geometry) != len(f.Geometry) {
						t.Fatalf("%s %s %d: type %d, %d parts (ours %d, %d)", nt.Path, l.Name, i, mf.Type, len(mf.Geometry), f.Type, len(f.Geometry))
					}
					for k, part := range f.Geometry {
						for j, p := range part {
							if mf.Geometry[k][j] != [2]int32{p.X, p.Y} {
								t.Fatalf("%s: vertex %v, mapbox %v", nt.Path, p, mf.Geometry[k][j])
							}
						}
					}
					for _, p := range f.Props {
						want := p.Value
						if n, ok := want.(int64); ok {
							want = float64(n)
						}
						if mf.Properties[p.Key] != want {
							t.Fatalf("%s: %s = %v, mapbox %v", nt.Path, p.Key, p.Value, mf.Properties[p.Key])
						}
					}
					if l.Name == "lines" {
						lineFeatures++
						if c, _ := mf.Properties["color"].(string); len(c) != 7 || mf.Type != 2 {
							t.Fatalf("line %v", mf.Properties)
						}
					}
					id, _ := mf.Properties["id"].(string)
					if pos, ok := known[id]; ok && l.Name == "stations" {
						var g struct{ Coordinates [2]float64 }
						json.Unmarshal(*mf.GeoJSON, &g)
						tol := 360 / math.Ldexp(1, z) / 4096 * 2
						if math.Abs(g.Coordinates[0]-pos[1]) > tol || math.Abs(g.Coordinates[1]-pos[0]) > tol {
							t.Fatalf("%s at %v on %s, want %v", id, g.Coordinates, nt.Path, pos)
						}
						seen[id+nt.Path] = true
					}
				}
			}
		}
		// Both stations on the two maps at their own zoom (z0 shows one
		// station per grid cell, the most important: docs/maps.md).
		for id := range known {
			for _, kind := range []string{"station_map", "transit_map"} {
				own := "/v1/" + kind + "/" + tileOf(13, 37.776404, -122.394911) + ".mvt"
				if id == "farebox-station-bart_12TH" {
					own = "/v1/" + kind + "/" + tileOf(12, 37.803768, -122.271450) + ".mvt"
				}
				if !seen[id+own] {
					t.Errorf("%s not on %s", id, own)
				}
			}
		}
		if len(seen) < 4 || lineFeatures == 0 {
			t.Fatalf("stations found %v, %d line features", seen, lineFeatures)
		}
	})
}

// TestVectorTilesBadInputAndBilling: bad tiles are 400 naming z, x or y
// and billed like every transit 400; every good request is billed, also
// the second of the same tile (from the cache) and with a session token.
func TestVectorTilesBadInputAndBilling(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		for _, kind := range []string{"station_map", "transit_map"} {
			for tile, field := range map[string]string{
				"23-0-0": "z", "-1-0-0": "z", "a-0-0": "z", "1-0": "z", "1-0-0-0": "z", "99999999999999999999-0-0": "z",
				"1-2-0": "x", "1-x-0": "x", "22-4194304-0": "x", "1-+1-0": "x",
				"1-0-2": "y", "0-0-1": "y", "1-0-": "y", "22-0-4194304": "y",
			} {
				path := "/v1/" + kind + "/" + tile + ".mvt"
				r := wantInvalidParameter(t, e, e.LiveKey, path, field)
				if rows := e.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 1 || !rows[0].Counted || rows[0].Status != 400 {
					t.Errorf("%s: ledger %+v", path, rows)
				}
			}
			path := "/v1/" + kind + "/22-4194303-4194303.mvt"
			e.Must(200, apitest.Req{Method: "GET", Path: path, Key: e.LiveKey})
			if r := e.Must(401, apitest.Req{Method: "GET", Path: path}); r.Map(t)["code"] != "api_key_missing" {
				t.Errorf("%s without a key: %s", path, r.Body)
			}
			if r := e.Must(401, apitest.Req{Method: "GET", Path: path + "?api_key=fbx_live_bogus"}); r.Map(t)["code"] != "invalid_api_key" {
				t.Errorf("%s with a bogus key: %s", path, r.Body)
			}
			// The same tile three times, with the session token each answer
			// sends: three counted requests (tiles have no session blocks).
			path = "/v1/" + kind + "/" + tileOf(13, 37.776404, -122.394911) + ".mvt"
			tok := ""
			var bodies [][]byte
			for i := 0; i < 3; i++ {
				r := e.Must(200, apitest.Req{Method: "GET", Path: path + "?api_key=" + e.LiveKey, Header: map[string]string{"session-token": tok, "Accept-Encoding": "gzip"}})
				if r.Header.Get("Content-Encoding") != "gzip" {
					t.Fatalf("%s: not gzip", path)
				}
				zr, err := gzip.NewReader(bytes.NewReader(r.Body))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(zr)
				bodies = append(bodies, b)
				rows := e.UsageRows(r.Header.Get("X-Request-Id"))
				if len(rows) != 1 || !rows[0].Counted || rows[0].Status != 200 {
					t.Fatalf("%s request %d: ledger %+v", path, i, rows)
				}
				tok = r.Header.Get("session-token")
			}
			if !bytes.Equal(bodies[0], bodies[2]) || len(bodies[0]) == 0 {
				t.Fatal("the cached tile differs")
			}
		}
	})
}

// TestVectorTilesFollowFeedReload: a new feed version replaces the index
// and with it the cached tiles.
func TestVectorTilesFollowFeedReload(t *testing.T) {
	t.Parallel()
	var tr *transit.Service
	o := transitOptions(t, rtNow, bartFeeds[:1]...)
	configure := o.Configure
	o.Configure = func(d *httpapi.Deps) { configure(d); tr = d.Transit }
	apitest.ForEachEngine(t, o, func(t *testing.T, e *apitest.Env) {
		path := "/v1/station_map/" + tileOf(13, 37.776404, -122.394911) + ".mvt"
		name := func() string {
			r := e.Must(200, apitest.Req{Method: "GET", Path: path, Key: e.LiveKey})
			tile, err := mvttest.Unmarshal(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tile.Layers[0].Features {
				for _, p := range f.Props {
					if p.Key == "id" && p.Value == "farebox-station-caltrain_san_francisco" {
						for _, q := range f.Props {
							if q.Key == "name" {
								return q.Value.(string)
							}
						}
					}
				}
			}
			return ""
		}
		if got := name(); got != "San Francisco Caltrain Station" {
			t.Fatalf("name %q", got)
		}
		f := *parsedFeed(t, "caltrain-2023.zip")
		f.Stops.Name = append([]string(nil), f.Stops.Name...)
		for i, id := range f.Stops.ID {
			if id == "san_francisco" {
				f.Stops.Name[i] = "San Francisco 4th & King"
			}
		}
		ctx := context.Background()
		if _, err := e.Feeds.Import(ctx, transit.Import{FeedID: "caltrain", SourceName: "caltrain-renamed.zip", Feed: &f}); err != nil {
			t.Fatal(err)
		}
		if err := tr.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if got := name(); got != "San Francisco 4th & King" {
			t.Fatalf("after the reload the tile still says %q", got)
		}
	})
}

// TestVectorTilesRenderWithMapLibre draws both sources with MapLibre GL in
// headless Chromium (testdata/mvt/render.mjs) over Caltrain, BART and the
// New York subway: the Bay Area and New York render without errors, with
// line colours on screen and rendered features from both sources.
// Screenshots stay in $FAREBOX_ENGINE_SCREENSHOTS when set.
func TestVectorTilesRenderWithMapLibre(t *testing.T) {
	t.Parallel()
	testtool.FullSuiteOnly(t, testtool.Browser)
	mvtScriptsReady(t, "maplibre-gl")
	chromium := os.Getenv("FAREBOX_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	feeds := append(bartFeeds[:2:2], feedSpec{"nyc-subway", "nyc/subway.zip", ""})
	e := apitest.New(t, "sqlite", transitOptions(t, rtNow, feeds...))
	outDir := os.Getenv("FAREBOX_ENGINE_SCREENSHOTS")
	if outDir == "" {
		outDir = t.TempDir()
	} else if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"base": e.URL, "key": e.LiveKey, "chromium": chromium, "outDir": outDir,
		"views": []map[string]any{
			{"name": "bay-area", "center": []float64{-122.3, 37.7}, "zoom": 9.2},
			{"name": "new-york", "center": []float64{-73.95, 40.73}, "zoom": 11},
			{"name": "manhattan-z14", "center": []float64{-73.9855, 40.758}, "zoom": 14},
		}})
	cfgPath := filepath.Join(t.TempDir(), "render.json")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	out := runMVTScript(t, "maplibre-gl", "render.mjs", cfgPath)
	var res []struct {
		Name     string   `json:"name"`
		PNG      string   `json:"png"`
		Tiles    int      `json:"tiles"`
		Errors   []string `json:"errors"`
		Colored  int      `json:"colored"`
		Features int      `json:"features"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	if len(res) != 3 {
		t.Fatalf("%d views rendered", len(res))
	}
	for _, v := range res {
		t.Logf("%s: %d tiles, %d rendered features, %d coloured pixels → %s", v.Name, v.Tiles, v.Features, v.Colored, v.PNG)
		if len(v.Errors) > 0 || v.Tiles == 0 || v.Features == 0 || v.Colored < 500 {
			t.Errorf("%s: errors %v, %d tiles, %d features, %d coloured pixels", v.Name, v.Errors, v.Tiles, v.Features, v.Colored)
		}
	}
}

// mvtScriptsReady fails the test unless node and the npm module of
// testdata/mvt are installed; it returns node's path and the folder.
func mvtScriptsReady(t *testing.T, module string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required (apt-get install nodejs): ", err)
	}
	dir, _ = filepath.Abs("testdata/mvt")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", module)); err != nil {
		t.Fatal(module+" is missing: run `npm ci` in internal/httpapi/testdata/mvt: ", err)
	}
	return node, dir
}

// runMVTScript runs a node script of testdata/mvt (which needs module)
// and returns its standard output; a failure shows its standard error.
func runMVTScript(t *testing.T, module string, args ...string) []byte {
	t.Helper()
	node, dir := mvtScriptsReady(t, module)
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", args[0], err, stderr.Bytes())
	}
	return out
}

// TestBilledTransitAnswersAreNotPublic: every request to a transit
// endpoint is billed to the key, so no answer may be stored by a shared
// cache (a CDN or proxy would answer for the key without a ledger row).
// Tiles may be kept by the browser that asked (private, five minutes);
// the other transit answers say nothing (nobody caches them).
func TestBilledTransitAnswersAreNotPublic(t *testing.T) {
	t.Parallel()
	apitest.ForEachEngine(t, transitOptions(t, rtNow, caltrainFeeds...), func(t *testing.T, e *apitest.Env) {
		tile := tileOf(13, 37.776404, -122.394911)
		for _, c := range []struct {
			path, want string
		}{
			{"/v1/station_map/" + tile + ".mvt", "private, max-age=300"},
			{"/v1/transit_map/" + tile + ".mvt", "private, max-age=300"},
			{"/v1/station_map/0-0-0.mvt", "private, max-age=300"},
			{departuresPath(station("caltrain_22nd_street"), tueFivePM, 10), ""},
			{"/v1/stations/search_by_name.json?query=22nd", ""},
			{"/v1/stations/search_by_position.json?latitude=37.757&longitude=-122.392", ""},
			{"/v1/attributions.json", ""},
		} {
			encs := []string{""}
			if c.want != "" {
				encs = append(encs, "gzip") // a tile, the same either way
			}
			for _, enc := range encs {
				r := e.Must(200, apitest.Req{Method: "GET", Path: c.path, Key: e.LiveKey, Header: map[string]string{"Accept-Encoding": enc}})
				if cc := r.Header.Get("Cache-Control"); cc != c.want {
					t.Errorf("%s (Accept-Encoding %q): Cache-Control %q, want %q", c.path, enc, cc, c.want)
				}
				if rows := e.UsageRows(r.Header.Get("X-Request-Id")); len(rows) != 1 || !rows[0].Counted {
					t.Errorf("%s: not billed: %+v", c.path, rows)
				}
			}
		}
	})
}

// TestDocsDoNotDenyServedRoutes: no page under docs/ says that a route the
// server has is "not served" (docs/departures.md said so of the map tiles
// long after they were). A sentence saying "not served" may name only
// paths the route table lacks.
func TestDocsDoNotDenyServedRoutes(t *testing.T) {
	t.Parallel()
	var served []string
	for _, rt := range httpapi.New(httpapi.Deps{}).Routes() {
		p := rt.Path
		if i := strings.Index(p, "{"); i >= 0 {
			p = p[:i]
		}
		served = append(served, strings.TrimSuffix(p, "/"))
	}
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatal("no docs", err)
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ")
		for _, sentence := range strings.Split(text, ". ") {
			if !strings.Contains(sentence, "not served") {
				continue
			}
			for _, part := range strings.Split(sentence, "`") {
				if !strings.HasPrefix(part, "/") {
					continue
				}
				for _, p := range served {
					if p != "" && (part == p || strings.HasPrefix(p, part+"/")) {
						t.Errorf("%s says %q is not served: %q", filepath.Base(page), part, sentence)
					}
				}
			}
		}
	}
}
