package uic

import (
	"crypto/dsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/farebox/farebox/internal/keyref"
	"github.com/farebox/farebox/internal/pemkey"
)

// DevIssuerFile is the development key's file name in its directory.
const DevIssuerFile = "dev-issuer.pem"

// LoadIssuer reads the configured signer "RICS:KEYID:KEYFILE": the
// operator's RICS company code, the key id the UIC registered and the DSA
// private key as PEM ("DSA PRIVATE KEY") or the `pkcs11:` URI of the key
// in a hardware token; its size picks the container version (1024/160:
// 01, 2048/224: 02).
func LoadIssuer(spec, name string) (*Issuer, error) {
	parts := strings.SplitN(spec, ":", 3)
	if len(parts) != 3 {
		return nil, errors.New("uic issuer: want RICS:KEYID:KEYFILE")
	}
	rics, err1 := strconv.Atoi(parts[0])
	kid, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || rics < 1 || rics > 9999 || kid < 0 || kid > 99999 {
		return nil, fmt.Errorf("uic issuer: RICS must be 1..9999 and KEYID 0..99999, got %q and %q", parts[0], parts[1])
	}
	if rics == DevRICS && kid == DevKeyID {
		return nil, errors.New("uic issuer: 9999:99999 is the development issuer's id")
	}
	if keyref.IsToken(parts[2]) {
		return tokenIssuer(rics, kid, parts[2], name)
	}
	b, err := os.ReadFile(parts[2])
	if err != nil {
		return nil, fmt.Errorf("uic issuer: %w", err)
	}
	k, v, err := ParseKeyPEM(b)
	if err != nil {
		return nil, fmt.Errorf("uic issuer %s: %w", parts[2], err)
	}
	return &Issuer{RICS: rics, KeyID: kid, Version: v, Key: k, Name: name}, nil
}

// tokenIssuer is the issuer whose DSA key is the token object ref.
func tokenIssuer(rics, kid int, ref, name string) (*Issuer, error) {
	s, err := keyref.Open(ref)
	if err != nil {
		return nil, fmt.Errorf("uic issuer key %w", err)
	}
	pub, ok := s.Public().(*dsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("uic issuer key %s: a DSA key is needed, this one is %T", keyref.Display(ref), s.Public())
	}
	v := map[int]int{160: 1, 224: 2}[pub.Q.BitLen()]
	if v == 0 {
		return nil, fmt.Errorf("uic issuer key %s: a DSA key with a %d-bit q fits no container version (160: 01, 224: 02)", keyref.Display(ref), pub.Q.BitLen())
	}
	return &Issuer{RICS: rics, KeyID: kid, Version: v, Signer: s, Name: name}, nil
}

// LoadOrCreateDevIssuer reads the development issuer's key from dir,
// generating it (container version 01) on first use. created reports that.
func LoadOrCreateDevIssuer(dir string) (iss *Issuer, created bool, err error) {
	path := filepath.Join(dir, DevIssuerFile)
	if b, err := os.ReadFile(path); err == nil {
		k, v, err := ParseKeyPEM(b)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return &Issuer{RICS: DevRICS, KeyID: DevKeyID, Version: v, Key: k, Name: "farebox development", Development: true}, false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	if iss, err = GenerateDevIssuer(1, nil); err != nil {
		return nil, false, err
	}
	p, err := MarshalKeyPEM(iss.Key)
	if err != nil {
		return nil, false, err
	}
	// A concurrent starter never reads half a key (pemkey.WriteNew).
	if won, err := pemkey.WriteNew(path, p); err != nil {
		return nil, false, err
	} else if !won { // another process won: use its key
		iss, _, err = LoadOrCreateDevIssuer(dir)
		return iss, false, err
	}
	return iss, true, nil
}
