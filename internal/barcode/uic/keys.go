package uic

import (
	"crypto"
	"crypto/dsa" //nolint:staticcheck // UIC 918.3 static barcodes are DSA-signed by definition
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
)

// Development issuer: what Issue uses when the operator has not configured
// a UIC company code and key. 9999 is no company's RICS code and key id
// 99999 marks the key as development-only; every barcode it signs is a
// specimen (the FCB test flag and the U_HEAD specimen flag).
const (
	DevRICS  = 9999
	DevKeyID = 99999
)

// Issuer signs UIC 918.3 containers.
type Issuer struct {
	RICS    int // the issuer's RICS company code (the container's and the FCB's)
	KeyID   int // the key id registered with the UIC for Key
	Version int // container version, 1 or 2 (follows Key's size)
	Key     *dsa.PrivateKey
	// Signer is a key held in a hardware token (keyref) instead of Key:
	// it signs the digest, the key never leaves the token.
	Signer      crypto.Signer
	Name        string // issuer name written into the FCB
	Development bool   // a generated development key: its barcodes are specimens
}

// GenerateDevIssuer makes a development issuer with a fresh DSA key for
// container version (1: DSA-1024/160, 2: DSA-2048/224). Generating the
// version 2 domain parameters takes seconds.
func GenerateDevIssuer(version int, rnd io.Reader) (*Issuer, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	sizes := map[int]dsa.ParameterSizes{1: dsa.L1024N160, 2: dsa.L2048N224}
	size, ok := sizes[version]
	if !ok {
		return nil, fmt.Errorf("container version %d: only 1 and 2 exist", version)
	}
	k := new(dsa.PrivateKey)
	if err := dsa.GenerateParameters(&k.Parameters, rnd, size); err != nil {
		return nil, err
	}
	if err := dsa.GenerateKey(k, rnd); err != nil {
		return nil, err
	}
	return &Issuer{RICS: DevRICS, KeyID: DevKeyID, Version: version, Key: k, Name: "farebox development", Development: true}, nil
}

// opensslDSA is OpenSSL's "DSA PRIVATE KEY" structure.
type opensslDSA struct {
	Version       int
	P, Q, G, Y, X *big.Int
}

// MarshalKeyPEM writes k as an OpenSSL "DSA PRIVATE KEY" PEM block
// (`openssl dsa -in key.pem -text` reads it).
func MarshalKeyPEM(k *dsa.PrivateKey) ([]byte, error) {
	der, err := asn1.Marshal(opensslDSA{0, k.P, k.Q, k.G, k.Y, k.X})
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "DSA PRIVATE KEY", Bytes: der}), nil
}

// ParseKeyPEM reads a DSA private key as PEM: OpenSSL's traditional
// "DSA PRIVATE KEY" or PKCS#8 "PRIVATE KEY" (what `openssl gendsa` writes
// since OpenSSL 3), and checks that its public half matches the private one
// and its size fits a container version.
func ParseKeyPEM(b []byte) (*dsa.PrivateKey, int, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || (blk.Type != "DSA PRIVATE KEY" && blk.Type != "PRIVATE KEY") {
		return nil, 0, errors.New("not a PEM \"DSA PRIVATE KEY\" or PKCS#8 \"PRIVATE KEY\" block")
	}
	var o opensslDSA
	if blk.Type == "PRIVATE KEY" {
		var err error
		if o, err = parsePKCS8DSA(blk.Bytes); err != nil {
			return nil, 0, err
		}
	} else if rest, err := asn1.Unmarshal(blk.Bytes, &o); err != nil || len(rest) != 0 || o.Version != 0 {
		return nil, 0, errors.New("malformed DSA private key")
	}
	if o.P == nil || o.Q == nil || o.G == nil || o.X == nil || o.Y == nil ||
		o.P.Sign() <= 0 || o.Q.Sign() <= 0 || o.G.Sign() <= 0 || o.X.Sign() <= 0 || o.X.Cmp(o.Q) >= 0 ||
		new(big.Int).Exp(o.G, o.X, o.P).Cmp(o.Y) != 0 {
		return nil, 0, errors.New("DSA private key is inconsistent (y != g^x mod p)")
	}
	k := &dsa.PrivateKey{PublicKey: dsa.PublicKey{Parameters: dsa.Parameters{P: o.P, Q: o.Q, G: o.G}, Y: o.Y}, X: o.X}
	v, err := versionFor(&k.PublicKey)
	return k, v, err
}

// oidDSA is id-dsa (RFC 3279), the algorithm of a PKCS#8 DSA key.
var oidDSA = asn1.ObjectIdentifier{1, 2, 840, 10040, 4, 1}

// pkcs8 is PKCS#8's (RFC 5208) unencrypted PrivateKeyInfo; attributes and
// RFC 5958's public key, when present, are ignored.
type pkcs8 struct {
	Version    int
	Algorithm  pkix.AlgorithmIdentifier
	PrivateKey []byte
	Rest       []asn1.RawValue `asn1:"optional"`
}

// parsePKCS8DSA reads a PKCS#8 DSA key (Go's x509 parses no DSA private
// key): the domain parameters Dss-Parms {p, q, g} are the algorithm's
// parameters, the private key an INTEGER x inside the OCTET STRING; y is
// computed (g^x mod p), PKCS#8 does not carry it.
func parsePKCS8DSA(der []byte) (opensslDSA, error) {
	var k pkcs8
	if rest, err := asn1.Unmarshal(der, &k); err != nil || len(rest) != 0 {
		return opensslDSA{}, errors.New("malformed PKCS#8 private key")
	}
	if !k.Algorithm.Algorithm.Equal(oidDSA) {
		return opensslDSA{}, fmt.Errorf("the PKCS#8 key is of algorithm %v, UIC 918.3 static barcodes use DSA (%v)", k.Algorithm.Algorithm, oidDSA)
	}
	if k.Version != 0 && k.Version != 1 {
		return opensslDSA{}, fmt.Errorf("PKCS#8 version %d is unknown", k.Version)
	}
	var params struct{ P, Q, G *big.Int }
	if rest, err := asn1.Unmarshal(k.Algorithm.Parameters.FullBytes, &params); err != nil || len(rest) != 0 {
		return opensslDSA{}, errors.New("malformed DSA parameters in the PKCS#8 key")
	}
	x := new(big.Int)
	if rest, err := asn1.Unmarshal(k.PrivateKey, &x); err != nil || len(rest) != 0 {
		return opensslDSA{}, errors.New("malformed DSA private value in the PKCS#8 key")
	}
	o := opensslDSA{P: params.P, Q: params.Q, G: params.G, X: x}
	if o.P != nil && o.P.Sign() > 0 && o.G != nil {
		o.Y = new(big.Int).Exp(o.G, o.X, o.P)
	}
	return o, nil
}

func versionFor(pub *dsa.PublicKey) (int, error) {
	switch {
	case pub.P.BitLen() == 1024 && pub.Q.BitLen() == 160:
		return 1, nil
	case pub.P.BitLen() == 2048 && pub.Q.BitLen() == 224:
		return 2, nil
	}
	return 0, fmt.Errorf("a DSA key of %d/%d bits fits no container version (01: 1024/160, 02: 2048/224)", pub.P.BitLen(), pub.Q.BitLen())
}

// ParsePublicKey reads a UIC-published key: an X.509 certificate or a
// SubjectPublicKeyInfo, DER or PEM, holding a DSA public key.
func ParsePublicKey(b []byte) (*dsa.PublicKey, error) {
	if blk, _ := pem.Decode(b); blk != nil {
		b = blk.Bytes
	}
	var pub any
	if cert, err := x509.ParseCertificate(b); err == nil {
		pub = cert.PublicKey
	} else if pub, err = x509.ParsePKIXPublicKey(b); err != nil {
		return nil, errors.New("neither an X.509 certificate nor a public key")
	}
	k, ok := pub.(*dsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the key is %T, UIC 918.3 static barcodes use DSA", pub)
	}
	if _, err := versionFor(k); err != nil {
		return nil, err
	}
	return k, nil
}

// Trust holds the public keys inspection accepts, by company and key id.
type Trust struct {
	keys map[[2]int]trusted
}

type trusted struct {
	pub *dsa.PublicKey
	dev bool
}

// Add accepts pub for (rics, keyID); dev marks a development key.
func (t *Trust) Add(rics, keyID int, pub *dsa.PublicKey, dev bool) {
	if t.keys == nil {
		t.keys = map[[2]int]trusted{}
	}
	t.keys[[2]int{rics, keyID}] = trusted{pub, dev}
}

// TrustIssuer accepts iss's own key (the issuer's inspection app).
func (t *Trust) TrustIssuer(iss *Issuer) {
	t.Add(iss.RICS, iss.KeyID, iss.PublicKey(), iss.Development)
}

// PublicKey is the issuer's public key.
func (iss *Issuer) PublicKey() *dsa.PublicKey {
	if iss.Signer != nil {
		return iss.Signer.Public().(*dsa.PublicKey)
	}
	return &iss.Key.PublicKey
}

// build signs records with the issuer's key.
func (iss *Issuer) build(records []Record) ([]byte, error) {
	if iss.Signer != nil {
		return BuildWith(iss.Version, iss.RICS, iss.KeyID, iss.Signer, records)
	}
	return Build(iss.Version, iss.RICS, iss.KeyID, iss.Key, records)
}
