package barcode

import (
	"bytes"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary bytes to the decoder and verifier: no panic, and
// anything that verifies re-encodes to exactly the same bytes.
func FuzzVerify(f *testing.F) {
	kr := testKeyring(f, 1, 1)
	p, _, _ := SignWith(sampleClaims(), kr, 0)
	f.Add(p)
	f.Add(p[:headerLen+sigLen])
	f.Add([]byte("FB\x01"))
	c := sampleClaims()
	c.TicketID, c.BirthDate, c.Environment = "plain", "", EnvTest
	q, _, _ := SignWith(c, kr, 0)
	f.Add(q)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		// Parse accepted it: the body must be canonical (re-encoding matches).
		body, err := encodeBody(c, c.KeyID)
		if err != nil {
			t.Fatalf("parsed claims do not re-encode: %v (%+v)", err, c)
		}
		if !bytes.Equal(body, data[:len(data)-sigLen]) {
			t.Fatalf("non-canonical body accepted:\n% x\n% x", body, data[:len(data)-sigLen])
		}
		if v, err := Verify(data, kr); err == nil && !bytes.Equal(data, p) && !bytes.Equal(data, q) {
			t.Fatalf("forged payload verifies: %+v", v)
		}
	})
}

// FuzzParseInput checks that any inspector input is handled without panic.
func FuzzParseInput(f *testing.F) {
	kr := testKeyring(f, 1, 1)
	p, _, _ := SignWith(sampleClaims(), kr, 0)
	img, _ := PNG(p, 2, 1)
	f.Add(p)
	f.Add([]byte(Text(p)))
	f.Add([]byte(Latin1(p)))
	f.Add(img[:64])
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseInput(data)
		if err != nil {
			return
		}
		r := Inspect(b, kr, time.Unix(1_790_000_000, 0))
		if r.Genuine && !bytes.Equal(b, p) {
			t.Fatalf("foreign input judged genuine: %+v", r)
		}
	})
}

func BenchmarkSign(b *testing.B) {
	kr := testKeyring(b, 1, 1)
	c := sampleClaims()
	for b.Loop() {
		if _, _, err := SignWith(c, kr, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	kr := testKeyring(b, 1, 1)
	p, _, _ := SignWith(sampleClaims(), kr, 0)
	for b.Loop() {
		if _, err := Verify(p, kr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPNG(b *testing.B) {
	p, _, _ := SignWith(sampleClaims(), testKeyring(b, 1, 1), 0)
	for _, g := range []struct {
		name         string
		scale, quiet int
	}{{"1px", 1, 0}, {"4px_quiet4", 4, 4}} {
		b.Run(g.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := PNG(p, g.scale, g.quiet); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeImage(b *testing.B) {
	p, _, _ := SignWith(sampleClaims(), testKeyring(b, 1, 1), 0)
	img, _ := PNG(p, 4, 4)
	for b.Loop() {
		if _, err := DecodeImage(img); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAztec(b *testing.B) {
	p, _, _ := SignWith(sampleClaims(), testKeyring(b, 1, 1), 0)
	for b.Loop() {
		if _, err := Aztec(p); err != nil {
			b.Fatal(err)
		}
	}
}
