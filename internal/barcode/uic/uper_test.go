package uic

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// Known encodings worked out by hand from X.691.
func TestUPERKnownEncodings(t *testing.T) {
	cases := []struct {
		name string
		w    func(*bitWriter)
		want []byte
	}{
		// 2020 in 2016..2269: offset 4 in 8 bits.
		{"constrained year", func(w *bitWriter) { w.constrained("y", 2020, 2016, 2269) }, []byte{0x04}},
		// 1 in 1..366 (9 bits): 000000000 then padding.
		{"constrained 9 bits", func(w *bitWriter) { w.constrained("d", 366, 1, 366) }, []byte{0xb6, 0x80}},
		{"fixed range", func(w *bitWriter) { w.constrained("z", 5, 5, 5) }, nil},
		{"short length", func(w *bitWriter) { w.length("l", 127) }, []byte{0x7f}},
		{"long length", func(w *bitWriter) { w.length("l", 128) }, []byte{0x80, 0x80}},
		{"max length", func(w *bitWriter) { w.length("l", maxLen) }, []byte{0xbf, 0xff}},
		{"int 0", func(w *bitWriter) { w.unconstrained(0) }, []byte{0x01, 0x00}},
		{"int 128", func(w *bitWriter) { w.unconstrained(128) }, []byte{0x02, 0x00, 0x80}},
		{"int -129", func(w *bitWriter) { w.unconstrained(-129) }, []byte{0x02, 0xff, 0x7f}},
		// "AB": length 2, then 7-bit 0x41 0x42.
		{"ia5", func(w *bitWriter) { w.ia5("s", "AB") }, []byte{0x02, 0x83, 0x08}},
		{"utf8", func(w *bitWriter) { w.utf8("s", "ü") }, []byte{0x02, 0xc3, 0xbc}},
		{"bits", func(w *bitWriter) { w.bit(true); w.bit(false); w.bit(true) }, []byte{0xa0}},
	}
	for _, c := range cases {
		var w bitWriter
		c.w(&w)
		got, err := w.bytes()
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("%s: got % x (%v), want % x", c.name, got, err, c.want)
		}
	}
}

func TestUPERRoundTripExtremes(t *testing.T) {
	ints := []int64{0, 1, -1, 127, 128, -128, -129, 32767, 32768, math.MaxInt64, math.MinInt64}
	long := strings.Repeat("x", maxLen)
	var w bitWriter
	w.bit(true) // misalign everything that follows
	for _, v := range ints {
		w.unconstrained(v)
	}
	w.constrained("a", 2155, 1901, 2155)
	w.constrained("b", -60, -60, 60)
	w.ia5("ia5", long)
	w.utf8("utf8", "Zoë 東京")
	w.length("n", 0)
	b, err := w.bytes()
	if err != nil {
		t.Fatal(err)
	}
	r := bitReader{buf: b}
	if !r.bit() {
		t.Fatal("first bit")
	}
	for _, v := range ints {
		if got := r.unconstrained("i"); got != v {
			t.Errorf("integer %d read back as %d", v, got)
		}
	}
	if got := r.constrained("a", 1901, 2155); got != 2155 {
		t.Errorf("constrained: %d", got)
	}
	if got := r.constrained("b", -60, 60); got != -60 {
		t.Errorf("negative lower bound: %d", got)
	}
	if got := r.ia5("ia5"); got != long {
		t.Errorf("ia5 of %d chars read back as %d chars", len(long), len(got))
	}
	if got := r.utf8("utf8"); got != "Zoë 東京" {
		t.Errorf("utf8: %q", got)
	}
	if got := r.length("n"); got != 0 || r.err != nil {
		t.Errorf("length: %d %v", got, r.err)
	}
}

func TestUPERRefusals(t *testing.T) {
	for name, f := range map[string]func(*bitWriter){
		"out of range": func(w *bitWriter) { w.constrained("year", 2300, 2016, 2269) },
		"below range":  func(w *bitWriter) { w.constrained("year", 2015, 2016, 2269) },
		"too long":     func(w *bitWriter) { w.length("name", maxLen+1) },
		"not ia5":      func(w *bitWriter) { w.ia5("pnr", "é") },
		"not utf8":     func(w *bitWriter) { w.utf8("name", "\xff") },
	} {
		var w bitWriter
		f(&w)
		if _, err := w.bytes(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A reader never reads past the end and never allocates for a length
	// the data cannot hold.
	for _, in := range [][]byte{nil, {0x05}, {0xbf, 0xff}, {0xc0}, {0x09, 1, 2}} {
		r := bitReader{buf: in}
		r.ia5("x")
		if r.err == nil {
			t.Errorf("% x: truncated string accepted", in)
		}
	}
	r := bitReader{buf: []byte{0xff}} // 1..300 needs 9 bits: 511 > 300
	r.constrained("v", 1, 300)
	if r.err == nil {
		t.Error("value above the upper bound accepted")
	}
}

// unconstrained writes an INTEGER without bounds: a length in octets and
// the minimal two's complement octets (X.691 11.8).
func (w *bitWriter) unconstrained(v int64) {
	n := 1
	for ; n < 8; n++ {
		if lo, hi := int64(-1)<<(8*n-1), int64(1)<<(8*n-1)-1; v >= lo && v <= hi {
			break
		}
	}
	w.length("integer", n)
	w.bitsN(uint64(v), 8*n)
}

func (r *bitReader) unconstrained(field string) int64 {
	n := r.length(field)
	if n < 1 || n > 8 {
		r.fail("%s: integer of %d octets", field, n)
		return 0
	}
	v := r.bitsN(8 * n)
	shift := uint(64 - 8*n)
	return int64(v<<shift) >> shift // sign-extend
}
