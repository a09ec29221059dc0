package uic

import (
	"testing"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/vdv"
)

// BenchmarkProfiles encodes and signs one ticket per iteration in each
// barcode profile, beside farebox's Ed25519 payload, in one run:
//
//	go test -run '^$' -bench Profiles -benchmem ./internal/barcode/uic
//
// vdv-ka-static: ticket data, ISO 9796-2 RSA-1024 signature (SHA-1) under
// a development PKI (the chain's keys are made once, outside the timing).
func BenchmarkProfiles(b *testing.B) {
	c := sampleClaims()
	b.Run("farebox-ed25519", func(b *testing.B) {
		k, err := barcode.GenerateKey(1, nil)
		if err != nil {
			b.Fatal(err)
		}
		kr, err := barcode.NewKeyring(k)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, err := barcode.SignWith(c, kr, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, v := range []int{1, 2} {
		iss := devIssuer(b, v)
		name := map[int]string{1: "uic-918-3-uflex-v01-dsa1024", 2: "uic-918-3-uflex-v02-dsa2048"}[v]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Issue(c, Product{Number: 9999, Area: "Deutschland"}, iss, issued); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	p, err := vdv.GenerateDevPKI(nil, issued)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("vdv-ka-static-rsa1024-iso9796", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := vdv.Issue(c, vdv.Product{Number: 9999, Area: "Deutschland", PriceCents: 5800, VATBP: 700}, p.Issuer, issued); err != nil {
				b.Fatal(err)
			}
		}
	})
}
