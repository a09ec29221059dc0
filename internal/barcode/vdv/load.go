package vdv

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/pemkey"
)

// DevDir is the development PKI's directory under the key directory; it
// holds root.cvc, ca.cvc, org.cvc and org-key.pem.
const DevDir = "dev"

// ParseKeyPEM reads an RSA private key (PEM "RSA PRIVATE KEY" or PKCS#8
// "PRIVATE KEY").
func ParseKeyPEM(b []byte) (*rsa.PrivateKey, error) {
	k, err := pemkey.Parse(b, pemkey.PKCS1, pemkey.PKCS8)
	if unsupported := (*pemkey.UnsupportedError)(nil); errors.As(err, &unsupported) {
		return nil, fmt.Errorf("PEM block %q: want RSA PRIVATE KEY or PRIVATE KEY", unsupported.Type)
	}
	if err != nil {
		return nil, err
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA key")
	}
	return rk, nil
}

// LoadTrust reads the configured root certificate (7F21 with an unsigned
// 5F4E body, as the VDV publishes its root key) and the CA certificates
// signed by it.
func LoadTrust(t *Trust, rootFile string, caFiles []string, now time.Time) error {
	b, err := os.ReadFile(rootFile)
	if err != nil {
		return fmt.Errorf("VDV root: %w", err)
	}
	if _, err := t.AddRoot(b, false); err != nil {
		return fmt.Errorf("%s: %w", rootFile, err)
	}
	for _, f := range caFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("VDV CA: %w", err)
		}
		if _, err := t.AddCA(b, now); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

// LoadIssuer reads the configured signer "ORG:PRODUCTORG:KEYFILE:CERTFILE":
// the organisation id (KVP), the product organisation id, the 1024-bit
// RSA key (PEM) and the organisation's CV certificate (binary 7F21), which
// must verify under a CA in t.
func LoadIssuer(spec string, t *Trust, now time.Time) (*Issuer, error) {
	parts := strings.SplitN(spec, ":", 3)
	if len(parts) == 3 { // KEYFILE may be a pkcs11: URI, with colons of its own
		i := strings.LastIndex(parts[2], ":")
		if i < 0 {
			parts = parts[:2]
		} else {
			parts = append(parts[:2], parts[2][:i], parts[2][i+1:])
		}
	}
	if len(parts) != 4 {
		return nil, errors.New("vdv issuer: want ORG:PRODUCTORG:KEYFILE:CERTFILE")
	}
	org, err1 := strconv.Atoi(parts[0])
	porg, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("vdv issuer: ORG and PRODUCTORG must be numbers, got %q and %q", parts[0], parts[1])
	}
	if org == DevOrg {
		return nil, fmt.Errorf("vdv issuer: organisation %d is the development issuer's", DevOrg)
	}
	cert, err := os.ReadFile(parts[3])
	if err != nil {
		return nil, fmt.Errorf("vdv issuer: %w", err)
	}
	var iss *Issuer
	if keyref.IsToken(parts[2]) {
		iss, err = tokenIssuer(org, porg, parts[2], cert, t, now)
	} else {
		iss, err = fileIssuer(org, porg, parts[2], cert, t, now)
	}
	if err != nil {
		return nil, fmt.Errorf("vdv issuer %s: %w", parts[3], err)
	}
	if iss.Development {
		return nil, errors.New("vdv issuer: the configured certificate belongs to the development PKI")
	}
	return iss, nil
}

func fileIssuer(org, porg int, file string, cert []byte, t *Trust, now time.Time) (*Issuer, error) {
	kb, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	key, err := ParseKeyPEM(kb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return NewIssuer(org, porg, key, cert, t, now)
}

// tokenIssuer is the issuer whose key is the token object ref; the token
// must sign raw RSA (CKM_RSA_X_509) for ISO 9796-2.
func tokenIssuer(org, porg int, ref string, cert []byte, t *Trust, now time.Time) (*Issuer, error) {
	s, err := keyref.Open(ref)
	if err != nil {
		return nil, fmt.Errorf("key %w", err)
	}
	raw, ok := s.(RawSigner)
	if !ok {
		return nil, fmt.Errorf("key %s: a raw RSA key is needed, this one is %T", keyref.Display(ref), s.Public())
	}
	return NewTokenIssuer(org, porg, raw, cert, t, now)
}

// LoadDevPKI reads the development PKI from dir/dev into t (marked as
// development) and returns its issuer; os.ErrNotExist when there is none.
func LoadDevPKI(dir string, t *Trust, now time.Time) (*Issuer, error) {
	d := filepath.Join(dir, DevDir)
	files := [4][]byte{}
	for i, n := range []string{"root.cvc", "ca.cvc", "org.cvc", "org-key.pem"} {
		b, err := os.ReadFile(filepath.Join(d, n))
		if err != nil {
			return nil, err
		}
		files[i] = b
	}
	root, ca, org, kb := files[0], files[1], files[2], files[3]
	if _, err := t.AddRoot(root, true); err != nil {
		return nil, fmt.Errorf("%s: %w", d, err)
	}
	if _, err := t.AddCA(ca, now); err != nil {
		return nil, fmt.Errorf("%s: %w", d, err)
	}
	key, err := ParseKeyPEM(kb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d, err)
	}
	return NewIssuer(DevOrg, DevOrg, key, org, t, now)
}

// LoadOrCreateDevPKI loads the development PKI from dir, generating it on
// first use (created reports that). Concurrent starters agree on one: the
// files are written to a temporary directory renamed into place.
func LoadOrCreateDevPKI(dir string, t *Trust, now time.Time) (iss *Issuer, created bool, err error) {
	if iss, err := LoadDevPKI(dir, t, now); err == nil || !errors.Is(err, os.ErrNotExist) {
		return iss, false, err
	}
	p, err := GenerateDevPKI(nil, now)
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, err
	}
	tmp, err := os.MkdirTemp(dir, ".dev-*")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(tmp)
	key := pemKey(p.Issuer.Key)
	for name, b := range map[string][]byte{"root.cvc": p.Root, "ca.cvc": p.CA, "org.cvc": p.Issuer.Cert, "org-key.pem": key} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o600); err != nil {
			return nil, false, err
		}
	}
	if err := os.Rename(tmp, filepath.Join(dir, DevDir)); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, DevDir, "org-key.pem")); statErr == nil { // another process won
			iss, err := LoadDevPKI(dir, t, now)
			return iss, false, err
		}
		return nil, false, err
	}
	iss, err = LoadDevPKI(dir, t, now)
	return iss, err == nil, err
}

func pemKey(k *rsa.PrivateKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}
