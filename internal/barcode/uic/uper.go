package uic

import (
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// This file is a small ASN.1 unaligned PER (X.691, UPER) codec for the
// constructs the FCB subset in fcb.go uses: constrained and unconstrained
// integers, booleans, optional-field bitmaps, extension bits of extensible
// SEQUENCEs and CHOICEs (always written as "no extension"), IA5String,
// UTF8String and SEQUENCE OF with unconstrained lengths below 16384
// (fragmented lengths are refused, the barcode never gets that large).

var errShort = errors.New("uper: data ends early")

// maxLen is the largest length determinant this codec writes or reads
// (the two-byte form; X.691 fragments anything from 16384 on).
const maxLen = 16383

type bitWriter struct {
	buf  []byte
	nbit int
	err  error
}

func (w *bitWriter) bit(b bool) {
	if w.nbit%8 == 0 {
		w.buf = append(w.buf, 0)
	}
	if b {
		w.buf[len(w.buf)-1] |= 0x80 >> (w.nbit % 8)
	}
	w.nbit++
}

// bitsN writes the n low bits of v, most significant first.
func (w *bitWriter) bitsN(v uint64, n int) {
	for i := n - 1; i >= 0; i-- {
		w.bit(v>>uint(i)&1 == 1)
	}
}

func (w *bitWriter) fail(format string, a ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, a...)
	}
}

// rangeBits is the number of bits a constrained whole number lo..hi takes.
func rangeBits(lo, hi int64) int { return bits.Len64(uint64(hi - lo)) }

// constrained writes v in lo..hi as an offset from lo (X.691 11.5.7.1).
func (w *bitWriter) constrained(field string, v, lo, hi int64) {
	if v < lo || v > hi {
		w.fail("%s: %d is outside %d..%d", field, v, lo, hi)
		return
	}
	w.bitsN(uint64(v-lo), rangeBits(lo, hi))
}

// length writes an unconstrained length determinant (X.691 11.9.3.6..7).
func (w *bitWriter) length(field string, n int) {
	switch {
	case n < 128:
		w.bitsN(uint64(n), 8)
	case n <= maxLen:
		w.bitsN(0b10<<14|uint64(n), 16)
	default:
		w.fail("%s: length %d exceeds %d", field, n, maxLen)
	}
}

func (w *bitWriter) ia5(field, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] > 0x7f {
			w.fail("%s: %q is not IA5 (7-bit ASCII)", field, s)
			return
		}
	}
	w.chars(field, s, 7)
}

func (w *bitWriter) utf8(field, s string) {
	if !utf8.ValidString(s) {
		w.fail("%s: not UTF-8", field)
		return
	}
	w.chars(field, s, 8)
}

// chars writes s's length and its bytes as width-bit characters.
func (w *bitWriter) chars(field, s string, width int) {
	w.length(field, len(s))
	for i := 0; i < len(s); i++ {
		w.bitsN(uint64(s[i]), width)
	}
}

// bytes returns the encoding, padded with zero bits to whole octets.
func (w *bitWriter) bytes() ([]byte, error) { return w.buf, w.err }

type bitReader struct {
	buf []byte
	pos int // bit position
	err error
}

func (r *bitReader) bit() bool {
	if r.err != nil {
		return false
	}
	if r.pos >= 8*len(r.buf) {
		r.err = errShort
		return false
	}
	b := r.buf[r.pos/8]>>(7-uint(r.pos%8))&1 == 1
	r.pos++
	return b
}

func (r *bitReader) bitsN(n int) uint64 {
	var v uint64
	for i := 0; i < n; i++ {
		v <<= 1
		if r.bit() {
			v |= 1
		}
	}
	return v
}

func (r *bitReader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, a...)
	}
}

func (r *bitReader) constrained(field string, lo, hi int64) int64 {
	v := lo + int64(r.bitsN(rangeBits(lo, hi)))
	if v > hi {
		r.fail("%s: %d is outside %d..%d", field, v, lo, hi)
	}
	return v
}

func (r *bitReader) length(field string) int {
	if !r.bit() {
		return int(r.bitsN(7))
	}
	if !r.bit() {
		return int(r.bitsN(14))
	}
	r.fail("%s: fragmented lengths are not supported", field)
	return 0
}

// need reports whether n more bits are available (guards huge lengths).
func (r *bitReader) need(n int) bool {
	if r.err == nil && n > 8*len(r.buf)-r.pos {
		r.err = errShort
	}
	return r.err == nil
}

func (r *bitReader) ia5(field string) string { return string(r.chars(field, 7)) }

func (r *bitReader) utf8(field string) string {
	b := r.chars(field, 8)
	if !utf8.Valid(b) {
		r.fail("%s: not UTF-8", field)
	}
	return string(b)
}

// chars reads a length-prefixed string of width-bit characters (nil when
// the data ends early).
func (r *bitReader) chars(field string, width int) []byte {
	n := r.length(field)
	if !r.need(width * n) {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.bitsN(width))
	}
	return b
}

// optionals reads an n-bit presence bitmap, first field first.
func (r *bitReader) optionals(n int) []bool {
	p := make([]bool, n)
	for i := range p {
		p[i] = r.bit()
	}
	return p
}

// noExtension reads the extension bit of an extensible type; this subset
// knows no extension additions, so a set bit is refused.
func (r *bitReader) noExtension(typ string) {
	if r.bit() {
		r.fail("%s: extension additions are not supported", typ)
	}
}
