package keyref_test

import (
	"crypto"
	"crypto/dsa"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/keyref/tokentest"
)

func TestParseURI(t *testing.T) {
	u, err := keyref.ParseURI("pkcs11:token=Farebox%20HSM;object=books;id=%01%02?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-value=12%2634")
	if err != nil {
		t.Fatal(err)
	}
	if u.Token != "Farebox HSM" || u.Object != "books" || string(u.ID) != "\x01\x02" || u.PIN != "12&34" || u.ModulePath != "/usr/lib/softhsm/libsofthsm2.so" {
		t.Fatalf("parsed %+v", u)
	}
	if s := u.String(); strings.Contains(s, "12") || !strings.Contains(s, "pin-value=***") || !strings.Contains(s, "token=Farebox%20HSM") {
		t.Fatalf("String() = %s: the PIN must not show", s)
	}
	for _, bad := range []string{
		"pkcs11:object=books?module-path=/m.so",              // no token
		"pkcs11:token=t?module-path=/m.so",                   // no key
		"pkcs11:token=t;object=k",                            // no module
		"pkcs11:token=t;objet=k?module-path=/m.so",           // misspelt attribute
		"pkcs11:token=t;object=k;object=j?module-path=/m.so", // twice
		"pkcs11:token=t;object=k?module-path=/m.so&pin-value=1&pin-source=/f",
		"pkcs11:token=t;object=k;type=public?module-path=/m.so", // not a private key
		"pkcs11:token=t;object=%zz?module-path=/m.so",           // bad escape
		"pkcs11:token=t;object?module-path=/m.so",               // no value
	} {
		if _, err := keyref.ParseURI(bad); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
	if !keyref.IsToken("PKCS11:token=x") || keyref.IsToken("/etc/keys/pkcs11:x") {
		t.Fatal("IsToken")
	}
}

// verify checks sig of msg with pub the way a verifier outside farebox
// does: with the standard library and the public key alone.
func verify(t *testing.T, pub crypto.PublicKey, msg, sig []byte) {
	t.Helper()
	d := sha256.Sum256(msg)
	ok := false
	switch p := pub.(type) {
	case ed25519.PublicKey:
		ok = ed25519.Verify(p, msg, sig)
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(p, d[:], sig)
	case *rsa.PublicKey:
		ok = rsa.VerifyPKCS1v15(p, crypto.SHA256, d[:], sig) == nil
	case *dsa.PublicKey:
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &rs); err != nil {
			t.Fatal(err)
		}
		ok = dsa.Verify(p, d[:p.Q.BitLen()/8], rs.R, rs.S)
	}
	if !ok {
		t.Fatalf("a %T signature made through the token does not verify", pub)
	}
}

func signBoth(t *testing.T, s crypto.Signer) {
	t.Helper()
	msg := []byte("Fahrkarte 🚆 تذكرة 车票")
	var sig []byte
	var err error
	if _, ok := s.Public().(ed25519.PublicKey); ok {
		sig, err = s.Sign(nil, msg, crypto.Hash(0))
	} else {
		d := sha256.Sum256(msg)
		sig, err = s.Sign(rand.Reader, d[:], crypto.SHA256)
	}
	if err != nil {
		t.Fatal(err)
	}
	verify(t, s.Public(), msg, sig)
}

func TestGenerateEachKindInTheToken(t *testing.T) {
	tk := tokentest.New(t)
	for _, kind := range []string{"ed25519", "ec-p256", "rsa-1024", "rsa-2048", "dsa-1024"} {
		t.Run(kind, func(t *testing.T) {
			ref := tk.URI(tokentest.Unique(kind))
			s, err := keyref.Generate(ref, kind)
			if err != nil {
				t.Fatal(err)
			}
			signBoth(t, s)
			// The exported public key (PKIX PEM) is the token's.
			p, err := keyref.PublicPEM(s)
			if err != nil {
				t.Fatal(err)
			}
			blk, _ := pem.Decode(p)
			exported, err := x509.ParsePKIXPublicKey(blk.Bytes)
			if err != nil || !samePublic(s.Public(), exported) {
				t.Fatalf("exported public key: %v", err)
			}
			// Opened again (as after a restart), it is the same key.
			again, err := keyref.Open(ref)
			if err != nil {
				t.Fatal(err)
			}
			if !samePublic(s.Public(), again.Public()) {
				t.Fatal("the key opened again has another public key")
			}
			signBoth(t, again)
			if _, err := keyref.Generate(ref, kind); err == nil || !strings.Contains(err.Error(), "already holds") {
				t.Fatalf("a second key of the same label: %v", err)
			}
		})
	}
}

func samePublic(a, b crypto.PublicKey) bool {
	type eq interface{ Equal(crypto.PublicKey) bool }
	if e, ok := a.(eq); ok {
		return e.Equal(b)
	}
	da, db := a.(*dsa.PublicKey), b.(*dsa.PublicKey)
	return da.Y.Cmp(db.Y) == 0 && da.P.Cmp(db.P) == 0
}

func TestImportEachKind(t *testing.T) {
	tk := tokentest.New(t)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 1024)
	dk := new(dsa.PrivateKey)
	if err := dsa.GenerateParameters(&dk.Parameters, rand.Reader, dsa.L1024N160); err != nil {
		t.Fatal(err)
	}
	dsa.GenerateKey(dk, rand.Reader)
	pubs := map[string]crypto.PublicKey{"ed25519": ed.Public(), "ecdsa": &ec.PublicKey, "rsa": &rk.PublicKey, "dsa": &dk.PublicKey}
	for name, key := range map[string]any{"ed25519": ed, "ecdsa": ec, "rsa": rk, "dsa": dk} {
		t.Run(name, func(t *testing.T) {
			s, err := keyref.Import(tk.URI(tokentest.Unique(name)), key)
			if err != nil {
				t.Fatal(err)
			}
			if !samePublic(pubs[name], s.Public()) {
				t.Fatal("the token's public key is not the imported key's")
			}
			signBoth(t, s)
		})
	}
}

// TestRawRSA is CKM_RSA_X_509: m^d mod n, as ISO 9796-2 needs it.
func TestRawRSA(t *testing.T) {
	tk := tokentest.New(t)
	s, err := keyref.Generate(tk.URI(tokentest.Unique("raw")), "rsa-1024")
	if err != nil {
		t.Fatal(err)
	}
	raw := s.(keyref.RawSigner)
	pub := s.Public().(*rsa.PublicKey)
	m := make([]byte, pub.Size())
	rand.Read(m)
	m[0] = 0x4a // below n
	sig, err := raw.SignRaw(m)
	if err != nil {
		t.Fatal(err)
	}
	back := new(big.Int).Exp(new(big.Int).SetBytes(sig), big.NewInt(int64(pub.E)), pub.N)
	if back.Cmp(new(big.Int).SetBytes(m)) != 0 || len(sig) != pub.Size() {
		t.Fatal("raw RSA through the token is not m^d mod n")
	}
}

func TestOpenRefusals(t *testing.T) {
	tk := tokentest.New(t)
	obj := tokentest.Unique("ed")
	if _, err := keyref.Generate(tk.URI(obj), "ed25519"); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ ref, want string }{
		"missing token":  {strings.Replace(tk.URI(obj), "token="+tk.Label, "token=nonesuch", 1), `no token labelled "nonesuch"`},
		"wrong PIN":      {strings.Replace(tk.URI(obj), "pin-value="+tk.PIN, "pin-value=0000", 1), "another PIN"},
		"missing key":    {tk.URI("nonesuch"), `no private key labelled "nonesuch"`},
		"missing module": {strings.Replace(tk.URI(obj), tokentest.Module, "/nonexistent/libp11.so", 1), "cannot load the PKCS#11 module"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := keyref.Open(c.ref)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "pin-value="+tk.PIN) || strings.Contains(err.Error(), "pin-value=0000") {
				t.Fatalf("the error shows the PIN: %v", err)
			}
		})
	}
}

func TestPINSource(t *testing.T) {
	tk := tokentest.New(t)
	obj := tokentest.Unique("pinsrc")
	if _, err := keyref.Generate(tk.URI(obj), "ed25519"); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "pin")
	os.WriteFile(f, []byte(tk.PIN+"\n"), 0o600)
	ref := "pkcs11:token=" + tk.Label + ";object=" + obj + "?module-path=" + tokentest.Module + "&pin-source=file:" + f
	s, err := keyref.Ed25519(ref)
	if err != nil {
		t.Fatal(err)
	}
	signBoth(t, s)
}

func TestDelete(t *testing.T) {
	tk := tokentest.New(t)
	ref := tk.URI(tokentest.Unique("gone"))
	if _, err := keyref.Generate(ref, "ed25519"); err != nil {
		t.Fatal(err)
	}
	if n, err := keyref.Delete(ref); err != nil || n != 2 {
		t.Fatalf("Delete = %d, %v; want the private and the public object", n, err)
	}
	if _, err := keyref.Open(ref); err == nil {
		t.Fatal("a deleted key still opens")
	}
}

func TestFileKeys(t *testing.T) {
	dir := t.TempDir()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	s, err := keyref.ParsePEM(mustPEM(t, ed))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "k.pem")
	os.WriteFile(p, mustPEM(t, ed), 0o600)
	f, err := keyref.Ed25519(p)
	if err != nil || !samePublic(f.Public(), s.Public()) {
		t.Fatalf("file key: %v", err)
	}
	rk, _ := rsa.GenerateKey(rand.Reader, 1024)
	os.WriteFile(p, mustPEM(t, rk), 0o600)
	if _, err := keyref.Ed25519(p); err == nil || !strings.Contains(err.Error(), "Ed25519 key is needed") {
		t.Fatalf("an RSA file as Ed25519 key: %v", err)
	}
}
