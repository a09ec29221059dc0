package keyref

import (
	"crypto"
	"crypto/dsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"

	"github.com/farebox/farebox/internal/pemkey"
)

// RawSigner is an RSA key that applies its private exponent to a
// message representative m (CKM_RSA_X_509, RSA without padding), as ISO
// 9796-2 signing needs. m has the modulus' length in bytes.
type RawSigner interface {
	crypto.Signer
	SignRaw(m []byte) ([]byte, error)
}

// Open resolves ref: a `pkcs11:` URI opens the token object (Token), any
// other ref is a PEM file read with pemkey (PKCS#8, PKCS#1, SEC 1). The
// errors name ref without its PIN.
func Open(ref string) (crypto.Signer, error) {
	if IsToken(ref) {
		return Token(ref)
	}
	b, err := os.ReadFile(ref)
	if err != nil {
		return nil, err
	}
	return ParsePEM(b)
}

// ParsePEM reads a PEM private key (PKCS#8, PKCS#1 or SEC 1) as a signer.
func ParsePEM(b []byte) (crypto.Signer, error) {
	k, err := pemkey.Parse(b, pemkey.PKCS8, pemkey.PKCS1, pemkey.SEC1)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T cannot sign", k)
	}
	return s, nil
}

// Token opens the key a `pkcs11:` URI names. The token must be present and
// the PIN right: it logs in and finds exactly one private key (and reads
// its public half) before it returns.
func Token(ref string) (crypto.Signer, error) {
	u, err := ParseURI(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact(ref), err)
	}
	s, err := openToken(u)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return s, nil
}

// Ed25519 opens ref as an Ed25519 signer (a token key or a PKCS#8 file).
func Ed25519(ref string) (crypto.Signer, error) {
	s, err := Open(ref)
	if err != nil {
		return nil, err
	}
	if _, ok := s.Public().(ed25519.PublicKey); !ok {
		return nil, fmt.Errorf("%s: an Ed25519 key is needed, this one is %T", Display(ref), s.Public())
	}
	return s, nil
}

// Display is ref as logs and errors may show it: a URI without its PIN, a
// file path as it is.
func Display(ref string) string {
	if IsToken(ref) {
		return redact(ref)
	}
	return ref
}

func redact(ref string) string {
	if u, err := ParseURI(ref); err == nil {
		return u.String()
	}
	return Scheme + "…(unparsable)"
}

// PublicPEM is the PKIX PEM of a signer's public key, as the key ceremony
// exports it to check signatures outside farebox.
func PublicPEM(s crypto.Signer) ([]byte, error) {
	var der []byte
	var err error
	if d, ok := s.Public().(*dsa.PublicKey); ok {
		der, err = marshalDSA(d)
	} else {
		der, err = x509.MarshalPKIXPublicKey(s.Public())
	}
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// oidDSA is id-dsa (RFC 3279).
var oidDSA = asn1.ObjectIdentifier{1, 2, 840, 10040, 4, 1}

// marshalDSA is the PKIX encoding of a DSA public key (RFC 3279 §2.3.2),
// which crypto/x509 parses but does not write.
func marshalDSA(k *dsa.PublicKey) ([]byte, error) {
	params, err := asn1.Marshal(struct{ P, Q, G *big.Int }{k.P, k.Q, k.G})
	if err != nil {
		return nil, err
	}
	y, err := asn1.Marshal(k.Y)
	if err != nil {
		return nil, err
	}
	type algorithm struct {
		Algorithm  asn1.ObjectIdentifier
		Parameters asn1.RawValue
	}
	return asn1.Marshal(struct {
		Algorithm algorithm
		PublicKey asn1.BitString
	}{algorithm{oidDSA, asn1.RawValue{FullBytes: params}}, asn1.BitString{Bytes: y, BitLength: 8 * len(y)}})
}
