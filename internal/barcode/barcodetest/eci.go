// Package barcodetest draws Aztec codes our encoder cannot produce, so tests
// can feed them to the reader: codes that start with an ECI designator
// (ISO/IEC 24778 FLG(n)). Only _test.go files import it.
package barcodetest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"

	"github.com/boombuler/barcode/utils"
)

// bits is an Aztec bit stream, most significant bit first.
type bits []bool

func (b *bits) add(v, n int) {
	for i := n - 1; i >= 0; i-- {
		*b = append(*b, v>>uint(i)&1 == 1)
	}
}

func (b bits) word(i, size int) int {
	v := 0
	for j := 0; j < size; j++ {
		v <<= 1
		if i*size+j < len(b) && b[i*size+j] {
			v |= 1
		}
	}
	return v
}

// AztecPNG draws data as a compact Aztec code (1–4 layers, at least 23 %
// error correction), optionally preceded by ECI designator eci (0–999999;
// negative: none), scale pixels per module with a 4-module quiet zone. The
// data is carried in binary shift (Upper B/S), as ZXing expects it.
func AztecPNG(data []byte, eci, scale int) ([]byte, error) {
	var msg bits
	if eci >= 0 {
		digits := fmt.Sprint(eci)
		msg.add(0, 5) // Upper P/S
		msg.add(0, 5) // Punct FLG(n)
		msg.add(len(digits), 3)
		for _, d := range digits {
			msg.add(int(d-'0')+2, 4) // digit mode codes 2..11
		}
	}
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 31)
		msg.add(31, 5) // Upper B/S
		msg.add(n, 5)
		for _, c := range rest[:n] {
			msg.add(int(c), 8)
		}
		rest = rest[n:]
	}
	ecc := len(msg)*23/100 + 11
	for layers := 1; layers <= 4; layers++ {
		wordSize := 6
		if layers > 2 {
			wordSize = 8
		}
		total := (88 + 16*layers) * layers
		stuffed := stuff(msg, wordSize)
		if len(stuffed)+ecc > total-total%wordSize || len(stuffed)/wordSize > 64 {
			continue
		}
		return draw(layers, wordSize, total, stuffed, scale)
	}
	return nil, fmt.Errorf("%d bytes do not fit a compact Aztec code", len(data))
}

// stuff inserts the complement bit after a word's first wordSize-1 bits when
// they are all equal, and pads the last word with ones.
func stuff(in bits, wordSize int) bits {
	var out bits
	mask := (1 << uint(wordSize)) - 2
	for i := 0; i < len(in); i += wordSize {
		w := 0
		for j := 0; j < wordSize; j++ {
			w <<= 1
			if i+j >= len(in) || in[i+j] {
				w |= 1
			}
		}
		switch w & mask {
		case mask:
			out.add(w&mask, wordSize)
			i--
		case 0:
			out.add(w|1, wordSize)
			i--
		default:
			out.add(w, wordSize)
		}
	}
	return out
}

func checked(in bits, totalBits, wordSize int, gf *utils.GaloisField) bits {
	n := len(in) / wordSize
	words := make([]int, n)
	for i := range words {
		words[i] = in.word(i, wordSize)
	}
	check := utils.NewReedSolomonEncoder(gf).Encode(words, totalBits/wordSize-n)
	var out bits
	out.add(0, totalBits%wordSize)
	for _, w := range append(words, check...) {
		out.add(w, wordSize)
	}
	return out
}

func draw(layers, wordSize, total int, stuffed bits, scale int) ([]byte, error) {
	gf := utils.NewGaloisField(0x43, 64, 1)
	if wordSize == 8 {
		gf = utils.NewGaloisField(0x012D, 256, 1)
	}
	message := checked(stuffed, total, wordSize, gf)
	var mode bits
	mode.add(layers-1, 2)
	mode.add(len(stuffed)/wordSize-1, 6)
	mode = checked(mode, 28, 4, utils.NewGaloisField(0x13, 16, 1))

	size := 11 + 4*layers
	dark := make([]bool, size*size)
	set := func(x, y int) { dark[y*size+x] = true }
	for i, off := 0, 0; i < layers; i++ {
		row := (layers-i)*4 + 9
		for j := 0; j < row; j++ {
			for k := 0; k < 2; k++ {
				at := func(n int) bool { return off+n < len(message) && message[off+n] }
				if at(j*2 + k) {
					set(i*2+k, i*2+j)
				}
				if at(row*2 + j*2 + k) {
					set(i*2+j, size-1-i*2-k)
				}
				if at(row*4 + j*2 + k) {
					set(size-1-i*2-k, size-1-i*2-j)
				}
				if at(row*6 + j*2 + k) {
					set(size-1-i*2-j, i*2+k)
				}
			}
		}
		off += row * 8
	}
	c := size / 2
	for i := 0; i < 7; i++ {
		o := c - 3 + i
		if mode[i] {
			set(o, c-5)
		}
		if mode[i+7] {
			set(c+5, o)
		}
		if mode[20-i] {
			set(o, c+5)
		}
		if mode[27-i] {
			set(c-5, o)
		}
	}
	for i := 0; i < 5; i += 2 { // bull's eye
		for j := c - i; j <= c+i; j++ {
			set(j, c-i)
			set(j, c+i)
			set(c-i, j)
			set(c+i, j)
		}
	}
	for _, p := range [][2]int{{c - 5, c - 5}, {c - 4, c - 5}, {c - 5, c - 4}, {c + 5, c - 5}, {c + 5, c - 4}, {c + 5, c + 4}} {
		set(p[0], p[1]) // orientation marks
	}

	const quiet = 4
	side := (size + 2*quiet) * scale
	img := image.NewPaletted(image.Rect(0, 0, side, side), color.Palette{color.White, color.Black})
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			if !dark[y*size+x] {
				continue
			}
			for dy := 0; dy < scale; dy++ {
				for dx := 0; dx < scale; dx++ {
					img.SetColorIndex((x+quiet)*scale+dx, (y+quiet)*scale+dy, 1)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
