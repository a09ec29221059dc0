package uic

import (
	"testing"

	"github.com/farebox/farebox/internal/barcode"
	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/keyref/tokentest"
)

// TestIssueWithTokenKey: the issuer's DSA key lives in a SoftHSM2 token
// (generated there, and a registered key imported there); the barcodes it
// signs read back and verify with the public key the token exports, and
// inspection through a Trust of that key alone judges them genuine.
func TestIssueWithTokenKey(t *testing.T) {
	tk := tokentest.New(t)
	generated := tk.URI(tokentest.Unique("uic"))
	if _, err := keyref.Generate(generated, "dsa-1024"); err != nil {
		t.Fatal(err)
	}
	imported := tk.URI(tokentest.Unique("uic-registered"))
	registered := devIssuer(t, 2)
	if _, err := keyref.Import(imported, registered.Key); err != nil {
		t.Fatal(err)
	}
	for ref, version := range map[string]int{generated: 1, imported: 2} {
		iss, err := LoadIssuer("1080:42:"+ref, "DB Regio")
		if err != nil {
			t.Fatal(err)
		}
		if iss.Version != version || iss.Key != nil || iss.Signer == nil {
			t.Fatalf("issuer %+v", iss)
		}
		c := sampleClaims()
		c.LastName = "Ødegård-王"
		b, err := Issue(c, Product{Number: 9999, Area: "Deutschland"}, iss, issued)
		if err != nil {
			t.Fatal(err)
		}
		tkt, ct, err := Read(b)
		if err != nil || tkt.RICS != 1080 || tkt.KeyID != 42 || tkt.Container != version || tkt.Claims.LastName != "Ødegård-王" {
			t.Fatalf("v%d read back %+v %v", version, tkt, err)
		}
		if err := ct.VerifySignature(iss.PublicKey()); err != nil {
			t.Fatalf("v%d: the token's signature does not verify with its public key: %v", version, err)
		}
		if version == 2 && ct.VerifySignature(&registered.Key.PublicKey) != nil {
			t.Fatal("the imported key's signature does not verify with the registered public key")
		}
		var trust Trust
		trust.Add(1080, 42, iss.PublicKey(), false)
		if r := Inspect(b, &trust, c.ValidFrom); r.State == barcode.StateNotGenuine {
			t.Fatalf("v%d inspection: %+v", version, r)
		}
		b[len(b)-1] ^= 1
		if r := Inspect(b, &trust, c.ValidFrom); r.State != barcode.StateNotGenuine {
			t.Fatalf("v%d: an altered barcode was accepted: %+v", version, r)
		}
	}
	if _, err := LoadIssuer("1080:42:"+tk.URI("no-such-key"), "x"); err == nil {
		t.Fatal("a missing token key was accepted")
	}
}
