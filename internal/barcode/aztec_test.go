package barcode

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/testtool"
)

func TestAztecImageRoundTripBinaryAndText(t *testing.T) {
	kr := testKeyring(t, 1, 1)
	p, _, err := SignWith(sampleClaims(), kr, 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"binary": p, "text": []byte(Text(p))} {
		img, err := PNG(data, 4, 4)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeImage(img)
		if err != nil {
			t.Fatalf("%s: decode: %v", name, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("%s: decoded bytes differ", name)
		}
		// ParseInput yields the binary payload from either image.
		in, err := ParseInput(img)
		if err != nil || !bytes.Equal(in, p) {
			t.Fatalf("%s: ParseInput: %v", name, err)
		}
	}
}

func TestPNGGeometry(t *testing.T) {
	p, _, _ := SignWith(sampleClaims(), testKeyring(t, 1, 1), 0)
	m, err := Aztec(p)
	if err != nil {
		t.Fatal(err)
	}
	// a 205-byte payload needs a full-range symbol (compact ones stop at 27 modules).
	if m.Size < 31 || m.Size > 79 {
		t.Errorf("symbol size %d", m.Size)
	}
	b, err := PNG(p, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if side := (m.Size + 4) * 3; img.Bounds() != image.Rect(0, 0, side, side) {
		t.Errorf("bounds %v, want side %d", img.Bounds(), side)
	}
	// the quiet zone is white and the bull's-eye centre is dark.
	if r, _, _, _ := img.At(0, 0).RGBA(); r != 0xffff {
		t.Error("quiet zone not white")
	}
	c := (m.Size/2 + 2) * 3
	if r, _, _, _ := img.At(c, c).RGBA(); r != 0 {
		t.Error("centre module not dark")
	}
	if _, err := PNG(p, 0, 0); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("scale 0: %v", err)
	}
}

func TestDecodeJPEGPhoto(t *testing.T) {
	p, _, _ := SignWith(sampleClaims(), testKeyring(t, 1, 1), 0)
	b, _ := PNG(p, 6, 4)
	img, _ := png.Decode(bytes.NewReader(b))
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 60}); err != nil {
		t.Fatal(err)
	}
	got, err := ParseInput(buf.Bytes())
	if err != nil || !bytes.Equal(got, p) {
		t.Fatalf("jpeg: %v", err)
	}
	white := image.NewGray(image.Rect(0, 0, 60, 60))
	for i := range white.Pix {
		white.Pix[i] = 0xff
	}
	buf.Reset()
	_ = png.Encode(&buf, white)
	if _, err := DecodeImage(buf.Bytes()); apperr.As(err) == nil || apperr.As(err).Code != "no_barcode_found" {
		t.Errorf("white image: %v", err)
	}
}

func TestDecodeImageRejectsHugeImages(t *testing.T) {
	// A valid PNG header claiming 100000×100000 pixels must not be decoded.
	var buf bytes.Buffer
	_ = png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1)))
	b := buf.Bytes()
	hdr := bytes.Clone(b)
	copy(hdr[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	binary.BigEndian.PutUint32(hdr[29:33], crc32.ChecksumIEEE(hdr[12:29])) // IHDR CRC
	if _, err := DecodeImage(hdr); apperr.As(err) == nil || apperr.As(err).Code != "image_too_large" {
		t.Errorf("huge image: %v", err)
	}
}

func TestLatin1(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	s := Latin1(all)
	if n := len([]rune(s)); n != 256 {
		t.Fatalf("%d runes", n)
	}
	back, err := FromLatin1(s)
	if err != nil || !bytes.Equal(back, all) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := FromLatin1("price 5 €"); err == nil {
		t.Error("€ accepted as ISO-8859-1")
	}
}

func TestParseInputForms(t *testing.T) {
	p, _, _ := SignWith(sampleClaims(), testKeyring(t, 1, 1), 0)
	for name, in := range map[string][]byte{
		"raw":       p,
		"base64url": []byte(Text(p) + "\n"),
		"latin1":    []byte(Latin1(p)),
	} {
		got, err := ParseInput(in)
		if err != nil || !bytes.Equal(got, p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ParseInput([]byte("not a € payload")); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("garbage: %v", err)
	}
}

func TestInspectAndDescribe(t *testing.T) {
	kr := testKeyring(t, 4, 1)
	c := sampleClaims()
	c.Environment = EnvTest
	p, _, _ := SignWith(c, kr, 0)
	mid := time.Date(2026, 11, 15, 11, 0, 0, 0, time.UTC)
	r := Inspect(p, kr, mid)
	if !r.Genuine || r.State != StateValid || !r.Test || r.Claims.TicketID != c.TicketID {
		t.Fatalf("report %+v", r)
	}
	if r.Acceptable(false) || !r.Acceptable(true) {
		t.Errorf("test ticket: Acceptable(false)=%v Acceptable(true)=%v", r.Acceptable(false), r.Acceptable(true))
	}
	out := r.String()
	testtool.Contains(t, out,
		"GENUINE: signed by inspection key 4",
		"TEST TICKET",
		"VALID NOW: until 2026-12-01 01:00 CET (373h0m0s left)",
		"Passenger:   Jürgen Müller-Lüdenscheidt",
		"Born:        1990-02-28",
		"Product:     Deutschlandticket Monatsabo (farebox-product-0a1b2c3d-4e5f-4a6b-9c8d-7e6f5a4b3c2d)",
		"Ticket:      farebox-ticket-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f",
		"Valid from:  2026-11-01 01:00 CET  (2026-11-01T00:00:00Z)",
		"Checked at:  2026-11-15 12:00 CET",
	)
	if r := Inspect(p, kr, c.ValidFrom.Add(-90*time.Minute)); r.State != StateNotYet ||
		!strings.Contains(r.String(), "NOT YET VALID: valid from 2026-11-01 01:00 CET (in 1h30m0s)") {
		t.Errorf("before: %s", r)
	}
	// valid_until is the inclusive last second (docs/rules.md).
	for _, at := range []time.Time{c.ValidUntil, c.ValidUntil.Add(999 * time.Millisecond)} {
		if r := Inspect(p, kr, at); r.State != StateValid || !strings.Contains(r.String(), "VALID NOW") || !r.Acceptable(true) {
			t.Errorf("at %s, in valid_until's second: %s", at, r)
		}
	}
	if r := Inspect(p, kr, c.ValidUntil.Add(time.Second)); r.State != StateExpired || !strings.Contains(r.String(), "EXPIRED") || r.Acceptable(true) {
		t.Errorf("a second after valid_until: %s", r)
	}
	live := sampleClaims()
	lp, _, _ := SignWith(live, kr, 0)
	if r := Inspect(lp, kr, mid); r.Test || strings.Contains(r.String(), "TEST") || !r.Acceptable(false) {
		t.Errorf("live ticket reported as test: %s", r)
	}
	lp[len(lp)-1] ^= 0x80
	if r := Inspect(lp, kr, mid); r.Genuine || r.State != StateNotGenuine ||
		r.String() != "NOT GENUINE: its signature does not verify (forged or altered)\n" {
		t.Errorf("tampered: %+v", r)
	}
	if r := Inspect(lp, testKeyring(t, 9, 2), mid); r.Reason != "it is signed with an unknown key" {
		t.Errorf("unknown key: %+v", r)
	}
}
