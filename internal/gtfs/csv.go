package gtfs

import (
	"bytes"
	"io"
	"strings"
)

// table reads one GTFS CSV file record by record, looking columns up by
// header name. Fields are trimmed of surrounding white space; the record
// slice and its strings are reused by the next call to next, so callers
// clone what they keep.
type table struct {
	file string
	r    *csvReader
	cols map[string]int
	rec  []string
	line int
	p    *problems
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// bomSkipper drops a leading UTF-8 byte order mark.
type bomSkipper struct {
	r     io.Reader
	first bool
}

func (b *bomSkipper) Read(p []byte) (int, error) {
	if b.first {
		b.first = false
		var head [3]byte
		n, err := io.ReadFull(b.r, head[:])
		if n == 3 && bytes.Equal(head[:], utf8BOM) {
			return b.r.Read(p)
		}
		b.r = io.MultiReader(bytes.NewReader(head[:n]), b.r)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return 0, err
		}
	}
	return b.r.Read(p)
}

// newTable reads the header line. An empty file yields a table without rows.
func newTable(file string, rd io.Reader, p *problems) *table {
	r := newCSVReader(&bomSkipper{r: rd, first: true})
	t := &table{file: file, r: r, cols: map[string]int{}, p: p}
	hdr, err := r.read()
	if err == io.EOF {
		return t
	}
	if err != nil {
		p.add(file, 1, "unreadable header: "+err.Error())
		return t
	}
	for i, h := range hdr {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF")))
		if _, dup := t.cols[h]; !dup {
			t.cols[strings.Clone(h)] = i
		}
	}
	return t
}

// col returns the index of a column or -1 when the file has no such column.
func (t *table) col(name string) int {
	if i, ok := t.cols[name]; ok {
		return i
	}
	return -1
}

// next advances to the next record; a record that is only blanks is
// skipped. (Malformed quoting is read as encoding/csv reads it with
// LazyQuotes: never an error, csvReader.)
func (t *table) next() bool {
	if len(t.cols) == 0 {
		return false
	}
	for {
		rec, err := t.r.read()
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.p.add(t.file, t.line+1, "read error: "+err.Error())
			return false
		}
		t.rec = rec
		t.line = t.r.recLine
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		return true
	}
}

// get returns the trimmed field at column i, or "" when absent.
func (t *table) get(i int) string {
	if i < 0 || i >= len(t.rec) {
		return ""
	}
	return strings.TrimSpace(t.rec[i])
}

// bad records a problem at the current line.
func (t *table) bad(msg string) { t.p.add(t.file, t.line, msg) }

// parseTime parses a GTFS time "H:MM:SS" (hours may exceed 24) to seconds
// after noon minus 12 h. An empty string yields -1 and ok.
func parseTime(s string) (int32, bool) {
	if s == "" {
		return -1, true
	}
	var parts [3]int32
	n := 0
	digits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if digits >= 4 {
				return 0, false
			}
			parts[n] = parts[n]*10 + int32(c-'0')
			digits++
		case c == ':':
			if digits == 0 || n == 2 {
				return 0, false
			}
			n++
			digits = 0
		default:
			return 0, false
		}
	}
	if n != 2 || digits == 0 || parts[1] > 59 || parts[2] > 59 || parts[0] > 999 {
		return 0, false
	}
	return parts[0]*3600 + parts[1]*60 + parts[2], true
}

// parseDate parses YYYYMMDD into a day number (days since 1970-01-01).
func parseDate(s string) (int32, bool) {
	if len(s) != 8 {
		return 0, false
	}
	v := 0
	for i := 0; i < 8; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int(s[i]-'0')
	}
	y, m, d := v/10000, (v/100)%100, v%100
	if m < 1 || m > 12 || d < 1 || d > daysIn(y, m) || y < 1900 || y > 2200 {
		return 0, false
	}
	return DayNumber(y, m, d), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseInt parses a small non-negative or negative decimal integer.
func parseInt(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
		if s == "" {
			return 0, false
		}
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' || v > 1<<40 {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}
