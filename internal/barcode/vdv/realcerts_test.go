package vdv

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode/barcodetest"
)

// libKPimItinerary is KDE Itinerary 22.12's library (libkpimitinerary5,
// installed with libkpimitinerary-bin). It embeds the public VDV CA
// certificates (the EU VDV root and the DE/LU VDV CAs) as CV certificates
// whose bodies its build already recovered with the root key: 7F21 {5F4E
// body}.
const libKPimItinerary = "/usr/lib/x86_64-linux-gnu/libKPimItinerary.so.5"

// realVDVCerts finds the 7F21/5F4E objects embedded in the library.
func realVDVCerts(t *testing.T) [][]byte {
	t.Helper()
	lib, err := os.ReadFile(libKPimItinerary)
	if err != nil {
		t.Fatalf("%v (install libkpimitinerary-bin, %s)", err, barcodetest.KitineraryExtractor)
	}
	var out [][]byte
	for i := 0; ; {
		j := bytes.Index(lib[i:], []byte{0x7F, 0x21})
		if j < 0 {
			break
		}
		i += j
		v, _, err := ReadTagged(lib[i:], TagCertificate)
		if err == nil && bytes.HasPrefix(v, []byte{0x5F, 0x4E}) {
			out = append(out, AppendTLV(nil, TagCertificate, v))
		}
		i += 2
	}
	return out
}

// TestRealVDVCertificates parses the real VDV certificates with farebox's
// certificate reader: the CV certificate body layout (profile, CAR, CHR
// after four zero bytes, CHA, BCD expiry, OID of 7 or 9 bytes, modulus of
// the profile's size, 4-byte exponent) is the VDV's. What this cannot
// check: the root's ISO 9796-2 signatures over the CA bodies (the library
// keeps only the recovered bodies).
func TestRealVDVCertificates(t *testing.T) {
	certs := realVDVCerts(t)
	if len(certs) < 20 {
		t.Fatalf("%d VDV certificates found in %s", len(certs), libKPimItinerary)
	}
	root := MakeRef("EU", "VDV", 0, 1, 1, 0x06)
	var tr Trust
	var roots, cas int
	oids := map[string]int{}
	for _, b := range certs {
		c, signed, rest, err := ReadCert(b, nil)
		if err != nil || signed || len(rest) != 0 {
			t.Fatalf("real certificate % X…: %v", b[:16], err)
		}
		oids[string(c.OID)]++
		if string(c.CHA[:6]) != "VDV_KA" {
			t.Errorf("CHA %q", c.CHA)
		}
		if c.CAR != root {
			t.Errorf("%s certified by %s, not the EU VDV root", c.CHR, c.CAR)
		}
		if c.SelfSigned() {
			roots++
			if c.Profile != 7 || c.Key.N.BitLen() != 1984 || c.CHR != root {
				t.Errorf("root %s: profile %d, %d bits", c.CHR, c.Profile, c.Key.N.BitLen())
			}
			if _, err := tr.AddRoot(b, false); err != nil {
				t.Error(err)
			}
			continue
		}
		cas++
		if c.Profile != 3 || c.Key.N.BitLen() != 1536 || (string(c.CHR[:5]) != "DEVDV" && string(c.CHR[:5]) != "LUVDV") {
			t.Errorf("CA %s: profile %d, %d bits", c.CHR, c.Profile, c.Key.N.BitLen())
		}
		if c.Expires.Before(time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)) || c.Expires.After(time.Date(2032, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("CA %s expires %s", c.CHR, c.Expires)
		}
		// Written back, the body is byte for byte the VDV's.
		back, err := UnsignedCert(c)
		if err != nil || !bytes.Equal(back, b) {
			t.Errorf("CA %s does not re-encode to the same bytes", c.CHR)
		}
	}
	if roots != 1 || cas < 20 {
		t.Errorf("%d roots, %d CAs", roots, cas)
	}
	if oids[string(oidISO9796SHA1)] == 0 || oids["\x2A\x86\x48\x86\xF7\x0D\x01\x01\x05"] == 0 {
		t.Errorf("OIDs seen: %v", oids)
	}
	t.Logf("%d real VDV certificates: 1 root (EU VDV, 1984 bits), %d CAs (1536 bits); OIDs %d", len(certs), cas, len(oids))
}
