package gtfs

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
)

// FuzzTable checks that the CSV table reader never panics and yields, for
// every input encoding/csv accepts, the same trimmed fields.
func FuzzTable(f *testing.F) {
	f.Add("a,b\r\n1,2\r\n")
	f.Add("\uFEFFa,\"b\"\n\"x, y\",\"he said \"\"hi\"\"\"\n")
	f.Add("a\n\n\n1\n")
	f.Add("a,b\n\"unterminated\n")
	f.Add("a,b\n x , y \n1\n1,2,3\n")
	f.Fuzz(func(t *testing.T, in string) {
		var p problems
		tb := newTable("x.txt", strings.NewReader(in), &p)
		var got [][]string
		for tb.next() {
			row := make([]string, len(tb.rec))
			for i := range tb.rec {
				row[i] = tb.get(i)
				if row[i] != strings.TrimSpace(row[i]) {
					t.Fatalf("field %q not trimmed", row[i])
				}
			}
			got = append(got, row)
			if tb.line < 1 {
				t.Fatalf("line %d", tb.line)
			}
		}
		r := csv.NewReader(strings.NewReader(strings.TrimPrefix(in, "\uFEFF")))
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		all, err := r.ReadAll()
		if err != nil || len(all) == 0 || p.count != 0 {
			return
		}
		var want [][]string
		for _, rec := range all[1:] {
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue
			}
			row := make([]string, len(rec))
			for i := range rec {
				row[i] = strings.TrimSpace(rec[i])
			}
			want = append(want, row)
		}
		if len(want) != len(got) {
			t.Fatalf("rows %d, want %d", len(got), len(want))
		}
		for i := range want {
			if strings.Join(want[i], "\x00") != strings.Join(got[i], "\x00") {
				t.Fatalf("row %d: %q want %q", i, got[i], want[i])
			}
		}
	})
}

// FuzzParseTime checks that accepted times format back to the same value.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"5:00:00", "25:49:00", "", "1:2:3", "99:59:59", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseTime(s)
		if !ok || v < 0 {
			return
		}
		back, ok := parseTime(formatTime(v))
		if !ok || back != v {
			t.Fatalf("%q → %d → %q → %d", s, v, formatTime(v), back)
		}
	})
}

// FuzzParseStopTimes feeds arbitrary stop_times.txt content into an
// otherwise valid feed: parsing must not fail or panic, and the result must
// pass the snapshot consistency checks and survive an encode/decode.
func FuzzParseStopTimes(f *testing.F) {
	f.Add("trip_id,arrival_time,departure_time,stop_id,stop_sequence\nt1,08:00:00,08:00:00,A,1\nt1,,,B,2\nt1,08:10:00,08:11:00,A,3\n")
	f.Add("trip_id,arrival_time,departure_time,stop_id,stop_sequence,pickup_type,stop_headsign,track\nt1,25:00:00,24:59:00,A,2,1,X,4\nt1,1:00:00,,B,1,,,\nt2,,,A,1\n")
	f.Add("trip_id,stop_sequence\n\"t1\",\"1\"\n")
	f.Fuzz(func(t *testing.T, st string) {
		files := map[string]string{
			"agency.txt":      "agency_name,agency_url,agency_timezone\nA,https://x,Europe/Berlin\n",
			"stops.txt":       "stop_id,stop_name,stop_lat,stop_lon,location_type,parent_station\nS,S,1,1,1,\nA,A,1,1,0,S\nB,B,2,2,,\nE,E,2,2,2,S\n",
			"routes.txt":      "route_id,route_short_name,route_type\nR,1,3\n",
			"calendar.txt":    "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nW,1,1,1,1,1,0,0,20250101,20251231\n",
			"trips.txt":       "route_id,service_id,trip_id\nR,W,t1\nR,W,t2\n",
			"frequencies.txt": "trip_id,start_time,end_time,headway_secs\nt2,06:00:00,07:00:00,600\n",
			"stop_times.txt":  st,
		}
		z := zipOf(t, files)
		feed, err := Parse(z, int64(z.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if err := feed.validate(); err != nil {
			t.Fatalf("parsed feed inconsistent: %v", err)
		}
		var buf bytes.Buffer
		if err := feed.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(&buf); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecode checks that arbitrary bytes never panic the snapshot decoder.
func FuzzDecode(f *testing.F) {
	feed := mustParse(f, "sample-gtfs-feed-0.13.0.zip")
	var buf bytes.Buffer
	if err := feed.Encode(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("FBXGTFS\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := decodeBytes(b)
		if err == nil {
			if verr := g.validate(); verr != nil {
				t.Fatal(verr)
			}
		}
	})
}

// formatTime renders seconds as a GTFS time "HH:MM:SS".
func formatTime(secs int32) string {
	return fmt.Sprintf("%02d:%02d:%02d", secs/3600, secs/60%60, secs%60)
}
