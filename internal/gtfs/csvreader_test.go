package gtfs

import (
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// stdRecords reads s with encoding/csv as GTFS files were read before
// csvReader: LazyQuotes, any number of fields. Each record with the line
// it starts on.
func stdRecords(s string) ([][]string, []int, error) {
	r := csv.NewReader(strings.NewReader(s))
	r.LazyQuotes, r.FieldsPerRecord = true, -1
	return collect(func() ([]string, int, error) {
		rec, err := r.Read()
		if err != nil {
			return nil, 0, err
		}
		line, _ := r.FieldPos(0)
		return rec, line, nil
	})
}

func ourRecords(rd io.Reader) ([][]string, []int, error) {
	c := newCSVReader(rd)
	return collect(func() ([]string, int, error) {
		rec, err := c.read()
		return rec, c.recLine, err
	})
}

// collect reads records (with their lines) until io.EOF or an error.
func collect(read func() ([]string, int, error)) (recs [][]string, lines []int, err error) {
	for {
		rec, line, err := read()
		if errors.Is(err, io.EOF) {
			return recs, lines, nil
		}
		if err != nil {
			return recs, lines, err
		}
		recs, lines = append(recs, slices.Clone(rec)), append(lines, line)
	}
}

var csvCases = []string{
	"", "\n", "a", "a,b,c\n1,2,3\n", "a,b\r\n1,2\r\n", "a,b\n\n\n1,2\n", "a,,\n,,\n", "a,b\n1,2",
	"a,b\r", `"a","b"` + "\n" + `"1","2"` + "\n", `"a ""q"" b",c` + "\n", `a"b,c"d"` + "\n", `"a"b,c` + "\n",
	"\"multi\nline\",x\ny,z\n", "\"unterminated,x\ny\n", `"",""` + "\n", `"a",` + "\n", `,"a"` + "\n",
	"\"a\"\r\n\"b\"\r\n", "\"a\r\nb\",c\r\n", " a , b \n", "\"x\"\"\n", "é,ü,😀\n\"ي\",ה\n",
	"\"tail\"", "\"tail", strings.Repeat("x", 70000) + ",y\n\"" + strings.Repeat("q", 70000) + "\",z\n",
}

// TestCSVReaderMatchesEncodingCSV: csvReader reads every case as
// encoding/csv does (records, their lines), also one byte at a time.
func TestCSVReaderMatchesEncodingCSV(t *testing.T) {
	for _, s := range csvCases {
		compareCSV(t, s)
	}
}

func compareCSV(t *testing.T, s string) {
	t.Helper()
	want, wantLines, werr := stdRecords(s)
	for _, rd := range []io.Reader{strings.NewReader(s), iotest.OneByteReader(strings.NewReader(s))} {
		got, gotLines, err := ourRecords(rd)
		if (err != nil) != (werr != nil) || !slices.EqualFunc(got, want, slices.Equal) || !slices.Equal(gotLines, wantLines) {
			t.Fatalf("%.80q:\n got %q %v (%v)\nwant %q %v (%v)", s, got, gotLines, err, want, wantLines, werr)
		}
	}
}

func FuzzCSVReader(f *testing.F) {
	for _, s := range csvCases {
		f.Add(s)
	}
	f.Fuzz(compareCSV)
}
