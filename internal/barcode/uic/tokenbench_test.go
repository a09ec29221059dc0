package uic

import (
	"fmt"
	"testing"
	"time"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/barcode/vdv"
	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/keyref/tokentest"
)

// tickets is how many tickets one iteration of BenchmarkTokenVsFile issues
// and inspects.
const tickets = 10_000

// rounds is how often each profile's file and token runs alternate.
const rounds = 2

// BenchmarkTokenVsFile issues and inspects 10,000 tickets per iteration in
// each barcode profile with the key in a file and with the same key in a
// SoftHSM2 token, file and token side by side: rounds of file, token, file,
// token… per profile (sub-benchmark names end in the round), so a change
// of the machine's load hits both alike:
//
//	go test -run '^$' -bench TokenVsFile -benchtime 1x ./internal/barcode/uic
//
// Issuing signs (the token path: one C_SignInit/C_Sign per ticket on a
// pooled session); inspecting verifies with the public key alone, the same
// work for both. us/ticket is per issued and inspected ticket.
func BenchmarkTokenVsFile(b *testing.B) {
	tk := tokentest.New(b)
	c := sampleClaims()
	now := c.ValidFrom

	edFile, err := barcode.GenerateKey(1, nil)
	if err != nil {
		b.Fatal(err)
	}
	edSigner, err := keyref.Import(tk.URI(tokentest.Unique("bench-ed")), edFile.Private)
	if err != nil {
		b.Fatal(err)
	}
	edToken, err := barcode.TokenKey(1, edSigner)
	if err != nil {
		b.Fatal(err)
	}
	uicFile := devIssuer(b, 1)
	uicSigner, err := keyref.Import(tk.URI(tokentest.Unique("bench-uic")), uicFile.Key)
	if err != nil {
		b.Fatal(err)
	}
	uicToken := &Issuer{RICS: uicFile.RICS, KeyID: uicFile.KeyID, Version: 1, Signer: uicSigner, Name: uicFile.Name, Development: true}
	pki, err := vdv.GenerateDevPKI(nil, now)
	if err != nil {
		b.Fatal(err)
	}
	var trust vdv.Trust
	if _, err := trust.AddRoot(pki.Root, true); err != nil {
		b.Fatal(err)
	}
	if _, err := trust.AddCA(pki.CA, now); err != nil {
		b.Fatal(err)
	}
	vdvSigner, err := keyref.Import(tk.URI(tokentest.Unique("bench-vdv")), pki.Issuer.Key)
	if err != nil {
		b.Fatal(err)
	}
	vdvToken, err := vdv.NewTokenIssuer(vdv.DevOrg, vdv.DevOrg, vdvSigner.(vdv.RawSigner), pki.Issuer.Cert, &trust, now)
	if err != nil {
		b.Fatal(err)
	}
	verify, err := barcode.NewVerifyKeyring(barcode.Key{ID: 1, Public: edFile.Public})
	if err != nil {
		b.Fatal(err)
	}
	inspectEd := func(p []byte) error { _, err := barcode.Verify(p, verify); return err }
	inspectUIC := func(p []byte) error {
		_, ct, err := Read(p)
		if err == nil {
			err = ct.VerifySignature(&uicFile.Key.PublicKey)
		}
		return err
	}
	inspectVDV := func(p []byte) error { _, err := vdv.Verify(p, &trust, now); return err }
	dticket := Product{Number: 9999, Area: "Deutschland"}
	vdvProduct := vdv.Product{Number: 9999, Area: "Deutschland", PriceCents: 5800, VATBP: 700}
	type side struct {
		name  string
		issue func() ([]byte, error)
	}
	profiles := []struct {
		name    string
		sides   [2]side
		inspect func([]byte) error
	}{
		{"inspection-ed25519", [2]side{
			{"file", func() ([]byte, error) { return signEd(c, edFile) }},
			{"token", func() ([]byte, error) { return signEd(c, edToken) }}}, inspectEd},
		{"uic-918-3-dsa1024", [2]side{
			{"file", func() ([]byte, error) { return Issue(c, dticket, uicFile, now) }},
			{"token", func() ([]byte, error) { return Issue(c, dticket, uicToken, now) }}}, inspectUIC},
		{"vdv-ka-rsa1024", [2]side{
			{"file", func() ([]byte, error) { return vdv.Issue(c, vdvProduct, pki.Issuer, now) }},
			{"token", func() ([]byte, error) { return vdv.Issue(c, vdvProduct, vdvToken, now) }}}, inspectVDV},
	}
	for _, p := range profiles {
		for round := range rounds {
			for _, s := range p.sides {
				b.Run(fmt.Sprintf("%s/%s/round%d", p.name, s.name, round+1), func(b *testing.B) {
					start := time.Now()
					for range b.N {
						for i := range tickets {
							payload, err := s.issue()
							if err != nil {
								b.Fatal(err)
							}
							if err := p.inspect(payload); err != nil {
								b.Fatalf("ticket %d: %v", i, err)
							}
						}
					}
					b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*tickets), "us/ticket")
				})
			}
		}
	}
}

// signEd signs c with k alone (a keyring of that one key).
func signEd(c barcode.Claims, k barcode.Key) ([]byte, error) {
	kr, err := barcode.NewKeyring(k)
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	p, _, err := barcode.SignWith(c, kr, 0)
	return p, err
}
