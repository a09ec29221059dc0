package vdv

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

func TestTLVKnownEncodings(t *testing.T) {
	for _, c := range []struct {
		tag  uint32
		n    int
		head []byte
	}{
		{0x42, 8, []byte{0x42, 0x08}},
		{0x9E, 128, []byte{0x9E, 0x81, 0x80}},
		{0x7F21, 200, []byte{0x7F, 0x21, 0x81, 0xC8}},
		{0x5F37, 0x100, []byte{0x5F, 0x37, 0x82, 0x01, 0x00}},
		{0x85, 0x10000, []byte{0x85, 0x83, 0x01, 0x00, 0x00}},
		{0xDA, 0, []byte{0xDA, 0x00}},
	} {
		v := bytes.Repeat([]byte{0xA5}, c.n)
		b := AppendTLV(nil, c.tag, v)
		if !bytes.Equal(b[:len(c.head)], c.head) || len(b) != len(c.head)+c.n {
			t.Fatalf("tag %X len %d: header % X", c.tag, c.n, b[:len(c.head)])
		}
		got, rest, err := ReadTLV(append(b, 0xEE))
		if err != nil || got.Tag != c.tag || !bytes.Equal(got.Value, v) || !bytes.Equal(rest, []byte{0xEE}) {
			t.Fatalf("tag %X: read %X %d rest % X err %v", c.tag, got.Tag, len(got.Value), rest, err)
		}
	}
}

func TestTLVRejectsMalformed(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":           {},
		"no length":       {0x9E},
		"tag truncated":   {0x7F},
		"tag 5 bytes":     {0x7F, 0x81, 0x81, 0x81, 0x01, 0x00},
		"value short":     {0x9A, 0x05, 1, 2, 3},
		"length trunc":    {0x9E, 0x82, 0x01},
		"indefinite":      {0x9E, 0x80, 0x00, 0x00},
		"length 0x84":     {0x9E, 0x84, 0, 0, 0, 1, 0},
		"not shortest 81": {0x9E, 0x81, 0x05, 1, 2, 3, 4, 5},
		"not shortest 82": {0x9E, 0x82, 0x00, 0x85},
		"huge length":     {0x9E, 0x83, 0xFF, 0xFF, 0xFF},
	} {
		if _, _, err := ReadTLV(b); !errors.Is(err, ErrTLV) {
			t.Errorf("%s: err %v, want ErrTLV", name, err)
		}
	}
}

// TestTLVRandomRoundTrip writes random sequences of objects (random tags of
// 1..3 bytes, values 0..70000 bytes) and reads them back; every prefix cut
// short of the end and every single-byte corruption is either rejected or
// read without panicking and without reading past the input.
func TestTLVRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tags := []uint32{0x42, 0x85, 0x8A, 0x9A, 0x9E, 0xDA, 0xDB, 0xDC, 0x5F37, 0x5F38, 0x5F4E, 0x7F21, 0x5F8101}
	for round := 0; round < 300; round++ {
		var want []TLV
		var b []byte
		for i := r.IntN(6); i >= 0; i-- {
			n := r.IntN(300)
			if r.IntN(20) == 0 {
				n = 256 + r.IntN(70000)
			}
			v := make([]byte, n)
			for j := range v {
				v[j] = byte(r.Uint32())
			}
			tg := tags[r.IntN(len(tags))]
			want = append(want, TLV{tg, v})
			b = AppendTLV(b, tg, v)
		}
		got, err := ParseTLVs(b)
		if err != nil || len(got) != len(want) {
			t.Fatalf("round %d: %d objects, err %v", round, len(got), err)
		}
		for i := range got {
			if got[i].Tag != want[i].Tag || !bytes.Equal(got[i].Value, want[i].Value) {
				t.Fatalf("round %d object %d differs", round, i)
			}
		}
		if len(b) > 0 {
			cut := r.IntN(len(b))
			if _, err := ParseTLVs(b[:cut:cut]); err == nil && cut > 0 {
				// a cut may land exactly between objects
				if _, err2 := ParseTLVs(b[cut:]); err2 != nil {
					t.Fatalf("round %d: cut at %d read as whole but the rest fails: %v", round, cut, err2)
				}
			}
			c := bytes.Clone(b)
			c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
			_, _ = ParseTLVs(c[:len(c):len(c)])
		}
	}
}

func FuzzReadTLV(f *testing.F) {
	f.Add([]byte{0x9E, 0x81, 0x80})
	f.Add(AppendTLV(nil, 0x7F21, AppendTLV(nil, 0x5F37, make([]byte, 200))))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := ParseTLVs(b[:len(b):len(b)])
		if err != nil {
			return
		}
		var back []byte
		for _, x := range ts {
			back = AppendTLV(back, x.Tag, x.Value)
		}
		if !bytes.Equal(back, b) {
			t.Fatalf("read then written % X, want % X", back, b)
		}
	})
}
