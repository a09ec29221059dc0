package testtool

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// GTFS Fares v2 as the GTFS reference (gtfs.org/documentation/schedule/
// reference, the fare_products, fare_media, rider_categories,
// fare_leg_rules, areas and stop_areas tables) defines it, checked without
// the exporter's code: required files and fields, enumerations, ISO 4217
// currencies with the currency's decimal places, unique primary keys and
// every foreign key (stop_areas.stop_id into the feed's stops).

// gtfsTable is the reference's definition of one file.
type gtfsTable struct {
	required []string // fields that must be present and non-empty
	key      []string // the primary key
}

var gtfsFaresTables = map[string]gtfsTable{
	"areas.txt":            {required: []string{"area_id"}, key: []string{"area_id"}},
	"stop_areas.txt":       {required: []string{"area_id", "stop_id"}, key: []string{"area_id", "stop_id"}},
	"rider_categories.txt": {required: []string{"rider_category_id", "rider_category_name"}, key: []string{"rider_category_id"}},
	"fare_media.txt":       {required: []string{"fare_media_id", "fare_media_type"}, key: []string{"fare_media_id"}},
	"fare_products.txt": {required: []string{"fare_product_id", "amount", "currency"},
		key: []string{"fare_product_id", "rider_category_id", "fare_media_id"}},
	"fare_leg_rules.txt": {required: []string{"fare_product_id"},
		key: []string{"network_id", "from_area_id", "to_area_id", "from_timeframe_group_id", "to_timeframe_group_id", "fare_product_id"}},
}

// currencyDigits are the ISO 4217 minor units of the currencies a farebox
// catalog may name (EUR) and a few others, so a wrong code is caught.
var currencyDigits = map[string]int{"EUR": 2, "USD": 2, "CHF": 2, "GBP": 2, "JPY": 0}

// GTFSFaresZip reads a zip's files by name.
func GTFSFaresZip(b []byte) (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			return nil, err
		}
		out[f.Name] = data
	}
	return out, nil
}

// GTFSFaresRows parses one file into rows keyed by field name.
func GTFSFaresRows(data []byte) ([]map[string]string, error) {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, fmt.Errorf("not a CSV file with a header: %v", err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = r[i]
		}
		rows = append(rows, row)
	}
	return rows, nil
}

var amountRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// CheckGTFSFares returns every way files (name → content) break the GTFS
// reference's rules for Fares v2, given the stop_ids of the feed they
// belong to; none is a valid extension of that feed.
func CheckGTFSFares(files map[string][]byte, stops map[string]bool) []string {
	var probs []string
	add := func(f string, a ...any) { probs = append(probs, fmt.Sprintf(f, a...)) }
	ids := map[string]map[string]bool{}
	rows := map[string][]map[string]string{}
	for name, def := range gtfsFaresTables {
		data, ok := files[name]
		if !ok {
			add("%s is missing", name)
			continue
		}
		rs, err := GTFSFaresRows(data)
		if err != nil {
			add("%s: %v", name, err)
			continue
		}
		rows[name] = rs
		seen := map[string]int{}
		for i, r := range rs {
			for _, f := range def.required {
				if r[f] == "" {
					add("%s row %d: required field %s is empty or missing", name, i+2, f)
				}
			}
			var k []string
			for _, f := range def.key {
				k = append(k, r[f])
			}
			if prev, dup := seen[strings.Join(k, "\x00")]; dup {
				add("%s row %d repeats the primary key of row %d (%v)", name, i+2, prev, k)
			}
			seen[strings.Join(k, "\x00")] = i + 2
		}
		ids[name] = map[string]bool{}
		for _, r := range rs {
			ids[name][r[def.key[0]]] = true
		}
	}
	ref := func(name, field, target string, r map[string]string, i int, optional bool) {
		v := r[field]
		if v == "" && optional {
			return
		}
		if !ids[target][v] {
			add("%s row %d: %s %q is not in %s", name, i+2, field, v, target)
		}
	}
	for i, r := range rows["stop_areas.txt"] {
		ref("stop_areas.txt", "area_id", "areas.txt", r, i, false)
		if !stops[r["stop_id"]] {
			add("stop_areas.txt row %d: stop_id %q is not a stop of the feed", i+2, r["stop_id"])
		}
	}
	defaults := 0
	for i, r := range rows["rider_categories.txt"] {
		switch r["is_default_fare_category"] {
		case "1":
			defaults++
		case "", "0":
		default:
			add("rider_categories.txt row %d: is_default_fare_category must be 0 or 1", i+2)
		}
	}
	if defaults > 1 {
		add("rider_categories.txt: %d default categories; the products' riders may have one", defaults)
	}
	for i, r := range rows["fare_media.txt"] {
		if t := r["fare_media_type"]; len(t) != 1 || t[0] < '0' || t[0] > '4' {
			add("fare_media.txt row %d: fare_media_type %q is not 0..4", i+2, t)
		}
	}
	for i, r := range rows["fare_products.txt"] {
		ref("fare_products.txt", "rider_category_id", "rider_categories.txt", r, i, true)
		ref("fare_products.txt", "fare_media_id", "fare_media.txt", r, i, true)
		digits, ok := currencyDigits[r["currency"]]
		if !ok {
			add("fare_products.txt row %d: currency %q is not an ISO 4217 code", i+2, r["currency"])
			continue
		}
		a := r["amount"]
		_, frac, _ := strings.Cut(a, ".")
		if !amountRE.MatchString(a) || len(frac) > digits {
			add("fare_products.txt row %d: amount %q is not a decimal with at most %d places", i+2, a, digits)
		}
	}
	for i, r := range rows["fare_leg_rules.txt"] {
		ref("fare_leg_rules.txt", "fare_product_id", "fare_products.txt", r, i, false)
		ref("fare_leg_rules.txt", "from_area_id", "areas.txt", r, i, true)
		ref("fare_leg_rules.txt", "to_area_id", "areas.txt", r, i, true)
	}
	return probs
}
