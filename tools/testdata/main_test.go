package main

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"io"
	"reflect"
	"testing"
)

// convertFeed writes each table of one package directory as CSV: columns
// are the union of the rows' keys in order of first appearance, values are
// unchanged (quoted where CSV needs it: comma, quote, newline, leading
// space), a missing key is empty, an empty table left out; .d.ts files and other directories are
// not tables of this feed.
func TestConvertFeed(t *testing.T) {
	var src bytes.Buffer
	zw := zip.NewWriter(&src)
	for name, body := range map[string]string{
		"gtfs_json/mnr/stops.json":         `[{"stop_id":"1","stop_name":"Grand Central"},{"stop_id":"2","stop_name":"A, \"B\"","stop_lat":" 40.7"},{"stop_name":"x\ny","stop_id":"3"}]`,
		"gtfs_json/mnr/agency.json":        "[\n{\"agency_id\":\"1\",\"agency_name\":\"Metro-North Railroad\"}\n]\n",
		"gtfs_json/mnr/stops.json.d.ts":    "export type Stops = {}",
		"gtfs_json/mnr_other/stops.json":   `[{"stop_id":"9"}]`,
		"gtfs_json/subway/calendar.json":   `[]`,
		"gtfs_json/mnr/empty_table.json":   `[]`,
		"gtfs_json/mnr/nested/stops.json":  `[{"stop_id":"8"}]`,
		"gtfs_json/mnr/translations.json":  `[{"t":"東京 – עברית – 🚆"}]`,
		"gtfs_json/lirr/stop_times.json":   `[{"trip_id":"a+b","arrival_time":"25:01:00"}]`,
		"gtfs_json/mnr/feed_info.json.bak": `[]`,
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	zw.Close()
	zr, err := zip.NewReader(bytes.NewReader(src.Bytes()), int64(src.Len()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := convertFeed(zr, "gtfs_json/mnr/")
	if err != nil {
		t.Fatal(err)
	}
	got, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string][][]string{}
	var names []string
	for _, f := range got.File {
		rc, _ := f.Open()
		recs, err := csv.NewReader(rc).ReadAll()
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		names = append(names, f.Name)
		tables[f.Name] = recs
	}
	if want := []string{"agency.txt", "stops.txt", "translations.txt"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tables %v, want %v", names, want)
	}
	if want := [][]string{{"stop_id", "stop_name", "stop_lat"}, {"1", "Grand Central", ""}, {"2", `A, "B"`, " 40.7"}, {"3", "x\ny", ""}}; !reflect.DeepEqual(tables["stops.txt"], want) {
		t.Fatalf("stops %q", tables["stops.txt"])
	}
	if want := [][]string{{"t"}, {"東京 – עברית – 🚆"}}; !reflect.DeepEqual(tables["translations.txt"], want) {
		t.Fatalf("translations %q", tables["translations.txt"])
	}
	if _, err := convertFeed(zr, "gtfs_json/none/"); err == nil {
		t.Fatal("a directory without tables converted")
	}
	bad := zipWith(t, "gtfs_json/x/stops.json", `[{"stop_id":1}]`)
	if _, err := convertFeed(bad, "gtfs_json/x/"); err == nil {
		t.Fatal("a number value accepted: every value of the package is a string")
	}
}

func zipWith(t *testing.T, name, body string) *zip.Reader {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create(name)
	io.WriteString(w, body)
	zw.Close()
	zr, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}
