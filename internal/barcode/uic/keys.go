package uic

import (
	"crypto/dsa" //nolint:staticcheck // UIC 918.3 static barcodes are DSA-signed by definition
	"crypto/rand"
	"crypto/x509"
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
	RICS        int // the issuer's RICS company code (the container's and the FCB's)
	KeyID       int // the key id registered with the UIC for Key
	Version     int // container version, 1 or 2 (follows Key's size)
	Key         *dsa.PrivateKey
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

// ParseKeyPEM reads a "DSA PRIVATE KEY" PEM block and checks that its
// public half matches the private one and its size fits a container version.
func ParseKeyPEM(b []byte) (*dsa.PrivateKey, int, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "DSA PRIVATE KEY" {
		return nil, 0, errors.New("not a PEM \"DSA PRIVATE KEY\" block")
	}
	var o opensslDSA
	if rest, err := asn1.Unmarshal(blk.Bytes, &o); err != nil || len(rest) != 0 || o.Version != 0 {
		return nil, 0, errors.New("malformed DSA private key")
	}
	k := &dsa.PrivateKey{PublicKey: dsa.PublicKey{Parameters: dsa.Parameters{P: o.P, Q: o.Q, G: o.G}, Y: o.Y}, X: o.X}
	if o.P.Sign() <= 0 || o.Q.Sign() <= 0 || o.X.Sign() <= 0 || o.X.Cmp(o.Q) >= 0 ||
		new(big.Int).Exp(o.G, o.X, o.P).Cmp(o.Y) != 0 {
		return nil, 0, errors.New("DSA private key is inconsistent (y != g^x mod p)")
	}
	v, err := versionFor(&k.PublicKey)
	return k, v, err
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
	t.Add(iss.RICS, iss.KeyID, &iss.Key.PublicKey, iss.Development)
}
