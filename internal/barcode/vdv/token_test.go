package vdv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/keyref/tokentest"
)

// TestIssueWithTokenKey: the organisation's RSA key, imported into a
// SoftHSM2 token with its certificate beside it, signs through raw RSA
// (CKM_RSA_X_509); ISO 9796-2 is deterministic, so the token's barcode is
// byte for byte the file key's, and it verifies under the trusted CA.
func TestIssueWithTokenKey(t *testing.T) {
	tk := tokentest.New(t)
	fileIss, trust := livePKI(t)
	ref := tk.URI(tokentest.Unique("vdv"))
	if _, err := keyref.Import(ref, fileIss.Key); err != nil {
		t.Fatal(err)
	}
	cert := filepath.Join(t.TempDir(), "org.cvc")
	if err := os.WriteFile(cert, fileIss.Cert, 0o600); err != nil {
		t.Fatal(err)
	}
	iss, err := LoadIssuer("6310:6262:"+ref+":"+cert, trust, now)
	if err != nil {
		t.Fatal(err)
	}
	if iss.Key != nil || iss.Signer == nil {
		t.Fatalf("issuer %+v", iss)
	}
	c := sampleClaims()
	c.FirstName = "Jürgen"
	b, err := Issue(c, dticket, iss, issued)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Issue(c, dticket, fileIss, issued)
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("the token's barcode differs from the file key's: %v", err)
	}
	v, err := Verify(b, trust, now)
	if err != nil || v.Claims.FirstName != "Jürgen" {
		t.Fatalf("verify: %v %+v", err, v.Claims)
	}
	// A key of the wrong kind is refused at load.
	ed := tk.URI(tokentest.Unique("not-rsa"))
	if _, err := keyref.Generate(ed, "ed25519"); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadIssuer("6310:6262:"+ed+":"+cert, trust, now); err == nil {
		t.Fatal("an Ed25519 token key was accepted as the VDV key")
	}
}
