// Command clearingdata derives the two data files the revenue clearing
// ships (docs/clearing.md) from the shared data sets, which neither the
// tests nor CI read:
//
//   - internal/clearing/postalcodes.tsv: every German postal code of
//     GeoNames' postal code data (as converted by
//     zauberware/postal-codes-json-xml-csv, CC-BY 4.0) with its federal
//     state as ISO 3166-2:DE, or none and why;
//   - internal/clearing/states.svg.txt: the 16 state boundaries
//     (isellsoap/deutschlandGeoJSON, public domain) projected to an SVG
//     path per state.
//
// Usage: go run ./tools/clearingdata -shared /work/shared/data -out internal/clearing
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	shared := flag.String("shared", os.Getenv("FAREBOX_SHARED_DATA"), "the shared data directory (de-postal-codes/, de-states/)")
	out := flag.String("out", "internal/clearing", "where to write postalcodes.tsv and states.svg.txt")
	flag.Parse()
	if *shared == "" {
		fmt.Fprintln(os.Stderr, "clearingdata: -shared (or FAREBOX_SHARED_DATA) is required")
		os.Exit(2)
	}
	if err := postalCodes(filepath.Join(*shared, "de-postal-codes", "zipcodes.de.csv"), filepath.Join(*out, "postalcodes.tsv")); err != nil {
		fmt.Fprintln(os.Stderr, "clearingdata:", err)
		os.Exit(1)
	}
	if err := states(filepath.Join(*shared, "de-states", "bundeslaender-low.geo.json"), filepath.Join(*out, "states.svg.txt")); err != nil {
		fmt.Fprintln(os.Stderr, "clearingdata:", err)
		os.Exit(1)
	}
}

// stateCodes maps both code schemes of the source to ISO 3166-2:DE: the
// GeoNames admin1 numbers (01 … 16, rows with English names such as
// "Bavaria") and the German abbreviations (BY, rows with "Bayern").
var stateCodes = map[string]string{
	"01": "DE-BW", "BW": "DE-BW", "02": "DE-BY", "BY": "DE-BY", "03": "DE-HB", "HB": "DE-HB",
	"04": "DE-HH", "HH": "DE-HH", "05": "DE-HE", "HE": "DE-HE", "06": "DE-NI", "NI": "DE-NI",
	"07": "DE-NW", "NW": "DE-NW", "08": "DE-RP", "RP": "DE-RP", "09": "DE-SL", "SL": "DE-SL",
	"10": "DE-SH", "SH": "DE-SH", "11": "DE-BB", "BB": "DE-BB", "12": "DE-MV", "MV": "DE-MV",
	"13": "DE-SN", "SN": "DE-SN", "14": "DE-ST", "ST": "DE-ST", "15": "DE-TH", "TH": "DE-TH",
	"16": "DE-BE", "BE": "DE-BE",
}

var fiveDigits = regexp.MustCompile(`^[0-9]{5}$`)

// postalCodes writes one line per postal code: code, state (empty when
// none can be given), and the reason when the rows disagree or say
// nothing. A code in several states goes to the state of most of its
// distinct places; a tie is not decided (no state, reason "tie").
func postalCodes(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return err
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	places := map[string]map[string]map[string]bool{} // code → state → place
	noState := map[string][]string{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		code, sc, place := rec[col["zipcode"]], strings.TrimSpace(rec[col["state_code"]]), rec[col["place"]]
		if !fiveDigits.MatchString(code) || rec[col["country_code"]] != "DE" {
			return fmt.Errorf("unexpected row %q", rec)
		}
		st, ok := stateCodes[sc]
		if !ok {
			noState[code] = append(noState[code], fmt.Sprintf("%s (state %q, code %q)", place, rec[col["state"]], sc))
			continue
		}
		if places[code] == nil {
			places[code] = map[string]map[string]bool{}
		}
		if places[code][st] == nil {
			places[code][st] = map[string]bool{}
		}
		places[code][st][place] = true
	}
	codes := make([]string, 0, len(places)+len(noState))
	for c := range places {
		codes = append(codes, c)
	}
	for c := range noState {
		if places[c] == nil {
			codes = append(codes, c)
		}
	}
	sort.Strings(codes)
	var b strings.Builder
	b.WriteString("# German postal code → federal state (ISO 3166-2:DE), derived by tools/clearingdata from GeoNames\n")
	b.WriteString("# postal code data (geonames.org) as converted by zauberware/postal-codes-json-xml-csv (commit a6e8df1),\n")
	b.WriteString("# CC-BY 4.0: see ATTRIBUTION.md. Columns: code, state (empty: not mapped), note.\n")
	for _, c := range codes {
		st, note := decide(places[c])
		if len(places[c]) == 0 {
			note = "no state in the source: " + strings.Join(noState[c], "; ")
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", c, st, note)
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// decide picks the state of most distinct places of a code; a tie gives
// none. The note lists the counts when the code lies in several states.
func decide(byState map[string]map[string]bool) (string, string) {
	if len(byState) == 0 {
		return "", ""
	}
	type count struct {
		st string
		n  int
	}
	var cs []count
	for st, ps := range byState {
		cs = append(cs, count{st, len(ps)})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].n != cs[j].n {
			return cs[i].n > cs[j].n
		}
		return cs[i].st < cs[j].st
	})
	if len(cs) == 1 {
		return cs[0].st, ""
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s=%d", c.st, c.n)
	}
	if cs[0].n == cs[1].n {
		return "", "tie: places " + strings.Join(parts, " ")
	}
	return cs[0].st, "majority: places " + strings.Join(parts, " ")
}

type geoJSON struct {
	Features []struct {
		Properties struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"properties"`
		Geometry struct {
			Type        string          `json:"type"`
			Coordinates json.RawMessage `json:"coordinates"`
		} `json:"geometry"`
	} `json:"features"`
}

// The projection: equirectangular around 51° N (x scaled by cos 51°), the
// bounding box of Germany into a 600 px wide view box.
const (
	lonMin, lonMax, latMin, latMax = 5.8, 15.1, 47.2, 55.1
	width                          = 600.0
)

func project(lon, lat float64) (float64, float64) {
	k := math.Cos(51 * math.Pi / 180)
	scale := width / ((lonMax - lonMin) * k)
	return (lon - lonMin) * k * scale, (latMax - lat) * scale
}

// states writes "ID<TAB>name<TAB>path" lines and a first line with the
// view box.
func states(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var g geoJSON
	if err := json.Unmarshal(raw, &g); err != nil {
		return err
	}
	_, h := project(lonMin, latMin)
	var b strings.Builder
	fmt.Fprintf(&b, "viewBox\t\t0 0 %.0f %.0f\n", width, math.Ceil(h))
	for _, f := range g.Features {
		var polys [][][][2]float64
		switch f.Geometry.Type {
		case "Polygon":
			var p [][][2]float64
			if err := json.Unmarshal(f.Geometry.Coordinates, &p); err != nil {
				return err
			}
			polys = [][][][2]float64{p}
		case "MultiPolygon":
			if err := json.Unmarshal(f.Geometry.Coordinates, &polys); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: geometry %s", f.Properties.ID, f.Geometry.Type)
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", f.Properties.ID, f.Properties.Name, path(polys))
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// path draws every ring, dropping points that round onto the previous one.
func path(polys [][][][2]float64) string {
	var b strings.Builder
	for _, p := range polys {
		for _, ring := range p {
			last := ""
			n := 0
			for _, pt := range ring {
				x, y := project(pt[0], pt[1])
				s := fmt.Sprintf("%.1f %.1f", x, y)
				if s == last {
					continue
				}
				if n == 0 {
					b.WriteString("M")
				} else {
					b.WriteString("L")
				}
				b.WriteString(s)
				last = s
				n++
			}
			b.WriteString("Z")
		}
	}
	return b.String()
}
