package vdv

import (
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every reader of outside input: the
// barcode splitter, the ticket data and certificate body decoders, and
// Verify with a trusted chain. None may panic; Verify must not accept
// anything the fuzzer makes (it has no key).
func FuzzDecode(f *testing.F) {
	iss, trust := livePKI(f)
	b, err := Issue(sampleClaims(), dticket, iss, issued)
	if err != nil {
		f.Fatal(err)
	}
	data, _ := EncodeTicket(sampleClaims(), dticket, iss, issued)
	body, _ := iss.Info.Body()
	f.Add(b)
	f.Add(data)
	f.Add(body)
	f.Fuzz(func(t *testing.T, in []byte) {
		in = in[:len(in):len(in)]
		_, _ = Parse(in)
		_, _ = DecodeTicket(in)
		_, _ = ParseCertBody(in)
		_, _, _, _ = ReadCert(in, iss.Info.Key)
		if string(in) != string(b) {
			if _, err := Verify(in, trust, now); err == nil {
				t.Fatalf("fuzzed input % X verifies", in)
			}
		}
	})
}
