package barcode

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLongNamesCarriedWhole: names up to MaxTextBytes are carried whole.
// Texts that fit 255 bytes keep version 1 (the same bytes as before); a
// longer one switches the payload to version 2 with 2-byte lengths. The
// largest payload still draws and scans, in binary and in text form.
func TestLongNamesCarriedWhole(t *testing.T) {
	kr := testKeyring(t, 1, 7)
	four := strings.Repeat("𝔄", MaxTextBytes/4) // 100 characters, 400 bytes
	for _, tc := range []struct {
		name               string
		first, last, pname string
		version            int
	}{
		{"255 bytes", strings.Repeat("a", 255), strings.Repeat("ü", 127) + "b", "Deutschlandticket", Version},
		{"256 bytes", strings.Repeat("a", 256), "Müller", "Deutschlandticket", VersionLongText},
		{"100 four-byte characters", four, "Müller", "Deutschlandticket", VersionLongText},
		{"largest", four, four, four, VersionLongText},
	} {
		c := sampleClaims()
		c.FirstName, c.LastName, c.ProductName = tc.first, tc.last, tc.pname
		p, _, err := SignWith(c, kr, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if int(p[2]) != tc.version || len(p) > MaxPayloadLen {
			t.Errorf("%s: version %d, %d bytes (max %d)", tc.name, p[2], len(p), MaxPayloadLen)
		}
		got, err := Verify(p, kr)
		want := c
		want.Version, want.KeyID = tc.version, 1
		if err != nil || !cmp.Equal(want, got) {
			t.Errorf("%s: %v %s", tc.name, err, cmp.Diff(want, got))
		}
		for form, data := range map[string][]byte{"binary": p, "text": []byte(Text(p))} {
			img, err := PNG(data, 4, 4)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.name, form, err)
			}
			if back, err := ParseInput(img); err != nil || !bytes.Equal(back, p) {
				t.Errorf("%s %s: the code does not scan back: %v", tc.name, form, err)
			}
		}
	}

	// A version 2 payload whose texts all fit 255 bytes is not canonical.
	c := sampleClaims()
	body, err := encodeBody(c, 7)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{c.ProductName, c.FirstName, c.LastName}
	at := len(body) - 3 - len(c.ProductName) - len(c.FirstName) - len(c.LastName)
	v2 := append([]byte(nil), body[:at]...)
	v2[2] = VersionLongText
	for _, s := range texts {
		v2 = binary.BigEndian.AppendUint16(v2, uint16(len(s)))
		v2 = append(v2, s...)
	}
	if _, err := Parse(append(v2, make([]byte, sigLen)...)); err == nil {
		t.Error("a version 2 payload with short texts parses")
	}
	if _, err := Parse(append(append([]byte(nil), body...), make([]byte, sigLen)...)); err != nil {
		t.Fatalf("the version 1 control does not parse: %v", err)
	}
}
