package pemkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParse(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(ek)
	sec1, _ := x509.MarshalECPrivateKey(ek)
	block := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	all := []string{PKCS8, PKCS1, SEC1}
	for name, b := range map[string][]byte{"PKCS#8": block(PKCS8, pkcs8), "SEC 1": block(SEC1, sec1)} {
		if k, err := Parse(b, all...); err != nil || !k.(*ecdsa.PrivateKey).Equal(ek) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if k, err := Parse(block(PKCS1, x509.MarshalPKCS1PrivateKey(rk)), all...); err != nil || !k.(*rsa.PrivateKey).Equal(rk) {
		t.Errorf("PKCS#1: %v", err)
	}
	if _, err := Parse([]byte("not PEM"), all...); !errors.Is(err, ErrNoPEM) {
		t.Errorf("no PEM: %v", err)
	}
	var u *UnsupportedError
	if _, err := Parse(block(SEC1, sec1), PKCS8, PKCS1); !errors.As(err, &u) || u.Type != SEC1 || err.Error() != `unsupported PEM block "EC PRIVATE KEY"` {
		t.Errorf("a type not asked for: %v", err)
	}
	if _, err := Parse(block(PKCS8, []byte("garbage")), all...); err == nil || errors.As(err, &u) {
		t.Errorf("a malformed key: %v", err)
	}
}

// TestWriteNew: the first write makes the directory and a 0600 file; a
// second one finds it there, reports false and leaves the first key; no
// temporary file stays beside it.
func TestWriteNew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	path := filepath.Join(dir, "dev.pem")
	if won, err := WriteNew(path, []byte("first")); !won || err != nil {
		t.Fatalf("first write: %v %v", won, err)
	}
	if won, err := WriteNew(path, []byte("second")); won || err != nil {
		t.Fatalf("second write: %v %v", won, err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "first" {
		t.Fatalf("file: %q %v", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", fi.Mode(), err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Fatalf("directory: %v %v", entries, err)
	}
}
